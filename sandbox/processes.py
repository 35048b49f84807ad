"""Child processes of the sandbox (control plane, Temporal, the worker) and waiting on them.

Each child leads its own process group, so stopping it reaches whatever it forked and
nothing else, and Ctrl-C in the terminal reaches only us. Waits fail at once, with the log
tail, when a watched child dies, instead of running into their timeout.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

EPHEMERAL_RANGE = "/proc/sys/net/ipv4/ip_local_port_range"
LISTEN_FLOOR = 10000  # below it: well-known and registered services


@dataclass
class ChildProcess:
    """A subprocess leading its own process group, logging to a file."""

    name: str
    popen: subprocess.Popen[bytes]
    log_path: Path

    @classmethod
    def spawn(
        cls,
        name: str,
        args: list[str],
        log_path: Path,
        *,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> ChildProcess:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(log_path, "ab") as out:
            popen = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=cwd,
                env=dict(env) if env is not None else None,
                start_new_session=True,  # own process group: stop() reaches it and only it
            )
        return cls(name, popen, log_path)

    def alive(self) -> bool:
        return self.popen.poll() is None

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM this child's process group, SIGKILL after ``timeout``."""
        if self.popen.poll() is not None:
            return  # already reaped: its group id may belong to someone else now
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGTERM)
        try:
            self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, signal.SIGKILL)
            self.popen.wait()


def tree_cpu_seconds(root: int) -> float:
    """User + system CPU of a process and all its live descendants, with what each has
    collected from children it reaped (from /proc). A process tree, not a process group:
    PostgreSQL's backends each call setsid(), so the postmaster's group holds none of the
    work of its connections, and counting by group missed almost all of PostgreSQL's CPU."""
    children: dict[int, list[int]] = {}
    cpu: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # fields after "comm)": state ppid pgrp ... utime(11) stime(12) cutime(13) cstime(14)
        children.setdefault(int(fields[1]), []).append(int(entry))
        cpu[int(entry)] = sum(int(f) for f in fields[11:15])
    total, todo, seen = 0, [root], set()
    while todo:
        pid = todo.pop()
        if pid in seen or pid not in cpu:
            continue
        seen.add(pid)
        total += cpu[pid]
        todo.extend(children.get(pid, []))
    return total / os.sysconf("SC_CLK_TCK")


def wait_for(
    what: str,
    check: Callable[[], bool],
    *,
    timeout: float,
    watch: Sequence[ChildProcess] = (),
    interval: float = 0.2,
) -> None:
    """Until ``check()``; a watched child exiting or the timeout raises, with its log tail."""
    deadline = time.monotonic() + timeout
    while True:
        for proc in watch:
            if not proc.alive():
                raise RuntimeError(
                    f"{proc.name} exited ({proc.popen.returncode}) while waiting for {what}; "
                    f"log {proc.log_path}:\n{proc.log_tail()}"
                )
        if check():
            return
        if time.monotonic() > deadline:
            tails = "".join(f"\n--- {p.name}:\n{p.log_tail(10)}" for p in watch)
            raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}{tails}")
        time.sleep(interval)


def _listen_range() -> tuple[int, int]:
    """Where to pick listening ports: below (or above) the kernel's ephemeral range.

    A port taken from the ephemeral range (``bind(0)``) is free only until the next outgoing
    connection: any client socket on the machine may be given it before our component binds
    it ("Address already in use", seen when several sandboxes start at once). Ports outside
    that range are never handed out implicitly.
    """
    try:
        low, high = map(int, Path(EPHEMERAL_RANGE).read_text().split())
    except (OSError, ValueError):
        low, high = 32768, 60999  # Linux's default
    if low - 1 - LISTEN_FLOOR >= 2000:
        return LISTEN_FLOOR, low - 1
    if 65535 - high >= 2000:
        return high + 1, 65535
    return 0, 0  # no room outside it: let the kernel choose


def free_ports(count: int) -> list[int]:
    """Distinct free loopback ports outside the ephemeral range, chosen at random (so two
    sandboxes starting together rarely pick the same) and held open together so they differ."""
    low, high = _listen_range()
    rng = random.SystemRandom()
    held: list[socket.socket] = []
    try:
        while len(held) < count:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                s.bind(("127.0.0.1", rng.randint(low, high) if high else 0))
            except OSError:
                s.close()
                continue
            held.append(s)
        return [int(s.getsockname()[1]) for s in held]
    finally:
        for s in held:
            s.close()
