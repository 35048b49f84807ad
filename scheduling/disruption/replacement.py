"""What may replace nodes under consolidation: only instance types strictly cheaper than the
nodes they replace together, so whichever type launches, the command saves.

As Karpenter does: a replacement that may be on-demand or spot is pinned to spot (its types
were judged by their spot price, and an on-demand fallback could cost more than the nodes it
replaces); when every replaced node is spot, a single-node replacement needs at least
``SPOT_TO_SPOT_MIN_TYPES`` cheaper types and launches from the cheapest of them, so it does
not chase the single cheapest pool into interruptions; a multi-node replacement never lists
a type of one of its nodes at that node's price or above (it would be a delete in disguise).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from models import labels as L
from models.instancetype import InstanceType
from models.requirements import Requirement, Requirements
from scheduling.disruption.types import ManagedNode
from scheduling.solver import PlannedClaim

SPOT = L.CAPACITY_TYPE_SPOT
ON_DEMAND = L.CAPACITY_TYPE_ON_DEMAND
SPOT_TO_SPOT_MIN_TYPES = 15


def _price(it: InstanceType, zones: set[str], cts: set[str]) -> float | None:
    prices = [
        o.price for o in it.offerings if o.available and o.zone in zones and o.capacity_type in cts
    ]
    return min(prices) if prices else None


def cheaper_replacement(claim: PlannedClaim, nodes: Sequence[ManagedNode]) -> PlannedClaim | str:
    """``claim`` narrowed to the types strictly cheaper than ``nodes`` together, or why
    there is none."""
    total = sum(n.price or 0.0 for n in nodes)
    cts = set(claim.capacity_types)
    if SPOT in cts and ON_DEMAND in cts:
        cts = {SPOT}
    zones = set(claim.zones)
    priced: list[tuple[float, str, InstanceType]] = []
    for it in claim.instance_types:
        p = _price(it, zones, cts)
        if p is not None and p < total - 1e-9:
            priced.append((p, it.name, it))
    if len(nodes) > 1:
        same = {n.instance_type: n.price or 0.0 for n in nodes}
        priced = [x for x in priced if x[1] not in same or x[0] < same[x[1]] - 1e-9]
    if not priced:
        cheapest = claim.price
        return (
            f"the cheapest replacement that holds its pods costs ${cheapest:.4f}/h, "
            f"not less than ${total:.4f}/h"
        )
    priced.sort(key=lambda x: (x[0], x[1]))
    if cts == {SPOT} and all(n.capacity_type == SPOT for n in nodes) and len(nodes) == 1:
        if len(priced) < SPOT_TO_SPOT_MIN_TYPES:
            return (
                f"spot-to-spot replacement needs {SPOT_TO_SPOT_MIN_TYPES} cheaper spot types, "
                f"only {len(priced)} are"
            )
        priced = priced[:SPOT_TO_SPOT_MIN_TYPES]
    types = [it for _, _, it in priced]
    offered = [
        o
        for it in types
        for o in it.offerings
        if o.available and o.zone in zones and o.capacity_type in cts
    ]
    new_zones = sorted({o.zone for o in offered})
    new_cts = sorted({o.capacity_type for o in offered})
    reqs = Requirements(claim.requirements.values()).with_requirements(
        [
            Requirement(L.INSTANCE_TYPE, False, frozenset(it.name for it in types)),
            Requirement(L.ZONE, False, frozenset(new_zones)),
            Requirement(L.CAPACITY_TYPE, False, frozenset(new_cts)),
        ]
    )
    return replace(
        claim,
        instance_types=types,
        requirements=reqs,
        zones=new_zones,
        capacity_types=new_cts,
        price=priced[0][0],
    )
