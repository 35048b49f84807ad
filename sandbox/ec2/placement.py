"""An instance's placement group, as EC2 records it: what moto's CreateFleet leaves out.

moto has no placement groups (the emulation keeps them, :class:`sandbox.ec2.emulation
.Emulation`), so an instance launched from a template whose ``Placement`` names a group
shows none in DescribeInstances. EC2 shows the group's name and id and, in a partition group,
the partition the instance went to: the one the template names (``PartitionNumber``), or,
when it names none, one EC2 picks to spread the group's instances evenly. Emulated here: the
partition holding fewest of the group's running instances, the lowest number on a tie.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol


class Groups(Protocol):
    def placement_group(self, region: str, group_id: str) -> dict[str, Any] | None: ...


def _members(backend: Any, group_id: str) -> list[Any]:
    return [
        i
        for i in backend.all_instances()
        if getattr(i.placement, "group_id", None) == group_id
        and i.state not in ("terminated", "shutting-down")
    ]


def apply_template(groups: Groups, backend: Any, data: Mapping[str, Any], instance_id: str) -> None:
    """Record ``instance_id``'s group (and partition) from its template's ``Placement``."""
    wanted = data.get("Placement") or {}
    group_id = str(wanted.get("GroupId") or "")
    if not group_id:
        return
    group = groups.placement_group(backend.region_name, group_id)
    if group is None:
        return
    instance = backend.get_instance(instance_id)
    if group["Strategy"] == "partition":
        number = int(wanted.get("PartitionNumber") or 0)
        if not number:
            count = int(group.get("PartitionCount") or 1)
            used = [0] * count
            for member in _members(backend, group_id):
                taken = int(getattr(member.placement, "partition_number", 0) or 0)
                if 1 <= taken <= count:
                    used[taken - 1] += 1
            number = 1 + used.index(min(used))
        instance.placement.partition_number = number
    instance.placement.group_id = group_id
    instance.placement.group_name = group["GroupName"]
