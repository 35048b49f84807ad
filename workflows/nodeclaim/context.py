"""What the phase modules see of the running workflow."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Protocol

from workflows.nodeclaim.shape import Shape
from workflows.nodeclaim.state import LifecycleState


class Lifecycle(Protocol):
    name: str
    state: LifecycleState
    # Which path each step takes (local activities or regular ones; workflows/nodeclaim/shape.py).
    shape: Shape
    # The Node the worker's Node watcher saw for this claim ("" until it signals one).
    node_hint: str

    def enter(self, phase: str) -> None: ...

    def end(self, reason: str, message: str = "") -> None: ...

    def anchor(self) -> datetime: ...

    async def wait(self, timeout: timedelta | None) -> None:
        """Until a hint or an ending arrives, or ``timeout`` passes (None: no limit)."""
        ...

    async def checkpoint(self) -> None:
        """Continue as new here when the history has grown large."""
        ...

    def describe(self, details: str) -> None: ...

    def upsert(self, **values: str) -> None: ...
