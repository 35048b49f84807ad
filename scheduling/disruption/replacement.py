"""What may replace nodes under consolidation: only instance types strictly cheaper than the
nodes they replace together, so whichever type launches, the command saves.

As Karpenter does: a replacement that may be on-demand or spot is pinned to spot (its types
were judged by their spot price, and an on-demand fallback could cost more than the nodes it
replaces); spot nodes are replaced by a claim that may be spot only under the
SpotToSpotConsolidation feature gate (off by default); with it, a single-node replacement
needs at least ``SPOT_TO_SPOT_MIN_TYPES`` cheaper types and launches from the cheapest of
them (or as many as its minValues need), so it does not chase the single cheapest pool into
interruptions; the types left by price must still give the claim's minValues; a multi-node
replacement never lists a type of one of its nodes at that node's price or above (it would be
a delete in disguise).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from models import labels as L
from models.instancetype import InstanceType
from models.requirements import Requirement, Requirements
from scheduling.disruption.types import ManagedNode
from scheduling.solver import PlannedClaim
from scheduling.targets import min_values_shortfall

SPOT = L.CAPACITY_TYPE_SPOT
ON_DEMAND = L.CAPACITY_TYPE_ON_DEMAND
SPOT_TO_SPOT_MIN_TYPES = 15


def _price(it: InstanceType, zones: set[str], cts: set[str]) -> float | None:
    prices = [
        o.price for o in it.offerings if o.available and o.zone in zones and o.capacity_type in cts
    ]
    return min(prices) if prices else None


def cheaper_replacement(
    claim: PlannedClaim, nodes: Sequence[ManagedNode], spot_to_spot: bool = False
) -> PlannedClaim | str:
    """``claim`` narrowed to the types strictly cheaper than ``nodes`` together, or why
    there is none. ``spot_to_spot`` is Karpenter's SpotToSpotConsolidation gate: off, spot
    nodes may be deleted but never replaced by a claim that may launch spot."""
    total = sum(n.price or 0.0 for n in nodes)
    cts = set(claim.capacity_types)
    all_spot = all(n.capacity_type == SPOT for n in nodes)
    if all_spot and SPOT in cts and not spot_to_spot:
        return "SpotToSpotConsolidation is disabled: a spot node is not replaced by a spot node"
    pinned = SPOT in cts and ON_DEMAND in cts
    if pinned:
        cts = {SPOT}
    zones = set(claim.zones)
    priced: list[tuple[float, str, InstanceType]] = []
    for it in claim.instance_types:
        p = _price(it, zones, cts)
        if p is not None and p < total - 1e-9:
            priced.append((p, it.name, it))
    if len(nodes) > 1 and priced:
        same = {n.instance_type: n.price or 0.0 for n in nodes}
        kept = [x for x in priced if x[1] not in same or x[0] < same[x[1]] - 1e-9]
        if not kept:
            # Cheaper than the nodes together, yet no cheaper than one of them of its type:
            # saying "not less than" the total would not be true.
            p, name, _ = min(priced, key=lambda x: (x[0], x[1]))
            return (
                f"the cheapest replacement that holds its pods is a {name} at ${p:.4f}/h, no "
                f"cheaper than its own {name} node at ${same[name]:.4f}/h: keeping that node "
                "and deleting the others would do"
            )
        priced = kept
    if not priced and pinned:
        return (
            f"a replacement its pool may launch as spot or on-demand is launched as spot, and "
            f"no spot offering that holds its pods costs less than ${total:.4f}/h (the "
            f"cheapest of any capacity type: ${claim.price:.4f}/h)"
        )
    if not priced:
        cheapest = claim.price
        return (
            f"the cheapest replacement that holds its pods costs ${cheapest:.4f}/h, "
            f"not less than ${total:.4f}/h"
        )
    priced.sort(key=lambda x: (x[0], x[1]))
    wanted = {k: r.min_values for k, r in claim.requirements.items() if r.min_values}
    if wanted:
        # Karpenter re-checks the claim's minValues once the price has narrowed its types.
        short = min_values_shortfall([it for _, _, it in priced], claim.requirements, wanted)
        if short is not None:
            return f"filtering by price: {short}"
    if cts == {SPOT} and all_spot and len(nodes) == 1:
        if len(priced) < SPOT_TO_SPOT_MIN_TYPES:
            return (
                f"spot-to-spot replacement needs {SPOT_TO_SPOT_MIN_TYPES} cheaper spot types, "
                f"only {len(priced)} are"
            )
        keep = SPOT_TO_SPOT_MIN_TYPES
        if wanted:  # as many as minValues needs, if more than 15
            keep = max(keep, _prefix_for_min_values(priced, claim.requirements, wanted))
        priced = priced[:keep]
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


def _prefix_for_min_values(
    priced: Sequence[tuple[float, str, InstanceType]],
    reqs: Requirements,
    wanted: dict[str, int],
) -> int:
    """How many of the cheapest types it takes to give every minValues (all when none do)."""
    for n in range(1, len(priced) + 1):
        if min_values_shortfall([it for _, _, it in priced[:n]], reqs, wanted) is None:
            return n
    return len(priced)
