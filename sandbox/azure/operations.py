"""Long-running operations as ARM runs them: a request answers 201/202 with an
``Azure-AsyncOperation`` URL, polled until its status is Succeeded (or Failed).

An operation ends after its polls, or once ``seconds`` have passed whether anyone polls or
not: Azure carries on creating a VM when its caller dies, and the emulator must too (a worker
killed mid-create finds the VM made when it comes back). What the operation does to the
emulated resources when it ends (a VM's provisioning state, a deletion) is its ``on_done``,
run once, by the first poll or read (:meth:`Operations.settle`) that finds it over.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Operation:
    id: str
    polls_left: int  # InProgress answers before the final one
    error: dict[str, str] | None = None  # {"code", "message"} makes it end Failed
    deadline: float | None = None  # monotonic time it ends by, polled or not
    on_done: Callable[[], None] | None = None
    done: bool = False
    done_at: float = 0.0


# An ended operation is forgotten this long after it ended (its poller has long stopped):
# a long sandbox run starts thousands.
FORGET_AFTER_SECONDS = 300.0


@dataclass
class Operations:
    clock: Callable[[], float] = time.monotonic
    _ops: dict[str, Operation] = field(default_factory=dict)
    _lock: threading.RLock = field(default_factory=threading.RLock)

    def start(
        self,
        *,
        polls: int = 1,
        error: dict[str, str] | None = None,
        seconds: float | None = None,
        on_done: Callable[[], None] | None = None,
    ) -> str:
        """A new operation id; its status URL is ``.../operations/{id}``."""
        deadline = None if seconds is None else self.clock() + seconds
        op = Operation(uuid.uuid4().hex, polls, error, deadline, on_done)
        with self._lock:
            self._ops[op.id] = op
        return op.id

    def _finish(self, op: Operation) -> None:
        if op.done:
            return
        op.done = True
        op.done_at = self.clock()
        if op.on_done is not None:
            op.on_done()

    def settle(self) -> None:
        """End every operation whose time is up (a read of a resource calls this first)."""
        now = self.clock()
        with self._lock:
            for op in list(self._ops.values()):
                if not op.done and op.deadline is not None and now >= op.deadline:
                    self._finish(op)
                elif op.done and now - op.done_at > FORGET_AFTER_SECONDS:
                    del self._ops[op.id]

    def status(self, op_id: str) -> dict[str, Any] | None:
        """The body a poll of the operation gets, or None for an unknown id."""
        with self._lock:
            op = self._ops.get(op_id)
            if op is None:
                return None
            timed_out = op.deadline is not None and self.clock() >= op.deadline
            if not op.done and op.polls_left > 0 and not timed_out:
                op.polls_left -= 1
                return {"name": op.id, "status": "InProgress"}
            self._finish(op)
        if op.error is not None:
            return {"name": op.id, "status": "Failed", "error": dict(op.error)}
        return {"name": op.id, "status": "Succeeded"}


def async_headers(
    base_url: str, sub: str, namespace: str, location: str, op_id: str, retry_after: int
) -> dict[str, str]:
    """What a 201/202 answer carries for the SDK's poller: where to poll and, when
    ``retry_after`` is positive, how long to wait first (without it the client's
    ``polling_interval`` is used: the SDK reads ``Retry-After: 0`` as "not given", 30 s)."""
    url = (
        f"{base_url}/subscriptions/{sub}/providers/{namespace}/locations/{location}"
        f"/operations/{op_id}?api-version=2024-07-01"
    )
    headers = {"Azure-AsyncOperation": url}
    if retry_after > 0:
        headers["Retry-After"] = str(retry_after)
    return headers
