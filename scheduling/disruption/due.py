"""When the next round is due although nothing in the cluster changes: the earliest moment a
node held back only by time may become a candidate.

Three holds end on their own, with no event to signal it: a pool's ``consolidateAfter``
(counted from the later of the claim's creation and its last pod event), a pod's
``karpenter.sh/do-not-disrupt`` duration (counted from its start), and a scheduled budget
window that allows less than the pool would otherwise. Without this, such a node waits for
the workflow's slow timer; Karpenter finds it on its next ~10 s poll. A node held by
something no clock ends (being deleted, not initialized, ``do-not-disrupt: "true"``) has no
due time. Pure: the caller passes the clock.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from models import labels as L
from models.cron import next_hit, schedule_error
from models.duration import NEVER, parse_duration
from models.nodepool import NodePool
from scheduling.disruption.cluster import ClusterView, PodFacts
from scheduling.disruption.types import ManagedNode


def _consolidate_after_ends(node: ManagedNode, pool: NodePool) -> datetime | None:
    after = pool.spec.disruption.consolidate_after
    if after == NEVER:
        return None
    stamps = [t for t in (node.created, node.last_pod_event) if t is not None]
    if not stamps:
        return None
    return max(stamps) + timedelta(seconds=parse_duration(after))


def _pod_hold_ends(facts: PodFacts | None) -> datetime | None:
    """When a pod's do-not-disrupt duration ends; None when it has none (or a bad one)."""
    value = (facts.annotations if facts else {}).get(L.DO_NOT_DISRUPT)
    if value is None or value == "true" or facts is None or facts.started is None:
        return None
    try:
        return facts.started + timedelta(seconds=parse_duration(value))
    except ValueError:
        return None


def _forever(cluster: ClusterView, node: ManagedNode) -> bool:
    """Held by something no clock ends: the next change signals the workflow instead."""
    if node.deleting or not node.initialized:
        return True
    if cluster.node_annotations.get(node.name, {}).get(L.DO_NOT_DISRUPT) == "true":
        return True
    return any(
        not p.deleting
        and (cluster.pods.get(p.key) is not None)
        and cluster.pods[p.key].annotations.get(L.DO_NOT_DISRUPT) == "true"
        for p in cluster.node_pods.get(node.name, [])
    )


def node_due(cluster: ClusterView, node: ManagedNode, now: datetime) -> datetime | None:
    """When every time hold on ``node`` has ended, if one is still running at ``now``."""
    if _forever(cluster, node):
        return None
    ends = [_consolidate_after_ends(node, cluster.pools[node.pool])]
    ends += [
        _pod_hold_ends(cluster.pods.get(p.key))
        for p in cluster.node_pods.get(node.name, [])
        if not p.deleting
    ]
    running = [t for t in ends if t is not None and t > now]
    return max(running) if running else None


def window_ends(pool: NodePool, now: datetime) -> Iterable[datetime]:
    """The ends of the pool's scheduled budget windows open at ``now`` (a window that
    closes may let the pool disrupt more; one that opens only ever lowers the limit)."""
    for budget in pool.spec.disruption.budgets:
        if budget.schedule is None or budget.duration is None or schedule_error(budget.schedule):
            continue
        length = timedelta(seconds=parse_duration(budget.duration))
        began = next_hit(budget.schedule, now - length)
        if began <= now:
            yield began + length


def next_due(cluster: ClusterView, now: datetime) -> datetime | None:
    """The earliest moment after ``now`` a managed node's time holds end, or a budget window
    of a pool with managed nodes closes; None when no clock will change anything."""
    times = [t for n in cluster.managed if (t := node_due(cluster, n, now)) is not None]
    pools = {n.pool for n in cluster.managed if not n.deleting}
    for name in sorted(pools):
        times.extend(t for t in window_ends(cluster.pools[name], now) if t > now)
    return min(times) if times else None
