"""Security groups a NodeClass selects."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from activities.ec2.errors import aws_errors
from activities.ec2.selectors import term_filters
from models.ec2nodeclass import SelectorTerm


@dataclass(frozen=True, slots=True)
class SecurityGroup:
    id: str
    name: str

    def to_status(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name}


def resolve_security_groups(ec2: Any, terms: Iterable[SelectorTerm]) -> list[SecurityGroup]:
    """Union over terms, sorted by id so the launch-template hash is stable."""
    found: dict[str, SecurityGroup] = {}
    for term in terms:
        with aws_errors("DescribeSecurityGroups"):
            pages = ec2.get_paginator("describe_security_groups").paginate(
                Filters=term_filters(term, "group-id", "group-name")
            )
            for page in pages:
                for g in page.get("SecurityGroups", []):
                    found[g["GroupId"]] = SecurityGroup(g["GroupId"], g.get("GroupName", ""))
    return sorted(found.values(), key=lambda g: g.id)
