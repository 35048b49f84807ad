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

from sandbox.scenarios.stats import percentile, union_length


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
        "answerP50": round(percentile(seconds, 0.5), 2),
        "answerP99": round(percentile(seconds, 0.99), 2),
        "answerMax": round(max(seconds), 2),
        "busySeconds": round(union_length(spans), 1),
    }
