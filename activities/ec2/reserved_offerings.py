"""``karpenter.sh/capacity-type: reserved`` offerings for a NodeClass's capacity reservations.

As Karpenter's reserved-capacity resolver: one offering per reservation of the type, in the
reservation's zone, priced at the type's on-demand price divided by ten million, so a
reservation is all but free (the instances are paid for already) and always preferred, while
reservations of dearer types still rank above cheaper ones for consolidation. It is
available while the reservation has free places, is not an expiring capacity block, and its
zone has one of the NodeClass's subnets.
"""

from __future__ import annotations

from collections.abc import Iterable

from activities.ec2.capacity_reservations import (
    EXPIRING,
    CapacityReservation,
    ReservationAvailability,
)
from models import labels as L
from models.instancetype import InstanceType, Offering

RESERVED_PRICE_DIVISOR = 10_000_000.0


def reserved_price(on_demand: float) -> float:
    return on_demand / RESERVED_PRICE_DIVISOR


def with_reserved_offerings(
    types: list[InstanceType],
    reservations: Iterable[CapacityReservation],
    availability: ReservationAvailability,
    subnet_zones: Iterable[str] | None,
) -> list[InstanceType]:
    """``types`` with a reserved offering added per matching reservation (new objects for
    the types that get one; the others are returned as they are)."""
    by_type: dict[str, list[CapacityReservation]] = {}
    for r in reservations:
        by_type.setdefault(r.instance_type, []).append(r)
    if not by_type:
        return types
    zones = set(subnet_zones) if subnet_zones is not None else None
    out: list[InstanceType] = []
    for it in types:
        mine = by_type.get(it.name)
        if not mine:
            out.append(it)
            continue
        od = [o.price for o in it.offerings if o.capacity_type == L.CAPACITY_TYPE_ON_DEMAND]
        price = reserved_price(min(od)) if od else 0.0
        added = [
            Offering(
                r.zone,
                L.CAPACITY_TYPE_RESERVED,
                price,
                available=availability.count(r.id) > 0
                and r.state != EXPIRING
                and (zones is None or r.zone in zones),
                reservation_id=r.id,
                reservation_capacity=availability.count(r.id),
            )
            for r in mine
        ]
        offers = (*it.offerings, *added)
        base = [it.requirements[k] for k in it.requirements if k not in (L.ZONE, L.CAPACITY_TYPE)]
        rebuilt = InstanceType.build(it.name, it.capacity, offers, it.overhead, base)
        out.append(rebuilt)
    return out


def reservation_labels(reservation: CapacityReservation) -> dict[str, str]:
    """The labels Karpenter puts on a node launched into the reservation."""
    return {
        L.CAPACITY_RESERVATION_ID: reservation.id,
        L.CAPACITY_RESERVATION_TYPE: reservation.reservation_type,
        L.CAPACITY_RESERVATION_INTERRUPTIBLE: "true" if reservation.interruptible else "false",
    }
