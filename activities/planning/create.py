"""Creating the planned NodeClaims; a retried create finds the claim the first try made."""

from __future__ import annotations

from activities.kubernetes import nodeclaims
from activities.kubernetes.errors import AlreadyExists
from activities.lifecycle.common import Deps
from activities.planning.summary import summary_for
from activities.planning.types import CreatedNodeClaim, PlannedNodeClaim


def create(
    deps: Deps, planned: list[PlannedNodeClaim], reason: str = "provisioned"
) -> list[CreatedNodeClaim]:
    """``reason`` labels ``karpenter_nodeclaims_created_total``: ``provisioned``, or the
    disruption reason a replacement is made for."""
    out: list[CreatedNodeClaim] = []
    for p in planned:
        try:
            made = nodeclaims.create(deps.kube, p.body)
            deps.counters.nodeclaim_created(p.nodepool, reason)
        except AlreadyExists:
            made = nodeclaims.get(deps.kube, p.name)
        out.append(CreatedNodeClaim(p.name, str(made["metadata"].get("uid") or ""), summary_for(p)))
    return out
