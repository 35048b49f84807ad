"""Placement groups: the EC2NodeClass's ``placementGroupSelector`` resolved to one group.

As Karpenter's provider: a group named by id or by name, in state ``available``; none found
makes ``PlacementGroupReady`` False (and so the class not Ready) rather than launching
outside the group the user asked for. Its strategy (cluster, partition, spread) narrows the
class's instance types to those that support it, its id goes into the launch template's
``Placement`` and onto the node's ``karpenter.k8s.aws/placement-group-id`` label, and a
node whose label no longer names the class's group has drifted (``PlacementGroupDrift``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from activities.ec2.errors import EC2Error, aws_errors
from models.ec2nodeclass import PlacementGroupSelector

# EC2's answer for a group name or id it does not know
UNKNOWN_CODES = ("InvalidPlacementGroup.Unknown", "InvalidGroup.NotFound")


@dataclass(frozen=True, slots=True)
class PlacementGroup:
    id: str
    name: str
    strategy: str  # cluster | partition | spread
    partition_count: int = 0
    spread_level: str = ""


def describe(selector: PlacementGroupSelector) -> str:
    return selector.id or selector.name or ""


def resolve_placement_group(ec2: Any, selector: PlacementGroupSelector) -> PlacementGroup | None:
    """The available group the selector names, or None when EC2 knows none."""
    args: dict[str, Any] = {"Filters": [{"Name": "state", "Values": ["available"]}]}
    if selector.id:
        args["GroupIds"] = [selector.id]
    else:
        args["GroupNames"] = [selector.name]
    try:
        with aws_errors("DescribePlacementGroups"):
            found = ec2.describe_placement_groups(**args).get("PlacementGroups", [])
    except EC2Error as exc:
        if exc.code in UNKNOWN_CODES:
            return None
        raise
    if not found:
        return None
    g = found[0]
    return PlacementGroup(
        id=str(g.get("GroupId", "")),
        name=str(g.get("GroupName", "")),
        strategy=str(g.get("Strategy", "")),
        partition_count=int(g.get("PartitionCount") or 0),
        spread_level=str(g.get("SpreadLevel") or ""),
    )
