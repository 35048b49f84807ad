"""Launch input and output, the same for every cloud: plain, JSON-friendly dataclasses."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from models.requirements import Requirements


@dataclass
class LaunchRequest:
    """One NodeClaim to launch; names and small specs only.

    ``requirements`` are NodeSelectorRequirements (``{"key", "operator", "values"}``);
    ``resources`` are the claim's requests as quantity strings; ``kubelet`` is the node
    class's kubelet block in wire form (the node class passed to the launcher provides it
    when unset).
    """

    nodeclaim_name: str
    nodeclaim_uid: str
    nodepool_name: str
    nodeclass_name: str
    requirements: list[dict[str, Any]] = field(default_factory=list)
    resources: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    taints: list[dict[str, Any]] = field(default_factory=list)
    startup_taints: list[dict[str, Any]] = field(default_factory=list)
    kubelet: dict[str, Any] | None = None
    tags: dict[str, str] = field(default_factory=dict)

    def requirement_set(self) -> Requirements:
        return Requirements.from_selector_terms(self.requirements)


@dataclass
class LaunchResult:
    instance_id: str
    provider_id: str
    instance_type: str
    zone: str
    capacity_type: str
    image_id: str
    capacity: dict[str, str] = field(default_factory=dict)
    allocatable: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    # True when an earlier attempt had already launched this instance.
    reused: bool = False
    # Where the instance was launched: its subnet and security groups (sorted), as the launch
    # request gave them, or as the cloud shows an instance found again. Recorded on the claim
    # (``models.labels``) so drift compares them with the node class's.
    subnet_id: str = ""
    security_group_ids: list[str] = field(default_factory=list)
