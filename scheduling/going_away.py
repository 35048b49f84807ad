"""Nodes that are going away, and which of their pods a round plans capacity for now.

Karpenter's provisioner schedules, with the pending pods, the pods of every node marked for
deletion (``StateNodes.Deleting().CurrentlyReschedulablePods``), so a replacement is
launched when the node starts going (spot interruption, expiry, ``kubectl delete node``, a
drift or consolidation without a pre-made replacement), not once its pods are evicted and
turn Unschedulable one by one. A node goes away when the Node or its NodeClaim has a
``deletionTimestamp`` or the claim's ``InstanceTerminating`` condition is True; Joinery's
termination deletes the claim first, so every path through it counts from its start.

Of its pods, those Karpenter would reschedule: not terminal, not a DaemonSet's or the
Node's own (mirror pods), not already terminating (an evicted pod's replacement is a pending
pod of its own) except a StatefulSet's, whose successor is only made once it is gone, and
without ``karpenter.sh/do-not-disrupt: "true"`` (the drain will not evict it). Pure: the
callers (the solver's input, the provisioning activity's count) pass the objects.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from models import labels as L
from models.conditions import INSTANCE_TERMINATING

Obj = Mapping[str, Any]

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"


def claim_going_away(claim: Obj) -> bool:
    """Being deleted, or its instance already terminating."""
    if (claim.get("metadata") or {}).get("deletionTimestamp"):
        return True
    return any(
        c.get("type") == INSTANCE_TERMINATING and c.get("status") == "True"
        for c in (claim.get("status") or {}).get("conditions") or []
    )


def going_away_nodes(nodes: Iterable[Obj], claims: Iterable[Obj]) -> set[str]:
    """The names of the Nodes that are going away: deleting themselves, or their NodeClaim
    (matched by ``status.nodeName``, ``status.providerID`` or the Node's owner reference)
    going away."""
    nodes = list(nodes)
    out: set[str] = set()
    by_provider: dict[str, str] = {}
    owned: dict[str, str] = {}
    for n in nodes:
        meta = n.get("metadata") or {}
        name = str(meta.get("name") or "")
        if meta.get("deletionTimestamp"):
            out.add(name)
        pid = (n.get("spec") or {}).get("providerID")
        if pid:
            by_provider[str(pid)] = name
        for ref in meta.get("ownerReferences") or []:
            if ref.get("kind") == "NodeClaim":
                owned[str(ref.get("name") or "")] = name
    names = set(by_provider.values()) | set(owned.values())
    names |= {str((n.get("metadata") or {}).get("name") or "") for n in nodes}
    for c in claims:
        if not claim_going_away(c):
            continue
        status = c.get("status") or {}
        node = status.get("nodeName")
        if node not in names:
            node = by_provider.get(str(status.get("providerID") or ""))
        if node is None:
            node = owned.get(str((c.get("metadata") or {}).get("name") or ""))
        if node is not None:
            out.add(str(node))
    return out


def reschedulable(pod: Obj) -> bool:
    """Whether a pod bound to a node that is going away is planned for again now."""
    meta = pod.get("metadata") or {}
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return False
    kinds = {str(r.get("kind")) for r in meta.get("ownerReferences") or []}
    if "DaemonSet" in kinds or "Node" in kinds:
        return False
    annotations = meta.get("annotations") or {}
    if MIRROR_ANNOTATION in annotations:
        return False
    if meta.get("deletionTimestamp") and "StatefulSet" not in kinds:
        return False
    return annotations.get(L.DO_NOT_DISRUPT) != "true"
