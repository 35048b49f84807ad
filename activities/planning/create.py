"""Creating the planned NodeClaims; a retried create finds the claim the first try made.

A burst plans hundreds of claims at once: they are created ``IN_FLIGHT`` at a time (the
Kubernetes client is thread-safe), in the plan's order.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from activities.deps import Deps
from activities.kubernetes import nodeclaims
from activities.kubernetes.errors import AlreadyExists
from activities.planning.summary import summary_for
from activities.planning.types import CreatedNodeClaim, PlannedNodeClaim
from models.policies import MIN_VALUES_RELAXED_ANNOTATION

IN_FLIGHT = 16


def create(
    deps: Deps, planned: list[PlannedNodeClaim], reason: str = "provisioned"
) -> list[CreatedNodeClaim]:
    """``reason`` labels ``karpenter_nodeclaims_created_total``: ``provisioned``, or the
    disruption reason a replacement is made for."""

    def one(p: PlannedNodeClaim) -> CreatedNodeClaim:
        try:
            made = nodeclaims.create(deps.kube, p.body)
            annotations = p.body.get("metadata", {}).get("annotations") or {}
            relaxed = annotations.get(MIN_VALUES_RELAXED_ANNOTATION) == "true"
            deps.counters.nodeclaim_created(p.nodepool, reason, relaxed)
            if deps.watched is not None:  # the next round counts it before the watch does
                deps.watched.nodeclaims.observe_created(made)
        except AlreadyExists:
            made = nodeclaims.get(deps.kube, p.name)
        return CreatedNodeClaim(p.name, str(made["metadata"].get("uid") or ""), summary_for(p))

    if len(planned) <= 1:
        return [one(p) for p in planned]
    with ThreadPoolExecutor(max_workers=min(IN_FLIGHT, len(planned))) as pool:
        return list(pool.map(one, planned))
