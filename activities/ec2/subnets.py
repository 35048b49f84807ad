"""Subnets a NodeClass selects, with the free addresses that decide where a launch goes."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from activities.ec2.errors import aws_errors
from activities.ec2.selectors import term_filters
from models.ec2nodeclass import SelectorTerm


@dataclass(frozen=True, slots=True)
class Subnet:
    id: str
    zone: str
    zone_id: str
    available_ips: int
    vpc_id: str

    def to_status(self) -> dict[str, Any]:
        return {"id": self.id, "zone": self.zone, "zoneID": self.zone_id}


def resolve_subnets(ec2: Any, terms: Iterable[SelectorTerm]) -> list[Subnet]:
    """Union over terms, most free addresses first (ties by id, for stable output)."""
    found: dict[str, Subnet] = {}
    for term in terms:
        with aws_errors("DescribeSubnets"):
            pages = ec2.get_paginator("describe_subnets").paginate(
                Filters=term_filters(term, "subnet-id", None)
            )
            for page in pages:
                for s in page.get("Subnets", []):
                    if s.get("State", "available") != "available":
                        continue
                    found[s["SubnetId"]] = Subnet(
                        s["SubnetId"],
                        s["AvailabilityZone"],
                        s.get("AvailabilityZoneId", ""),
                        int(s.get("AvailableIpAddressCount", 0)),
                        s.get("VpcId", ""),
                    )
    return sorted(found.values(), key=lambda s: (-s.available_ips, s.id))


def best_subnet_per_zone(subnets: Iterable[Subnet]) -> dict[str, Subnet]:
    """The subnet with the most free addresses in each zone (the list is already ordered)."""
    out: dict[str, Subnet] = {}
    for s in subnets:
        out.setdefault(s.zone, s)
    return out
