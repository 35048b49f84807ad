"""Which Node a NodeClaim already has, when the claim as read does not say so yet.

The solver counts a NodeClaim as its Node when the claim's ``status.nodeName`` or
``status.providerID`` names one (``scheduling.inputs``), and as an in-flight claim
otherwise. The worker reads Nodes and NodeClaims from two watches: when the NodeClaim watch
lags the Node watch, a registered Node is read while its claim still shows no providerID,
and the round would count the one machine twice: as the Node (its capacity, toward its
pool's limits) and as an in-flight claim (the capacity it asked for, pods planned onto it,
the pool's limits again). A registered Node names its claim the way Karpenter's do, in its
``ownerReferences`` (kind NodeClaim, group ``karpenter.sh``, name and UID), so such a claim
is read as already linked to that Node.

A Node the kubelet has just created is not registered yet: it names no claim, only its
providerID, its pool (``karpenter.sh/nodepool``) and the ``karpenter.sh/unregistered``
taint, both from the launch's bootstrap.
While no claim read holds that providerID, its claim is one of its pool's claims that show
none yet (or is gone). Each such Node is paired with one such claim of its pool whose
instance types admit the Node's, so the machine counts once: as the Node, which the solver
simulates booted (``scheduling.inputs``). Which claim of the pool takes it does not matter
for the count, and a Node not yet registered is never a disruption candidate.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from activities.kubernetes.resources import NODECLAIM
from models import labels as L

Obj = dict[str, Any]


class ClaimNodes:
    """The round's Nodes as their claims: owned ones by claim name, unregistered ones by
    pool (see the module docstring)."""

    def __init__(self, nodes: Iterable[Obj], claims: Iterable[Obj]) -> None:
        self._owned: dict[str, list[tuple[str, str]]] = {}
        self._names: set[str] = set()
        self._provider_ids: set[str] = set()
        held = {str(p) for c in claims if (p := (c.get("status") or {}).get("providerID"))}
        # pool -> [(Node name, instance type)] of unregistered Nodes no claim read holds
        self._unclaimed: dict[str, list[tuple[str, str]]] = {}
        for node in nodes:
            meta = node.get("metadata") or {}
            name = str(meta.get("name") or "")
            labels = meta.get("labels") or {}
            self._names.add(name)
            pid = (node.get("spec") or {}).get("providerID")
            if pid:
                self._provider_ids.add(str(pid))
            owners = [ref for ref in meta.get("ownerReferences") or [] if _is_claim(ref)]
            for ref in owners:
                owner = str(ref.get("name") or "")
                self._owned.setdefault(owner, []).append((str(ref.get("uid") or ""), name))
            pool = labels.get(L.NODEPOOL)
            if pool and pid and str(pid) not in held and not owners and _unregistered(node):
                entry = (name, str(labels.get(L.INSTANCE_TYPE) or ""))
                self._unclaimed.setdefault(str(pool), []).append(entry)
        for entries in self._unclaimed.values():
            entries.sort()

    def node_of(self, claim: Mapping[str, Any]) -> str | None:
        """The Node that is ``claim``'s when its status does not link them yet, else None
        (the solver links them itself, or no Node is its). An unregistered Node is handed
        to one claim only: call once per claim."""
        status = claim.get("status") or {}
        if status.get("nodeName") in self._names or status.get("providerID") in self._provider_ids:
            return None
        meta = claim.get("metadata") or {}
        uid = str(meta.get("uid") or "")
        for owner_uid, node in self._owned.get(str(meta.get("name") or ""), ()):
            if not owner_uid or not uid or owner_uid == uid:  # a claim made again: not its
                return node
        if status.get("providerID") or status.get("nodeName"):
            return None  # launched elsewhere: not one of the Nodes without a claim
        pool = str((meta.get("labels") or {}).get(L.NODEPOOL) or "")
        entries = self._unclaimed.get(pool) or []
        types = _instance_types(claim)
        for i, (node, itype) in enumerate(entries):
            if types is None or itype in types:
                del entries[i]
                return node
        return None


def linked(claim: Obj, node: str) -> Obj:
    """``claim`` as read once its status names ``node`` (a copy; the watched one is kept)."""
    return {**claim, "status": {**(claim.get("status") or {}), "nodeName": node}}


def _is_claim(ref: Mapping[str, Any]) -> bool:
    group = str(ref.get("apiVersion") or "").split("/", 1)[0]
    return ref.get("kind") == NODECLAIM.kind and group == NODECLAIM.group


def _unregistered(node: Mapping[str, Any]) -> bool:
    """A launch's Node before registration: it carries the ``karpenter.sh/unregistered``
    taint its bootstrap gave it, and is neither registered nor going away."""
    meta = node.get("metadata") or {}
    if (meta.get("labels") or {}).get(L.NODE_REGISTERED) == "true" or meta.get("deletionTimestamp"):
        return False
    taints = (node.get("spec") or {}).get("taints") or []
    return any(t.get("key") == L.UNREGISTERED_TAINT_KEY for t in taints)


def _instance_types(claim: Mapping[str, Any]) -> set[str] | None:
    """The instance types the claim's ``In`` requirement admits; None when it names none."""
    for req in (claim.get("spec") or {}).get("requirements") or []:
        if req.get("key") == L.INSTANCE_TYPE and req.get("operator") == "In":
            return {str(v) for v in req.get("values") or []}
    return None
