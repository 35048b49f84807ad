"""Capacity reservations hold only so many claims: the planned claims share them out.

A reserved offering is all but free, so the solver sizes claims on it whenever a pool allows
``karpenter.sh/capacity-type: reserved``; but a reservation has a number of free places
(``Offering.reservation_capacity``). As Karpenter's reservation manager does, claims take
places in order: a claim that can use a reserved offering with a place left takes one place
in each such reservation (pessimistically: whichever it launches into) and is pinned to
``reserved``; a claim that finds no place left drops ``reserved`` and is priced on what else
its pool allows (Karpenter's default fallback mode). A claim whose pool allows nothing but
``reserved`` keeps it: its launch will find the reservation full and it is planned again.
"""

from __future__ import annotations

from dataclasses import replace

from models import labels as L
from models.instancetype import InstanceType, Offering
from models.requirements import Requirement
from scheduling.solving.result import PlannedClaim

RESERVED = L.CAPACITY_TYPE_RESERVED


def share_reservations(claims: list[PlannedClaim]) -> list[PlannedClaim]:
    if not any(RESERVED in c.capacity_types for c in claims):
        return claims
    left: dict[str, int] = {}
    out: list[PlannedClaim] = []
    for c in claims:
        if RESERVED not in c.capacity_types:
            out.append(c)
            continue
        pairs = _reserved_pairs(c)
        for _, o in pairs:
            left.setdefault(o.reservation_id, o.reservation_capacity)
        with_room = [(it, o) for it, o in pairs if left[o.reservation_id] > 0]
        if with_room:
            for rid in {o.reservation_id for _, o in with_room}:
                left[rid] -= 1
            out.append(_pinned(c, with_room))
        else:
            out.append(_without_reserved(c))
    return out


def _reserved_pairs(c: PlannedClaim) -> list[tuple[InstanceType, Offering]]:
    """The claim's types with their available reserved offerings in the claim's zones."""
    zones = set(c.zones)
    return [
        (it, o)
        for it in c.instance_types
        for o in it.offerings
        if o.capacity_type == RESERVED and o.available and o.zone in zones
    ]


def _pinned(c: PlannedClaim, held: list[tuple[InstanceType, Offering]]) -> PlannedClaim:
    """The claim narrowed to the types and zones of the reservations it holds a place in."""
    names = {it.name for it, _ in held}
    zones = sorted({o.zone for _, o in held})
    types = [it for it in c.instance_types if it.name in names]
    reqs = c.requirements.with_requirements(
        [
            Requirement(L.CAPACITY_TYPE, False, frozenset({RESERVED})),
            Requirement(L.ZONE, False, frozenset(zones)),
            Requirement(L.INSTANCE_TYPE, False, frozenset(names)),
        ]
    )
    price = min(o.price for _, o in held)
    return replace(
        c,
        instance_types=types,
        requirements=reqs,
        zones=zones,
        capacity_types=[RESERVED],
        price=price,
    )


def _without_reserved(c: PlannedClaim) -> PlannedClaim:
    """The claim on what else its pool allows, priced afresh; as it was if nothing else."""
    rest = [ct for ct in c.capacity_types if ct != RESERVED]
    if not rest:
        return c
    reqs = c.requirements.with_requirements([Requirement(L.CAPACITY_TYPE, False, frozenset(rest))])
    priced: dict[InstanceType, float] = {}
    for it in c.instance_types:
        best = it.cheapest_offering(reqs)
        if best is not None:
            priced[it] = best.price
    if not priced:
        return c
    types = sorted(priced, key=lambda it: (priced[it], it.name))
    zones = sorted(
        {
            o.zone
            for it in types
            for o in it.offerings
            if o.available and o.capacity_type in rest and o.zone in c.zones
        }
    )
    reqs = reqs.with_requirements(
        [Requirement(L.INSTANCE_TYPE, False, frozenset(it.name for it in types))]
    )
    return replace(
        c,
        instance_types=types,
        requirements=reqs,
        zones=zones,
        capacity_types=rest,
        price=min(priced.values()),
    )
