"""What a cloud says of an instance's health, beside the node's own conditions.

Karpenter's AWS provider reads EC2's instance status checks; node repair (the NodeRepair
feature gate) acts on them through the provider (``CloudProvider.unhealthy_instances``), so
the repair pass needs no cloud's SDK: a failed status check terminates the node forcefully,
a scheduled event drains it.
"""

from __future__ import annotations

from dataclasses import dataclass

# The kinds of signal: the instance's own check, the host's, and a scheduled event.
INSTANCE_STATUS, SYSTEM_STATUS, EVENT_STATUS = "InstanceStatus", "SystemStatus", "EventStatus"


@dataclass(frozen=True, slots=True)
class Unhealthy:
    instance_id: str
    categories: frozenset[str]  # INSTANCE_STATUS, SYSTEM_STATUS, EVENT_STATUS
