"""Payloads between the NodeClaim workflow and its activities: names and small specs only.

Kept free of heavy imports so the workflow sandbox can load them cheaply, and without
``from __future__ import annotations``: the SDK's converter asks ``typing.get_type_hints``
for a dataclass's field types at every decode, which for string annotations compiles each
one again (about twice the cost; a lifecycle decodes these a dozen times).
"""

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
    # The newest lifecycle shape the worker that read it knows (``contract.NODECLAIM_SHAPE``;
    # 0 from a worker older than shape 2). A local activity runs in the worker that runs its
    # workflow task, so this says which code ran the run's first task
    # (workflows/nodeclaim/shape.py).
    read_by_shape: int = 0


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
    # Whether to list Nodes when none is named (the workflow's first check names none yet).
    search: bool = True


@dataclass
class InitializeInput:
    claim: ClaimSpec
    node_name: str


@dataclass
class InitializeOutcome:
    initialized: bool
    reason: str = ""


@dataclass
class Registration:
    """Registration and initialization in one call (shape 2): ``node_name`` None while no Node
    carries the providerID; ``initialize`` is the initialization check once it does."""

    node_name: str | None = None
    initialize: InitializeOutcome | None = None


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


@dataclass
class TerminationPassInput:
    """Termination's steps in one call (shape 2). ``node_name``: the Node the workflow knows,
    for when the claim no longer names one (as the per-step calls fall back to it)."""

    begin: BeginTerminationInput
    node_name: str | None = None


@dataclass
class TerminationProgress:
    """How far one termination pass got. Each step's answer is set once the step ran; the
    pass stops after the first whose answer means waiting (a drain not done, volumes still
    attached, an instance not yet gone), and ``finalized`` is True when it got to the end.
    The drain and the volume check are skipped, as by the per-step path, when there is no
    Node or its instance is already gone."""

    start: TerminationStart
    drain: DrainStatus | None = None
    volumes_attached: int | None = None
    instance_gone: bool | None = None
    finalized: bool = False
