"""Payloads of the planning activities (no heavy imports: the workflow sandbox loads them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class PlanInput:
    cluster: str
    # NodePools that must not get new NodeClaims (paused by an operator).
    paused_pools: list[str] = field(default_factory=list)


@dataclass
class PlannedNodeClaim:
    """One NodeClaim to create: its full body plus what the UI summary shows."""

    name: str
    nodepool: str
    body: dict[str, Any]
    instance_types: list[str] = field(default_factory=list)
    capacity_types: list[str] = field(default_factory=list)
    zones: list[str] = field(default_factory=list)
    price: float = 0.0
    pods: int = 0


@dataclass
class PlanOutcome:
    claims: list[PlannedNodeClaim] = field(default_factory=list)
    pending_pods: int = 0
    unschedulable: dict[str, str] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)  # invalid inputs, one line each
    invalid_pods: dict[str, str] = field(default_factory=dict)  # "ns/name" -> field: why
    pod_uids: dict[str, str] = field(default_factory=dict)  # of the pods named above
    unschedulable_count: int = 0
    # Pending pods the plan put on capacity that exists already: in-flight NodeClaims (not
    # yet matched to a Node) and Nodes. Beside the claims made, they show how a round
    # accounted for what is in flight.
    onto_in_flight: int = 0
    onto_nodes: int = 0
    # Where each placed pod should schedule ("ns/name" -> "nodeclaim/x" or "node/y"), for
    # Karpenter's Nominated events; never recorded in a history.
    nominated: dict[str, str] = field(default_factory=dict)

    def for_history(self, keep: int = 20) -> PlanOutcome:
        """The outcome as the workflow records it: the claims, counts and a few examples.
        Per-pod detail went into the pods' events; thousands of pending pods must not make
        a history event of megabytes."""
        return PlanOutcome(
            claims=self.claims,
            pending_pods=self.pending_pods,
            unschedulable=dict(list(self.unschedulable.items())[:keep]),
            skipped=self.skipped[:keep],
            invalid_pods=dict(list(self.invalid_pods.items())[:keep]),
            unschedulable_count=len(self.unschedulable),
            onto_in_flight=self.onto_in_flight,
            onto_nodes=self.onto_nodes,
        )


@dataclass
class ProvisionOutcome:
    """What one provisioning round did, as the provisioner's history records it: the names
    of the NodeClaims the round created (over all its attempts) and counts. No bodies: a
    burst of a thousand claims is a few kilobytes of names here (docs/performance.md)."""

    created: list[str] = field(default_factory=list)
    pending_pods: int = 0
    unschedulable: int = 0
    skipped: list[str] = field(default_factory=list)  # a few examples, one line each
    onto_in_flight: int = 0  # pending pods planned onto in-flight claims (PlanOutcome)
    onto_nodes: int = 0  # and onto Nodes


@dataclass
class CreatedNodeClaim:
    name: str
    uid: str
    summary: str


@dataclass
class StartInput:
    """Lifecycles to start: ``names`` (the activity reads the claims for their summaries),
    or ``claims`` as rounds recorded before the planning activity created them."""

    claims: list[CreatedNodeClaim] = field(default_factory=list)
    search_attributes: bool = False
    names: list[str] = field(default_factory=list)
