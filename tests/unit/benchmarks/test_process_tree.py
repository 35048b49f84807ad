"""A benchmark run that times out leaves nothing behind: ``joinery dev`` starts each part in
a session of its own, which signalling its process group never reaches."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from benchmarks import process_tree

# Starts a grandchild in its own session that ignores SIGTERM (a stuck part of the stack),
# prints its pid, then hangs.
STUCK = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"
STACK = f"""
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", {STUCK!r}], start_new_session=True)
print(child.pid, flush=True)
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_timed_out_run_and_the_parts_it_started_are_stopped(tmp_path: Path) -> None:
    began = time.monotonic()
    stdout, _stderr, code, killed = process_tree.run(
        [sys.executable, "-c", STACK], timeout=8, cwd=tmp_path, env=dict(os.environ)
    )
    assert code == -1 and killed >= 1
    grandchild = int(stdout.split()[0])
    deadline = time.monotonic() + 10
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(grandchild)
    assert time.monotonic() - began < 8 + process_tree.GRACE + 10


def test_a_finished_run_gives_its_output_and_exit_code(tmp_path: Path) -> None:
    stdout, stderr, code, killed = process_tree.run(
        [
            sys.executable,
            "-c",
            "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)",
        ],
        timeout=30,
        cwd=tmp_path,
        env=dict(os.environ),
    )
    assert (stdout, stderr, code, killed) == ("out\n", "err\n", 3, 0)
