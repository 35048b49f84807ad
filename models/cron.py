"""Budget schedules: five-field cron expressions (UTC) and robfig/cron's descriptors, as
Karpenter's NodePool ``disruption.budgets[].schedule`` accepts them."""

from __future__ import annotations

from datetime import datetime

# croniter (and dateutil under it) is imported where a schedule is first read: most NodePools
# have no budget schedule, and `joinery plan` should not pay for the import at start-up.

_DESCRIPTORS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}


def _expression(schedule: str) -> str:
    expr = schedule.strip()
    return _DESCRIPTORS.get(expr, expr)


def schedule_error(schedule: str) -> str | None:
    """Why ``schedule`` is not a usable cron schedule, or None when it is."""
    expr = schedule.strip()
    if expr.startswith("@"):
        return None if expr in _DESCRIPTORS else f"{expr!r} is not a known descriptor"
    if len(expr.split()) == 5:
        from croniter import croniter

        if croniter.is_valid(expr):
            return None
    return f"{expr!r} is not a valid five-field cron expression"


def next_hit(schedule: str, after: datetime) -> datetime:
    """The schedule's first hit strictly after ``after`` (which carries its time zone)."""
    from croniter import croniter

    hit: datetime = croniter(_expression(schedule), after).get_next(datetime)
    return hit
