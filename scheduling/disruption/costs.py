"""Disruption cost, as Karpenter orders candidates: what evicting a node's pods costs.

A pod's eviction cost is ``1 + deletion-cost / 2^27 + priority / 2^25`` (the
``controller.kubernetes.io/pod-deletion-cost`` annotation and the pod's priority), clamped to
[-10, 10]; a node's is the sum over the pods that would move, scaled by the fraction of its
lifetime (``expireAfter``) still ahead of it: a node about to expire costs little to disrupt
now, since it will be disrupted anyway.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping
from datetime import datetime

from models.duration import NEVER, parse_duration
from scheduling.pods import Pod

DELETION_COST_ANNOTATION = "controller.kubernetes.io/pod-deletion-cost"


def eviction_cost(pod: Pod, annotations: Mapping[str, str]) -> float:
    cost = 1.0
    raw = annotations.get(DELETION_COST_ANNOTATION)
    if raw is not None:
        # The API server rejects a non-integer value; ignore one anyway, as Karpenter does.
        with contextlib.suppress(ValueError):
            cost += float(raw) / 2**27
    cost += pod.priority / 2**25
    return min(10.0, max(-10.0, cost))


def lifetime_remaining(created: datetime | None, expire_after: str | None, now: datetime) -> float:
    """Fraction of ``expireAfter`` still ahead (1 when the node never expires)."""
    if created is None or expire_after in (None, NEVER):
        return 1.0
    try:
        total = parse_duration(str(expire_after))
    except ValueError:
        return 1.0
    if total <= 0:
        return 0.0
    left = total - (now - created).total_seconds()
    return min(1.0, max(0.0, left / total))


def disruption_cost(
    pods: Iterable[Pod], annotations: Mapping[str, Mapping[str, str]], remaining: float
) -> float:
    return sum(eviction_cost(p, annotations.get(p.key, {})) for p in pods) * remaining
