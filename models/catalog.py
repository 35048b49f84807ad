"""The instance-type catalog file (DESIGN.md, ``--catalog``): read and written here only."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from models.instancetype import InstanceType, Offering
from models.kube import NodeSelectorRequirementWithMinValues
from models.quantity import format_quantity
from models.requirements import Requirements
from models.resources import parse_resources


class CatalogOffering(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="forbid")
    zone: str = Field(min_length=1)
    capacity_type: str = Field(alias="capacityType", min_length=1)
    price: float = Field(ge=0)
    available: bool = True
    # capacityType reserved: the capacity reservation and how many instances it has left
    reservation_id: str = Field(default="", alias="reservationID")
    reservation_capacity: int = Field(default=0, alias="reservationCapacity", ge=0)


class CatalogInstanceType(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="forbid")
    name: str = Field(min_length=1)
    capacity: dict[str, str | int | float]
    overhead: dict[str, str | int | float] = Field(default_factory=dict)
    requirements: list[NodeSelectorRequirementWithMinValues] = Field(default_factory=list)
    offerings: list[CatalogOffering] = Field(min_length=1)


class CatalogFile(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="allow")
    instance_types: list[CatalogInstanceType] = Field(alias="instanceTypes", min_length=1)


def instance_type_from_entry(entry: CatalogInstanceType) -> InstanceType:
    """Raises ValueError naming the field when a quantity is not valid."""
    try:
        capacity = parse_resources(entry.capacity)
    except ValueError as exc:
        raise ValueError(f"capacity.{exc}") from None
    try:
        overhead = parse_resources(entry.overhead)
    except ValueError as exc:
        raise ValueError(f"overhead.{exc}") from None
    reqs = Requirements.from_selector_terms(r.to_wire() for r in entry.requirements)
    offerings = [
        Offering(
            o.zone, o.capacity_type, o.price, o.available, o.reservation_id, o.reservation_capacity
        )
        for o in entry.offerings
    ]
    return InstanceType.build(entry.name, capacity, offerings, overhead, reqs.values())


def load_catalog(raw: Any) -> list[InstanceType]:
    """Parse a catalog document (already YAML-decoded); pydantic errors propagate."""
    catalog = CatalogFile.model_validate(raw)
    out = []
    for i, entry in enumerate(catalog.instance_types):
        try:
            out.append(instance_type_from_entry(entry))
        except ValueError as exc:
            raise ValueError(f"instanceTypes[{i}].{exc}") from None
    return out


_IMPLIED = (
    "node.kubernetes.io/instance-type",
    "topology.kubernetes.io/zone",
    "karpenter.sh/capacity-type",
)


def dump_catalog(instance_types: list[InstanceType]) -> dict[str, Any]:
    """The catalog document for a list of instance types (the format `joinery catalog` writes)."""
    entries = []
    for it in instance_types:
        entry: dict[str, Any] = {
            "name": it.name,
            "capacity": {k: format_quantity(v, k) for k, v in sorted(it.capacity.items())},
        }
        if any(it.overhead.values()):
            entry["overhead"] = {k: format_quantity(v, k) for k, v in sorted(it.overhead.items())}
        reqs = [r for r in it.requirements.to_list() if r["key"] not in _IMPLIED]
        if reqs:
            entry["requirements"] = reqs
        entry["offerings"] = [o.to_dict() for o in it.offerings]
        entries.append(entry)
    return {"instanceTypes": entries}
