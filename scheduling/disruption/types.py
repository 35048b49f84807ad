"""The disruption engine's vocabulary: what the inputs say about each managed node, and what
one round decides. Shared by the candidate, budget, method and report modules, so each of them
can be read and tested alone."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from scheduling.pods import Pod
from scheduling.solver import PlannedClaim

EMPTY = "Empty"
UNDERUTILIZED = "Underutilized"
DRIFTED = "Drifted"
REASONS = (EMPTY, UNDERUTILIZED, DRIFTED)


@dataclass(frozen=True, slots=True)
class ManagedNode:
    """A Node with ``karpenter.sh/nodepool`` whose pool is among the inputs, with its claim."""

    name: str  # Node metadata.name
    claim: str  # its NodeClaim's name; the node's own name when it has none
    pool: str
    instance_type: str
    zone: str
    capacity_type: str
    # Cheapest catalog offering for (instance type, zone, capacity type); None: not in catalog.
    price: float | None
    initialized: bool
    deleting: bool
    ready: bool
    created: datetime | None = None  # the claim's (else the node's) creationTimestamp
    last_pod_event: datetime | None = None  # NodeClaim status.lastPodEventTime
    # Its claim's InstanceTerminating condition is True (drained, the instance's deletion
    # under way): Karpenter's budgets no longer count it, neither in the pool nor as disrupting.
    instance_terminating: bool = False


@dataclass(frozen=True, slots=True)
class Candidate:
    """A managed node a round may disrupt, with the pods that would have to move."""

    node: ManagedNode
    # Pods bound to it that must move: not DaemonSet, not mirror, not terminal.
    pods: tuple[Pod, ...]
    # Karpenter's eviction cost (deletion-cost annotation, priority), scaled by the node's
    # remaining lifetime: cheaper candidates are tried first.
    disruption_cost: float
    drifted: str | None = None  # why the node drifted, or None
    # Why Empty and Underutilized may not take it yet (its pool's consolidateAfter), or None:
    # a drifted node inside the window is a candidate for the Drifted method only.
    consolidation_hold: str | None = None


@dataclass(frozen=True, slots=True)
class NodeVerdict:
    """A managed node in no command: ``blocked`` (may not be disrupted now) or ``kept``
    (disrupting it would gain nothing), with a one-line reason."""

    node: str
    reason: str


@dataclass
class Command:
    """One disruption a round starts: delete ``nodes``, launching ``replacements`` first."""

    reason: str  # EMPTY, UNDERUTILIZED or DRIFTED
    nodes: list[str]
    replacements: list[PlannedClaim]
    # pod key → destination: a Node / in-flight NodeClaim name, or "replacement-<i>".
    pods: dict[str, str]
    savings_per_hour: float


@dataclass
class RoundDecision:
    commands: list[Command] = field(default_factory=list)
    blocked: list[NodeVerdict] = field(default_factory=list)
    kept: list[NodeVerdict] = field(default_factory=list)
    cost_before: float = 0.0
    cost_after: float = 0.0
