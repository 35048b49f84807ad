"""Placement groups: the EC2NodeClass's ``placementGroupSelector`` resolved to one group.

As Karpenter's provider: a group named by id or by name, in state ``available``; none found
makes ``PlacementGroupReady`` False (and so the class not Ready) rather than launching
outside the group the user asked for. Its strategy (cluster, partition, spread) narrows the
class's instance types to those that support it, its id goes into the launch template's
``Placement`` and onto the node's ``karpenter.k8s.aws/placement-group-id`` label, and a
node whose label no longer names the class's group has drifted (``PlacementGroupDrift``).
In a partition group, the partition is a topology as Karpenter makes it: the types offer
each partition (``karpenter.k8s.aws/placement-group-partition``), a claim that narrows them
is launched into the lowest it allows, and a node carries the partition it is in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from activities.ec2.errors import EC2Error, aws_errors
from models.ec2nodeclass import PlacementGroupSelector
from models.requirements import Requirements

PARTITION = "partition"
PARTITION_LABEL = "karpenter.k8s.aws/placement-group-partition"

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


def catalog_key(group: PlacementGroup | None) -> tuple[str, int]:
    """What of the group shapes the catalog's requirements: its id and, for a partition
    group, its partition count."""
    if group is None:
        return ("", 0)
    return (group.id, group.partition_count if group.strategy == PARTITION else 0)


def requested_partition(reqs: Requirements, group: PlacementGroup | None) -> int:
    """The partition a claim is launched into: the lowest its requirements allow when they
    narrow the group's partitions (Karpenter's rule), else 0 (EC2 chooses, spreading)."""
    if group is None or group.strategy != PARTITION or group.partition_count <= 0:
        return 0
    wanted = reqs.get(PARTITION_LABEL)
    if wanted is None:
        return 0
    every = [str(n) for n in range(1, group.partition_count + 1)]
    allowed = [int(n) for n in every if wanted.has(n)]
    if not allowed or len(allowed) == len(every):
        return 0
    return min(allowed)
