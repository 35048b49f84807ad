"""Payloads between the NodeClaim workflow and its activities: names and small specs only.

Kept free of heavy imports so the workflow sandbox can load them cheaply.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class ClaimSpec:
    """What the workflow needs to know about its NodeClaim, read once at the start."""

    name: str
    uid: str
    nodepool: str
    nodeclass: str
    requirements: list[dict[str, Any]] = field(default_factory=list)
    resources: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    taints: list[dict[str, Any]] = field(default_factory=list)
    startup_taints: list[dict[str, Any]] = field(default_factory=list)
    # None means Never.
    expire_after_seconds: float | None = None
    termination_grace_period_seconds: float | None = None
    created_at: str | None = None
    deleting: bool = False
    # Set when an earlier run (or another controller) already launched / registered it.
    provider_id: str | None = None
    node_name: str | None = None


@dataclass
class LaunchOutcome:
    provider_id: str
    instance_id: str
    instance_type: str
    zone: str
    capacity_type: str
    image_id: str = ""
    capacity: dict[str, str] = field(default_factory=dict)
    allocatable: dict[str, str] = field(default_factory=dict)


@dataclass
class RegisterInput:
    claim: ClaimSpec
    provider_id: str
    # The Node the watcher saw for this claim, if any: read first, listed only if it is not.
    node_name: str = ""


@dataclass
class InitializeInput:
    claim: ClaimSpec
    node_name: str


@dataclass
class InitializeOutcome:
    initialized: bool
    reason: str = ""


@dataclass
class BeginTerminationInput:
    name: str
    uid: str
    reason: str
    message: str = ""
    provider_id: str | None = None


@dataclass
class TerminationStart:
    """The node (if registered) now carries the disrupted taint; deadline is ISO-8601 UTC.
    ``instance_gone``: EC2 no longer has the instance and the Node is not Ready, so there is
    nothing to drain (Karpenter's termination skips the drain of such a node too)."""

    node_name: str | None
    deletion_time: str
    grace_deadline: str | None = None
    instance_gone: bool = False


@dataclass
class DrainInput:
    nodeclaim: str
    node_name: str
    grace_deadline: str | None = None


@dataclass
class BlockedPod:
    pod: str
    pdbs: list[str] = field(default_factory=list)


@dataclass
class DrainStatus:
    """One pass over the node's pods.

    ``done`` when nothing that must leave is left; ``evicted`` were asked to leave in this
    pass, ``waiting`` are still terminating or wait for an earlier group, ``blocked`` were
    refused by a PodDisruptionBudget, ``held`` carry ``karpenter.sh/do-not-disrupt``,
    ``deleted`` were deleted because the terminationGracePeriod is running out.
    """

    done: bool
    evicted: list[str] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)
    blocked: list[BlockedPod] = field(default_factory=list)
    held: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)


@dataclass
class VolumesInput:
    nodeclaim: str
    node_name: str


@dataclass
class InstanceInput:
    nodeclaim: str
    provider_id: str | None = None


@dataclass
class FinalizeInput:
    nodeclaim: str
    node_name: str | None = None
    reason: str = ""
