"""One node-repair pass: read the Nodes and NodeClaims, let ``scheduling.repair`` decide, and
carry it out as Karpenter does.

A repaired node's NodeClaim gets ``karpenter.sh/nodeclaim-termination-timestamp`` set to
now and is deleted: its lifecycle workflow then drains with a deadline already passed, so
pods are deleted rather than evicted (PDBs are not waited on; the node is already broken),
and the provisioner plans their replacement as for any deleted node. A node whose pool is
too unhealthy gets a ``NodeRepairBlocked`` Warning event instead. Every step is idempotent:
several workers may run passes at once.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime

from activities.cloud.health import EVENT_STATUS, Unhealthy
from activities.kubernetes import events, nodeclaims, nodes
from activities.kubernetes.client import Kube
from activities.kubernetes.custom_objects import Obj
from activities.kubernetes.errors import NotFound
from activities.metrics import Counters
from models import labels as L
from scheduling.repair import NodeHealth, RepairDecision, conditions_of, decide

log = logging.getLogger(__name__)
TERMINATION_TIMESTAMP = L.NODECLAIM_TERMINATION_TIMESTAMP
UNHEALTHY = "Unhealthy"  # karpenter_nodeclaims_disrupted_total's reason for a repair


@dataclass
class RepairOutcome:
    repaired: list[str] = field(default_factory=list)  # NodeClaim names deleted
    blocked: list[str] = field(default_factory=list)  # Node names held back
    next_check: datetime | None = None


def _rfc3339(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def health(node_objs: list[Obj], claim_objs: list[Obj]) -> list[NodeHealth]:
    """Each Node with its pool and its NodeClaim (matched by ``status.nodeName`` or the
    provider id)."""
    by_node: dict[str, Obj] = {}
    by_pid: dict[str, Obj] = {}
    for c in claim_objs:
        status = c.get("status") or {}
        if status.get("nodeName"):
            by_node[str(status["nodeName"])] = c
        if status.get("providerID"):
            by_pid[str(status["providerID"])] = c
    out = []
    for n in node_objs:
        meta = n["metadata"]
        name = str(meta["name"])
        claim = by_node.get(name) or by_pid.get(str((n.get("spec") or {}).get("providerID") or ""))
        labels = meta.get("labels") or {}
        out.append(
            NodeHealth(
                name=name,
                conditions=conditions_of(n),
                pool=labels.get(L.NODEPOOL),
                claim=str(claim["metadata"]["name"]) if claim else None,
                claim_deleting=bool(claim and claim["metadata"].get("deletionTimestamp")),
            )
        )
    return out


def repair_pass(kube: Kube, now: datetime, counters: Counters | None = None) -> RepairOutcome:
    node_objs = nodes.list_(kube)
    claim_objs, _ = nodeclaims.list_(kube)
    decision = decide(health(node_objs, claim_objs), now)
    return carry_out(kube, decision, now, counters, {n["metadata"]["name"]: n for n in node_objs})


def carry_out(
    kube: Kube,
    decision: RepairDecision,
    now: datetime,
    counters: Counters | None = None,
    node_objs: dict[str, Obj] | None = None,
) -> RepairOutcome:
    out = RepairOutcome(next_check=decision.next_check)
    for r in decision.repairs:
        try:
            nodeclaims.patch_metadata(
                kube, r.claim, annotations={TERMINATION_TIMESTAMP: _rfc3339(now)}
            )
            nodeclaims.delete(kube, r.claim)
        except NotFound:
            continue
        log.info(
            "node %s unhealthy (%s past its toleration): deleting NodeClaim %s",
            r.node,
            r.condition,
            r.claim,
        )
        out.repaired.append(r.claim)
        labels = ((node_objs or {}).get(r.node, {}).get("metadata") or {}).get("labels") or {}
        if counters is not None:
            counters.nodeclaim_disrupted(r.pool or "", UNHEALTHY, labels.get(L.CAPACITY_TYPE, ""))
        events.record(
            kube,
            kind="Node",
            name=r.node,
            api_version="v1",
            reason="NodeRepair",
            message=f"Node is unhealthy ({r.condition} past its toleration); replacing it",
            warning=True,
        )
    for b in decision.blocked:
        out.blocked.append(b.node)
        events.record(
            kube,
            kind="Node",
            name=b.node,
            api_version="v1",
            reason="NodeRepairBlocked",
            message=f"Cannot repair the node: {b.message}",
            warning=True,
        )
    return out


def instance_status_pass(
    kube: Kube,
    unhealthy: list[Unhealthy],
    now: datetime,
    counters: Counters | None = None,
) -> list[str]:
    """Karpenter's instance-status handling: an instance whose status check failed is
    terminated forcefully (termination timestamp now, then the claim deleted); one with only
    a scheduled event is drained as for an interruption (the claim deleted). Returns the
    NodeClaims deleted. No 20% block: Karpenter handles these as interruptions."""
    if not unhealthy:
        return []
    claim_objs, _ = nodeclaims.list_(kube)
    by_instance: dict[str, Obj] = {}
    for c in claim_objs:
        pid = str((c.get("status") or {}).get("providerID") or "")
        if pid:
            by_instance[pid.rsplit("/", 1)[-1]] = c
    deleted = []
    for u in unhealthy:
        claim = by_instance.get(u.instance_id)
        if claim is None or claim["metadata"].get("deletionTimestamp"):
            continue
        name = str(claim["metadata"]["name"])
        forceful = bool(u.categories - {EVENT_STATUS})
        try:
            if forceful:
                nodeclaims.patch_metadata(
                    kube, name, annotations={TERMINATION_TIMESTAMP: _rfc3339(now)}
                )
            nodeclaims.delete(kube, name)
        except NotFound:
            continue
        log.info(
            "instance %s unhealthy (%s): deleting NodeClaim %s",
            u.instance_id,
            ", ".join(sorted(u.categories)),
            name,
        )
        deleted.append(name)
        labels = claim["metadata"].get("labels") or {}
        if counters is not None:
            counters.nodeclaim_disrupted(
                str(labels.get(L.NODEPOOL) or ""),
                sorted(u.categories)[0],
                str(labels.get(L.CAPACITY_TYPE) or ""),
            )
        events.record(
            kube,
            kind="NodeClaim",
            name=name,
            uid=str(claim["metadata"].get("uid") or ""),
            reason="InstanceUnhealthy",
            message="An unhealthy warning was triggered for the instance",
            warning=True,
        )
    return deleted
