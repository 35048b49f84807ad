"""Waiting for a reason to run a round: a cluster change (the watchers' signals, debounced:
a round starts once DEBOUNCE passes without a new one, at most DEBOUNCE_MAX after the first)
or, when nothing changes, the SLOW_TIMER."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from temporalio import workflow

from workflows.disruption.state import DEBOUNCE, DEBOUNCE_MAX, SLOW_TIMER


async def wait(changes: Callable[[], int], changed: Callable[[], bool]) -> None:
    """Return when a round should run. ``changes`` counts signals; ``changed`` says whether
    one arrived since the last round."""
    try:
        await workflow.wait_condition(
            changed, timeout=SLOW_TIMER, timeout_summary="no cluster change: slow timer"
        )
    except TimeoutError:
        return
    first = workflow.now()
    while True:
        seen = changes()
        left = first + DEBOUNCE_MAX - workflow.now()
        if left <= timedelta(0):
            return
        try:
            await workflow.wait_condition(
                lambda s=seen: changes() != s,  # type: ignore[misc]
                timeout=min(DEBOUNCE, left),
                timeout_summary="debounce",
            )
        except TimeoutError:
            return
