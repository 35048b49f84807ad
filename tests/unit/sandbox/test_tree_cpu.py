"""``tree_cpu_seconds`` counts a child that left its parent's process group (as every
PostgreSQL backend does) and a child that already exited and was reaped."""

from __future__ import annotations

import subprocess
import sys
import time

from sandbox.processes import tree_cpu_seconds

# A parent that starts a busy child in a session of its own, waits for a first busy child
# that it reaps, then sleeps while the second keeps spinning.
PARENT = """
import os, subprocess, sys, time
spin = "import time\\nend = time.process_time() + {burn}\\nwhile time.process_time() < end: pass\\n"
subprocess.run([sys.executable, "-c", spin])  # reaped: lands in this process's cutime
subprocess.Popen([sys.executable, "-c", spin + "time.sleep(30)"], start_new_session=True)
print("ready", flush=True)
time.sleep(30)
"""


def test_counts_children_in_other_sessions_and_reaped_ones() -> None:
    burn = 0.6
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT.format(burn=burn)],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert parent.stdout is not None
        assert parent.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + 20
        seen = 0.0
        while time.monotonic() < deadline:
            seen = tree_cpu_seconds(parent.pid)
            if seen >= 2 * burn * 0.9:
                break
            time.sleep(0.2)
        # both busy children's CPU: the reaped one's and the live one's in its own session
        assert seen >= 2 * burn * 0.9, seen
    finally:
        subprocess.run(["pkill", "-KILL", "-P", str(parent.pid)], check=False)
        parent.kill()
        parent.wait()
