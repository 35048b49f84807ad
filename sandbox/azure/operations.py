"""Long-running operations as ARM runs them: a request answers 201/202 with an
``Azure-AsyncOperation`` URL, polled until its status is Succeeded (or Failed).

Nothing in part 1 starts one; launching VMs (part 2) will, through :meth:`start`.
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Operation:
    id: str
    polls_left: int  # InProgress answers before the final one
    error: dict[str, str] | None = None  # {"code", "message"} makes it end Failed


@dataclass
class Operations:
    _ops: dict[str, Operation] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self, *, polls: int = 1, error: dict[str, str] | None = None) -> str:
        """A new operation id; its status URL is ``.../operations/{id}``."""
        op = Operation(uuid.uuid4().hex, polls, error)
        with self._lock:
            self._ops[op.id] = op
        return op.id

    def status(self, op_id: str) -> dict[str, Any] | None:
        """The body a poll of the operation gets, or None for an unknown id."""
        with self._lock:
            op = self._ops.get(op_id)
            if op is None:
                return None
            if op.polls_left > 0:
                op.polls_left -= 1
                return {"name": op.id, "status": "InProgress"}
        if op.error is not None:
            return {"name": op.id, "status": "Failed", "error": dict(op.error)}
        return {"name": op.id, "status": "Succeeded"}
