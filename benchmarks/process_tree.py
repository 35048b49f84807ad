"""Running ``joinery dev`` from a benchmark without leaving its stack behind.

``joinery dev`` starts every part (Temporal, etcd, kube-apiserver, kwok, the worker, ...) in
a process group of its own, so that it can stop each one alone; signalling ``joinery dev``'s
group therefore does not reach them, and a benchmark that gave up on a run (its timeout) or
was itself stopped left a whole stack running on the shared machine. Here the benchmark:

- notes every descendant of the run (pid and start time, so a reused pid is never hit) while
  the run is alive, since an orphan's parent link is lost once ``joinery dev`` exits;
- asks ``joinery dev`` to stop (SIGTERM: it stops its stack in order), waits ``GRACE``,
  then SIGKILLs the process group of every noted descendant still alive;
- does so on a timeout, on any exception, and when the benchmark gets SIGTERM or SIGHUP
  (turned into ``SystemExit`` so ``finally`` runs). Only a SIGKILL of the benchmark itself
  escapes this; ``joinery dev`` then stops its stack when it notices (atexit).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import FrameType

GRACE = 60.0
# How often the descendants are noted while a run goes on.
NOTE_EVERY = 5.0


def _stat(pid: int) -> tuple[int, str] | None:
    """(parent pid, start time) of a live process, None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return int(fields[1]), fields[19]


def descendants(root: int) -> dict[int, str]:
    """Every live descendant of ``root``: pid -> start time."""
    parents: dict[int, list[int]] = {}
    starts: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        stat = _stat(int(entry))
        if stat is not None:
            parents.setdefault(stat[0], []).append(int(entry))
            starts[int(entry)] = stat[1]
    out: dict[int, str] = {}
    todo = list(parents.get(root, []))
    while todo:
        pid = todo.pop()
        if pid in out or pid not in starts:
            continue
        out[pid] = starts[pid]
        todo.extend(parents.get(pid, []))
    return out


def kill_noted(noted: Mapping[int, str]) -> int:
    """SIGKILL the process group of each noted process that still runs (same start time);
    returns how many were found alive."""
    own = os.getpgrp()
    alive = 0
    for pid, started in noted.items():
        stat = _stat(pid)
        if stat is None or stat[1] != started:
            continue
        alive += 1
        with contextlib.suppress(ProcessLookupError, PermissionError):
            group = os.getpgid(pid)
            if group != own:
                os.killpg(group, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
    return alive


def stop(popen: subprocess.Popen[str], noted: dict[int, str], grace: float = GRACE) -> int:
    """Stop a run and everything it started; returns how many processes had to be killed."""
    if popen.poll() is None:
        noted.update(descendants(popen.pid))
        with contextlib.suppress(ProcessLookupError):
            popen.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            popen.wait(grace)
    killed = kill_noted(noted)
    if popen.poll() is None:
        popen.kill()
    return killed


@contextlib.contextmanager
def exit_on_termination() -> Iterator[None]:
    """SIGTERM and SIGHUP raise ``SystemExit`` here, so cleanup in ``finally`` runs."""

    def leave(signum: int, _frame: FrameType | None) -> None:
        raise SystemExit(128 + signum)

    before = {s: signal.signal(s, leave) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


def run(
    command: list[str], *, timeout: float, cwd: Path, env: Mapping[str, str]
) -> tuple[str, str, int, int]:
    """Run ``command`` to its end or ``timeout``; (stdout, stderr, exit code or -1 on
    timeout, processes left that had to be killed)."""
    noted: dict[int, str] = {}
    popen = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env=dict(env),
        start_new_session=True,
    )
    deadline = time.monotonic() + timeout
    out: list[str] = []
    err: list[str] = []
    code = -1
    killed = 0
    with exit_on_termination():
        try:
            while True:
                try:
                    stdout, stderr = popen.communicate(
                        timeout=max(0.1, min(NOTE_EVERY, deadline - time.monotonic()))
                    )
                    out.append(stdout)
                    err.append(stderr)
                    code = popen.returncode
                    break
                except subprocess.TimeoutExpired:
                    noted.update(descendants(popen.pid))
                    if time.monotonic() >= deadline:
                        break
        finally:
            killed = stop(popen, noted)
            if code == -1:
                with contextlib.suppress(subprocess.TimeoutExpired, ValueError):
                    stdout, stderr = popen.communicate(timeout=10)
                    out.append(stdout or "")
                    err.append(stderr or "")
    return "".join(out), "".join(err), code, killed
