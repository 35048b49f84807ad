"""Which offering a claim launches into, the same on every cloud: the instance types that
meet the claim's requirements and hold its requests, the capacity type Karpenter would take
(a reservation with room, else spot, else on-demand, as the claim allows), and the offerings
of that type still available in the zones it allows, cheapest first."""

from __future__ import annotations

from collections.abc import Mapping

from models import labels as L
from models.instancetype import InstanceType, Offering
from models.labels import WELL_KNOWN_LABELS
from models.requirements import Requirements
from models.resources import fits


def compatible_types(
    types: list[InstanceType],
    reqs: Requirements,
    requests: Mapping[str, int],
    well_known: frozenset[str] = WELL_KNOWN_LABELS,
) -> list[InstanceType]:
    """Types whose labels meet the requirements and whose allocatable holds the requests.

    The claim's requirements are checked against the type's, as Karpenter's launch filter
    does (``claim.IsCompatible(type)``): a custom key the type does not define (a NodePool
    template label such as ``team``, which the claim carries as a requirement) constrains
    the node's labels, not the instance type, so it does not rule the type out.
    ``well_known`` are the keys of the cloud's own labels (its node class kind's)."""
    out = []
    for it in types:
        if reqs.compatible(it.requirements, well_known) is not None:
            continue
        if not fits(requests, it.allocatable):
            continue
        out.append(it)
    return out


def usable_offerings(
    it: InstanceType, reqs: Requirements, capacity_type: str
) -> tuple[Offering, ...]:
    zone = reqs.get_or_exists(L.ZONE)
    return tuple(
        o
        for o in it.offerings
        if o.available and o.capacity_type == capacity_type and zone.has(o.zone)
    )


def choose_capacity_type(types: list[InstanceType], reqs: Requirements) -> str | None:
    """As Karpenter prioritizes: a reservation with room when allowed; else spot when allowed
    and offered anywhere; else on-demand when allowed; else nothing."""
    allowed = reqs.get_or_exists(L.CAPACITY_TYPE)
    for ct in (L.CAPACITY_TYPE_RESERVED, L.CAPACITY_TYPE_SPOT, L.CAPACITY_TYPE_ON_DEMAND):
        if allowed.has(ct) and any(usable_offerings(it, reqs, ct) for it in types):
            return ct
    return None


def cheapest_offerings(
    types: list[InstanceType], reqs: Requirements, capacity_type: str
) -> list[tuple[InstanceType, Offering]]:
    """Every usable (type, offering) of ``capacity_type``, cheapest first (ties by name and
    zone, so the choice is the same on every try)."""
    pairs = [(it, o) for it in types for o in usable_offerings(it, reqs, capacity_type)]
    pairs.sort(key=lambda p: (p[1].price, p[0].name, p[1].zone))
    return pairs
