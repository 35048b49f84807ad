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
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

Obj = dict[str, Any]
CLAIM_GROUP = "karpenter.sh"
CLAIM_KIND = "NodeClaim"


class ClaimNodes:
    """The round's Nodes as their claims' owners: claim name -> (claim UID, Node name)."""

    def __init__(self, nodes: Iterable[Obj]) -> None:
        self._owned: dict[str, list[tuple[str, str]]] = {}
        self._names: set[str] = set()
        self._provider_ids: set[str] = set()
        for node in nodes:
            meta = node.get("metadata") or {}
            name = str(meta.get("name") or "")
            self._names.add(name)
            pid = (node.get("spec") or {}).get("providerID")
            if pid:
                self._provider_ids.add(str(pid))
            for ref in meta.get("ownerReferences") or []:
                if _is_claim(ref):
                    owner = str(ref.get("name") or "")
                    self._owned.setdefault(owner, []).append((str(ref.get("uid") or ""), name))

    def node_of(self, claim: Mapping[str, Any]) -> str | None:
        """The Node owned by ``claim`` when its status does not link them yet, else None
        (the solver links them itself, or no Node names it)."""
        status = claim.get("status") or {}
        if status.get("nodeName") in self._names or status.get("providerID") in self._provider_ids:
            return None
        meta = claim.get("metadata") or {}
        uid = str(meta.get("uid") or "")
        for owner_uid, node in self._owned.get(str(meta.get("name") or ""), ()):
            if not owner_uid or not uid or owner_uid == uid:  # a claim made again: not its
                return node
        return None


def linked(claim: Obj, node: str) -> Obj:
    """``claim`` as read once its status names ``node`` (a copy; the watched one is kept)."""
    return {**claim, "status": {**(claim.get("status") or {}), "nodeName": node}}


def _is_claim(ref: Mapping[str, Any]) -> bool:
    group = str(ref.get("apiVersion") or "").split("/", 1)[0]
    return ref.get("kind") == CLAIM_KIND and group == CLAIM_GROUP
