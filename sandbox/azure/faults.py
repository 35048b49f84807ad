"""Faults a test injects into the emulator: throttling (429 + Retry-After), ARM errors and
timeouts (no answer at all), each for the next N requests whose path starts with a prefix
(and, when named, whose method is ``method``: a VM's PUT, not its GET)."""

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
    method: str | None = None
    # a timeout: hold the request this long, then drop the connection without an answer
    hang_seconds: float = 0.0


@dataclass
class Faults:
    _pending: list[Fault] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def throttle(
        self, prefix: str, *, times: int = 1, retry_after: int = 1, method: str | None = None
    ) -> None:
        """The next ``times`` matching requests answer 429 as ARM does when throttling."""
        self.add(
            Fault(
                prefix,
                429,
                "TooManyRequests",
                "The request is being throttled.",
                times,
                retry_after,
                method,
            )
        )

    def fail(
        self,
        prefix: str,
        status: int,
        code: str,
        message: str,
        *,
        times: int = 1,
        method: str | None = None,
    ) -> None:
        self.add(Fault(prefix, status, code, message, times, method=method))

    def timeout(
        self, prefix: str, *, seconds: float, times: int = 1, method: str | None = None
    ) -> None:
        """The next ``times`` matching requests get no answer: held ``seconds`` (longer than
        the client's read timeout), then the connection is dropped."""
        self.add(Fault(prefix, 0, "", "", times, method=method, hang_seconds=seconds))

    def add(self, fault: Fault) -> None:
        with self._lock:
            self._pending.append(fault)

    def take(self, path: str, method: str = "GET") -> Fault | None:
        """The first pending fault for ``path`` (and ``method``), used up by one."""
        with self._lock:
            for fault in self._pending:
                if fault.method is not None and fault.method != method:
                    continue
                if path.lower().startswith(fault.prefix.lower()) and fault.remaining > 0:
                    fault.remaining -= 1
                    return fault
        return None

    def clear(self) -> None:
        with self._lock:
            self._pending.clear()
