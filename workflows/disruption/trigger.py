"""Waiting for a reason to run a round: a cluster change (the watchers' signals, debounced:
a round starts once DEBOUNCE passes without a new one, at most DEBOUNCE_MAX after the first),
the moment the last round said a node's time hold ends (``Decision.due``, not sooner than
DUE_FLOOR), or, when nothing changes, the SLOW_TIMER.

One change skips the debounce: the nodes the last round's commands deleted are all gone
(``released``). Their deletions held the pool's budget (Karpenter counts a node being
deleted against it until its instance is terminating), so the next round may act the
moment they are gone, as Karpenter's next poll does; waiting for the signals to settle
first only delays it. The gone nodes are named by the signals themselves (recorded in the
history), so a replay takes the same path; a history recorded before this has no names in
its signals and no ``PACE_PATCH`` marker, and replays with the debounce it waited.

The due time comes from an activity's result (recorded in the history), so the timer a
replay starts is the one the run started: a history recorded before due times existed has
none in its decisions and replays with the slow timer."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from temporalio import workflow

from workflows.disruption.state import DEBOUNCE, DEBOUNCE_MAX, DUE_FLOOR, SLOW_TIMER

# ``workflow.patched`` id of the round that starts without the debounce once the last
# round's deleted nodes are gone.
PACE_PATCH = "disruption-round-when-deleted-nodes-gone"


def quiet_wait(due: str, now: datetime) -> tuple[timedelta, str]:
    """How long to wait with no change, and the timer's summary: until ``due`` (RFC 3339)
    within DUE_FLOOR .. SLOW_TIMER, else the SLOW_TIMER."""
    if not due:
        return SLOW_TIMER, "no cluster change: slow timer"
    left = datetime.fromisoformat(due) - now
    if left >= SLOW_TIMER:
        return SLOW_TIMER, "no cluster change: slow timer"
    return max(DUE_FLOOR, left), "no cluster change: a node's time hold ends"


async def wait(
    changes: Callable[[], int],
    changed: Callable[[], bool],
    due: str = "",
    released: Callable[[], bool] = lambda: False,
) -> None:
    """Return when a round should run. ``changes`` counts signals; ``changed`` says whether
    one arrived since the last round; ``due`` is when the last round said one is due;
    ``released`` whether the nodes the last commands deleted are gone since the last round
    (a signal says so, so it counts as a change too)."""
    timeout, summary = quiet_wait(due, workflow.now())
    try:
        await workflow.wait_condition(changed, timeout=timeout, timeout_summary=summary)
    except TimeoutError:
        return
    first = workflow.now()
    while True:
        if released() and workflow.patched(PACE_PATCH):
            return
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
