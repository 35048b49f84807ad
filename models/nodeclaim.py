"""``karpenter.sh/v1`` NodeClaim: one node's request and its observed state."""

from __future__ import annotations

from datetime import timedelta
from typing import Literal

from pydantic import Field, field_validator

from models.duration import NEVER, parse_duration
from models.kube import KubeModel, NodeSelectorRequirementWithMinValues, ObjectMeta, Taint
from models.nodepool import NodeClassReference
from models.requirements import Requirements

# Karpenter's launch TTL: a NodeClaim not launched within it is given up and deleted.
LAUNCH_TTL = timedelta(minutes=5)

# Condition types, as upstream names them.
LAUNCHED = "Launched"
REGISTERED = "Registered"
INITIALIZED = "Initialized"
DRIFTED = "Drifted"
DRAINED = "Drained"
VOLUMES_DETACHED = "VolumesDetached"
INSTANCE_TERMINATING = "InstanceTerminating"
CONSOLIDATABLE = "Consolidatable"
DISRUPTION_REASON = "DisruptionReason"
READY = "Ready"


class Condition(KubeModel):
    type: str
    status: Literal["True", "False", "Unknown"]
    reason: str = ""
    message: str = ""
    last_transition_time: str | None = None
    observed_generation: int | None = None


class ResourceRequirements(KubeModel):
    requests: dict[str, str] = Field(default_factory=dict)


class NodeClaimSpec(KubeModel):
    node_class_ref: NodeClassReference
    taints: list[Taint] = Field(default_factory=list)
    startup_taints: list[Taint] = Field(default_factory=list)
    requirements: list[NodeSelectorRequirementWithMinValues] = Field(
        default_factory=list, max_length=100
    )
    resources: ResourceRequirements = Field(default_factory=ResourceRequirements)
    expire_after: str = "720h"
    termination_grace_period: str | None = None

    @field_validator("expire_after")
    @classmethod
    def _expire(cls, v: str) -> str:
        if v != NEVER:
            parse_duration(v)
        return v


class NodeClaimStatus(KubeModel):
    node_name: str | None = None
    # Kubernetes spells these ``providerID`` / ``imageID``, not the ``providerId`` that the
    # camelCase aliases would give: an alias of its own, or the value is never read (a
    # launched claim then went unmatched to its Node until registration wrote nodeName).
    provider_id: str | None = Field(default=None, alias="providerID")
    image_id: str | None = Field(default=None, alias="imageID")
    capacity: dict[str, str] = Field(default_factory=dict)
    allocatable: dict[str, str] = Field(default_factory=dict)
    conditions: list[Condition] = Field(default_factory=list)
    last_pod_event_time: str | None = None


class NodeClaim(KubeModel):
    api_version: Literal["karpenter.sh/v1"] = "karpenter.sh/v1"
    kind: Literal["NodeClaim"] = "NodeClaim"
    metadata: ObjectMeta
    spec: NodeClaimSpec
    status: NodeClaimStatus = Field(default_factory=NodeClaimStatus)

    @property
    def name(self) -> str:
        return self.metadata.name

    def requirements(self) -> Requirements:
        reqs = Requirements.from_selector_terms(r.to_wire() for r in self.spec.requirements)
        return reqs.with_requirements(Requirements.from_labels(self.metadata.labels).values())

    def condition(self, type_: str) -> Condition | None:
        return next((c for c in self.status.conditions if c.type == type_), None)
