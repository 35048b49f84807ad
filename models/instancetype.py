"""What a node can be: an instance type, its offerings, and what a pod can use of it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from models import labels as L
from models.requirements import IN, Requirement, Requirements
from models.resources import Resources, subtract


@dataclass(frozen=True, slots=True)
class Offering:
    """One way to buy an instance type: a zone and capacity type at a price."""

    zone: str
    capacity_type: str
    price: float
    available: bool = True
    # A reserved offering's capacity reservation (empty for on-demand and spot)
    reservation_id: str = ""
    # how many more instances the reservation holds (reserved offerings only)
    reservation_capacity: int = 0

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "zone": self.zone,
            "capacityType": self.capacity_type,
            "price": self.price,
        }
        if not self.available:
            out["available"] = False
        if self.reservation_id:
            out["reservationID"] = self.reservation_id
            out["reservationCapacity"] = self.reservation_capacity
        return out


@dataclass(slots=True, eq=False)
class InstanceType:
    """An instance type with its labels (as requirements), resources and offerings.

    ``requirements`` always carries the instance-type name, arch, os, and the zones and
    capacity types of its offerings, so the solver treats every label the same way.
    """

    name: str
    capacity: Resources
    overhead: Resources
    requirements: Requirements
    offerings: tuple[Offering, ...]
    allocatable: Resources = field(init=False)

    def __post_init__(self) -> None:
        alloc = subtract(self.capacity, self.overhead)
        self.allocatable = {k: max(0, v) for k, v in alloc.items()}

    @staticmethod
    def build(
        name: str,
        capacity: Mapping[str, int],
        offerings: Iterable[Offering],
        overhead: Mapping[str, int] | None = None,
        requirements: Iterable[Requirement] = (),
    ) -> InstanceType:
        offers = tuple(offerings)
        base = Requirements(requirements)
        defaults = [Requirement.create(L.INSTANCE_TYPE, IN, [name])]
        if L.ARCH not in base:
            defaults.append(Requirement.create(L.ARCH, IN, ["amd64"]))
        if L.OS not in base:
            defaults.append(Requirement.create(L.OS, IN, ["linux"]))
        defaults.append(Requirement.create(L.ZONE, IN, sorted({o.zone for o in offers})))
        defaults.append(
            Requirement.create(L.CAPACITY_TYPE, IN, sorted({o.capacity_type for o in offers}))
        )
        reqs = base.with_requirements(defaults)
        return InstanceType(name, dict(capacity), dict(overhead or {}), reqs, offers)

    def cheapest_offering(self, requirements: Requirements) -> Offering | None:
        """The cheapest available offering whose zone and capacity type the requirements allow."""
        zone = requirements.get_or_exists(L.ZONE)
        ct = requirements.get_or_exists(L.CAPACITY_TYPE)
        best: Offering | None = None
        for o in self.offerings:
            allowed = o.available and zone.has(o.zone) and ct.has(o.capacity_type)
            if allowed and (best is None or o.price < best.price):
                best = o
        return best
