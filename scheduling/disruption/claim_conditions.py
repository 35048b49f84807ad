"""The ``Consolidatable`` and ``Drifted`` conditions each NodeClaim should carry now.

Karpenter keeps both on every NodeClaim (its nodeclaim disruption controller) so
``kubectl get nodeclaims`` shows which claims disruption may act on and why:

- ``Consolidatable`` is True (reason ``Consolidatable``) once the claim's node is initialized
  and the pool's ``consolidateAfter`` has passed since the later of the claim's creation and
  its ``status.lastPodEventTime``; otherwise, and whenever the pool says
  ``consolidateAfter: Never``, the condition is absent (not False), as in Karpenter.
- ``Drifted`` is True with reason ``NodePoolDrifted``, ``RequirementsDrifted``,
  ``InstanceTypeNotFound``, or one of the EC2NodeClass reasons (``NodeClassDrift``,
  ``AMIDrift``, ``SecurityGroupDrift``, ``SubnetDrift``): the same checks the engine uses,
  ``drift.drift_reason``; absent once the claim matches its pool and class again.

Pure: the caller reads the cluster and the clock; ``None`` means "the condition should not
be there".
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from models.conditions import CONSOLIDATABLE, DRIFTED
from models.duration import NEVER, parse_duration
from models.nodepool import NodePool
from scheduling.disruption.cluster import ClusterView
from scheduling.disruption.drift_reasons import node_drift
from scheduling.disruption.types import ManagedNode


@dataclass(frozen=True)
class Wanted:
    """A condition as it should be (``status`` is always ``"True"`` here: Karpenter removes
    these two conditions rather than setting them False)."""

    type: str
    status: str
    reason: str
    message: str = ""


def consolidatable(node: ManagedNode, pool: NodePool, now: datetime) -> Wanted | None:
    after = pool.spec.disruption.consolidate_after
    if not node.initialized or after == NEVER:
        return None
    wait = timedelta(seconds=parse_duration(after))
    stamps = [t for t in (node.created, node.last_pod_event) if t is not None]
    if stamps and now - max(stamps) < wait:
        return None
    return Wanted(CONSOLIDATABLE, "True", CONSOLIDATABLE)


def drifted(reason: str | None) -> Wanted | None:
    """``drift_reason``'s ``"Reason: message"`` as a condition."""
    if reason is None:
        return None
    head, _, message = reason.partition(":")
    return Wanted(DRIFTED, "True", head.strip(), message.strip())


def desired(cluster: ClusterView, now: datetime) -> dict[str, dict[str, Wanted | None]]:
    """Claim name → condition type → the condition it should carry (``None``: none).

    Every managed node's claim is covered, candidates or not; claims being deleted are left
    alone (their lifecycle owns their status from then on). Drift is judged against the
    node's own pool's catalog, as the round judges it."""
    out: dict[str, dict[str, Wanted | None]] = {}
    for node in cluster.managed:
        pool = cluster.pools.get(node.pool)
        claim = cluster.claims.get(node.name)
        if pool is None or claim is None or node.deleting:
            continue
        out[node.claim] = {
            CONSOLIDATABLE: consolidatable(node, pool, now),
            DRIFTED: drifted(node_drift(cluster, node, pool, now)),
        }
    return out
