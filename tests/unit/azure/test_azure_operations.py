"""The emulator's long-running operations: they end by polls or by time, whoever polls."""

from __future__ import annotations

from sandbox.azure.operations import FORGET_AFTER_SECONDS, Operations


def test_operations_end_by_time_and_are_forgotten_later() -> None:
    now = [0.0]
    ended: list[str] = []
    ops = Operations(clock=lambda: now[0])
    op = ops.start(polls=100, seconds=5.0, on_done=lambda: ended.append("done"))
    assert ops.status(op) == {"name": op, "status": "InProgress"}
    now[0] = 5.0
    ops.settle()  # nobody polls: Azure ends it anyway
    assert ended == ["done"]
    assert ops.status(op) == {"name": op, "status": "Succeeded"}
    assert ended == ["done"]  # once
    now[0] = 5.0 + FORGET_AFTER_SECONDS + 1
    ops.settle()
    assert ops.status(op) is None
