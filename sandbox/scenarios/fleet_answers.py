"""How long the EC2 emulator took to answer a burst's CreateFleet calls.

A pod's wait from its NodeClaim to ``Launched`` is Joinery's queue and batching plus the EC2
API's answer; on this machine the answer is the emulator's (moto in the sandbox process,
sharing its CPU with kwok's node simulation), not EC2's. The emulator stamps each CreateFleet
it answers (``Emulation.fleet_calls``); this sums the calls of a burst: how many, for how many
instances, each answer's seconds, and the seconds at least one call was being answered (the
union of their intervals), so a report can tell the emulator's share from Joinery's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


def busy_seconds(intervals: Iterable[tuple[float, float]]) -> float:
    """Length of the union of ``(start, end)`` intervals."""
    total = 0.0
    reach: float | None = None
    for start, end in sorted(intervals):
        if reach is None or start > reach:
            total += end - start
            reach = end
        elif end > reach:
            total += end - reach
            reach = end
    return total


def summarize(calls: Iterable[Mapping[str, Any]], since: float, until: float) -> dict[str, Any]:
    """The answered CreateFleet calls that began in ``[since, until]`` (wall clock)."""
    answered = [c for c in calls if "seconds" in c and since <= float(c.get("began", 0.0)) <= until]
    if not answered:
        return {"calls": 0, "instances": 0}
    seconds = [float(c["seconds"]) for c in answered]
    spans = [(float(c["began"]), float(c["began"]) + float(c["seconds"])) for c in answered]
    return {
        "calls": len(answered),
        "instances": sum(int(c.get("count", 0)) for c in answered),
        "answerP50": round(_percentile(seconds, 0.5), 2),
        "answerP99": round(_percentile(seconds, 0.99), 2),
        "answerMax": round(max(seconds), 2),
        "busySeconds": round(busy_seconds(spans), 1),
    }
