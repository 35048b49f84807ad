"""Faults a test injects into the emulator: throttling (429 + Retry-After) and ARM errors,
each for the next N requests whose path starts with a prefix."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field


@dataclass
class Fault:
    prefix: str
    status: int
    code: str
    message: str
    remaining: int
    retry_after: int | None = None


@dataclass
class Faults:
    _pending: list[Fault] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def throttle(self, prefix: str, *, times: int = 1, retry_after: int = 1) -> None:
        """The next ``times`` matching requests answer 429 as ARM does when throttling."""
        self.add(
            Fault(
                prefix,
                429,
                "TooManyRequests",
                "The request is being throttled.",
                times,
                retry_after,
            )
        )

    def fail(self, prefix: str, status: int, code: str, message: str, *, times: int = 1) -> None:
        self.add(Fault(prefix, status, code, message, times))

    def add(self, fault: Fault) -> None:
        with self._lock:
            self._pending.append(fault)

    def take(self, path: str) -> Fault | None:
        """The first pending fault for ``path``, used up by one."""
        with self._lock:
            for fault in self._pending:
                if path.startswith(fault.prefix) and fault.remaining > 0:
                    fault.remaining -= 1
                    return fault
        return None

    def clear(self) -> None:
        with self._lock:
            self._pending.clear()
