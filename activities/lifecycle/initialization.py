"""Initialization: the registered Node is ready for pods.

As Karpenter decides it: the Node is Ready, its startup taints and the known ephemeral taints
(not-ready, unreachable, cloud-provider uninitialized, Joinery's unregistered) are gone, and
every extended resource the claim requested is advertised. Then the Node gets
``karpenter.sh/initialized=true`` and the claim ``Initialized=True``.
"""

from __future__ import annotations

from typing import Any

from activities.deps import Deps
from activities.kubernetes import conditions as cond
from activities.kubernetes import nodeclaims, nodes
from activities.kubernetes.errors import NotFound
from activities.kubernetes.retries import retry_conflicts
from activities.lifecycle import reads
from activities.lifecycle.types import ClaimSpec, InitializeInput, InitializeOutcome
from models import conditions
from models import labels as L
from models.quantity import parse_quantity

KNOWN_EPHEMERAL_TAINTS = (
    ("node.kubernetes.io/not-ready", "NoSchedule"),
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoSchedule"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.cloudprovider.kubernetes.io/uninitialized", "NoSchedule"),
    (L.UNREGISTERED_TAINT_KEY, "NoExecute"),
)
STANDARD_RESOURCES = frozenset({"cpu", "memory", "pods", "ephemeral-storage"})


def _ready(node: dict[str, Any]) -> bool:
    for c in (node.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready":
            return bool(c.get("status") == "True")
    return False


def looks_ready(node: dict[str, Any]) -> bool:
    """Ready, with no ephemeral taint but the one registration removes: a watched copy that
    does not look so may be behind the Node (``reads``), and is read again."""
    taints = [(t.get("key"), t.get("effect")) for t in (node.get("spec") or {}).get("taints") or []]
    ephemeral = [t for t in KNOWN_EPHEMERAL_TAINTS if t[0] != L.UNREGISTERED_TAINT_KEY]
    return _ready(node) and not any(t in taints for t in ephemeral)


def why_not_initialized(node: dict[str, Any], claim: ClaimSpec) -> str:
    """An empty string when initialized, else the first reason it is not."""
    if not _ready(node):
        return "NodeNotReady"
    taints = [(t.get("key"), t.get("effect")) for t in (node.get("spec") or {}).get("taints") or []]
    for key, effect in KNOWN_EPHEMERAL_TAINTS:
        if (key, effect) in taints:
            return f"KnownEphemeralTaint {key}:{effect}"
    for t in claim.startup_taints:
        if (t.get("key"), t.get("effect")) in taints:
            return f"StartupTaint {t.get('key')}:{t.get('effect')}"
    allocatable = (node.get("status") or {}).get("allocatable") or {}
    for resource, quantity in sorted(claim.resources.items()):
        if resource in STANDARD_RESOURCES or parse_quantity(quantity) == 0:
            continue
        if parse_quantity(allocatable.get(resource, "0")) == 0:
            return f"ResourceNotRegistered {resource}"
    return ""


def not_initialized(reason: str) -> cond.Condition:
    """``Initialized=Unknown`` saying why (``reason`` from ``why_not_initialized``)."""
    return cond.Condition(conditions.INITIALIZED, "Unknown", reason.split(" ", 1)[0], reason)


def initialize(deps: Deps, inp: InitializeInput) -> InitializeOutcome:
    """One check. A claim already ``Initialized=True`` stays so (as Karpenter's
    initialization controller does): one read, and a Node that is briefly NotReady later is
    not taken for an uninitialized one. Registration marks a Node that is ready at once,
    so for most claims this is that one read."""
    try:
        claim = reads.claim(deps, inp.claim.name)
    except NotFound:
        return InitializeOutcome(False, "NotFound")
    if cond.is_true(claim, conditions.INITIALIZED):
        return InitializeOutcome(True)
    try:
        node = reads.node(deps, inp.node_name, trust=looks_ready)
    except NotFound:
        return InitializeOutcome(False, "NodeNotFound")
    reason = why_not_initialized(node, inp.claim)
    read: dict[str, Any] = {"claim": claim}

    def mark_claim(c: cond.Condition) -> None:
        current_claim = read.pop("claim", None) or nodeclaims.get(deps.kube, inp.claim.name)
        if c.status != "True" and cond.is_true(current_claim, conditions.INITIALIZED):
            return  # initialized stays so, even when the first read was a stale watched copy
        current = cond.find((current_claim.get("status") or {}).get("conditions") or [], c.type)
        if current is None or (current.get("status"), current.get("reason")) != (
            c.status,
            c.reason,
        ):
            reads.claim_written(deps, nodeclaims.set_conditions(deps.kube, current_claim, [c]))
            if c.status == "True":
                deps.counters.nodeclaim_initialized(inp.claim.nodepool, inp.claim.nodeclass)

    try:
        if reason:
            retry_conflicts(lambda: mark_claim(not_initialized(reason)))
            return InitializeOutcome(False, reason)
        if (node["metadata"].get("labels") or {}).get(L.NODE_INITIALIZED) != "true":
            labelled = nodes.patch_metadata(
                deps.kube, inp.node_name, labels={L.NODE_INITIALIZED: "true"}
            )
            reads.node_written(deps, labelled)
        retry_conflicts(
            lambda: mark_claim(
                cond.Condition(conditions.INITIALIZED, "True", conditions.INITIALIZED)
            )
        )
    except NotFound:
        return InitializeOutcome(False, "NotFound")
    return InitializeOutcome(True)
