"""Which managed nodes a round may disrupt, and a one-line reason for each that it may not.

The checks run in a fixed order and the first that holds is the node's reason, so every
blocked node is listed once: deleting, not initialized, ``karpenter.sh/do-not-disrupt`` on
the node, nominated for pending pods, ``consolidateAfter`` (``Never``, or not yet elapsed
since the later of the claim's creation and its last pod event), a pod that must not be
disrupted (``do-not-disrupt`` "true", or a duration not yet elapsed since the pod started),
a pod whose PodDisruptionBudgets allow no eviction, and a pool whose budget allows nothing.

``consolidateAfter`` gates ``Empty`` and ``Underutilized`` only, as in Karpenter (only its
consolidation methods require the Consolidatable condition): a drifted node inside the window
stays a candidate, carrying the window as its ``consolidation_hold`` so that only the Drifted
method may take it, and a pool with ``consolidateAfter: Never`` still rolls drifted nodes.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from models import labels as L
from models.duration import NEVER, parse_duration
from models.nodepool import NodePool
from scheduling.disruption.budgets import BudgetLedger
from scheduling.disruption.cluster import ClusterView, PodFacts
from scheduling.disruption.costs import disruption_cost, lifetime_remaining
from scheduling.disruption.drift_reasons import node_drift
from scheduling.disruption.pdb import PdbLedger
from scheduling.disruption.types import Candidate, ManagedNode, NodeVerdict
from scheduling.pods import Pod


def _ago(delta: timedelta) -> str:
    secs = int(max(0.0, delta.total_seconds()))
    if secs >= 3600:
        return f"{secs // 3600}h{secs % 3600 // 60}m"
    if secs >= 60:
        return f"{secs // 60}m{secs % 60}s"
    return f"{secs}s"


def must_move(pods: list[Pod], facts: Mapping[str, PodFacts]) -> list[Pod]:
    """The pods a disruption evicts and the scheduler must place again: not DaemonSet, not
    mirror, not already deleting (terminal pods were dropped when the inputs were read)."""
    out = []
    for p in pods:
        f = facts.get(p.key)
        if p.is_daemonset or p.deleting or (f is not None and f.mirror):
            continue
        out.append(p)
    return out


def pod_do_not_disrupt(pod: Pod, facts: PodFacts | None, now: datetime) -> str | None:
    """Why ``pod``'s ``karpenter.sh/do-not-disrupt`` annotation holds its node now, or None."""
    value = (facts.annotations if facts else {}).get(L.DO_NOT_DISRUPT)
    if value is None:
        return None
    if value == "true":
        return f'pod {pod.key} has {L.DO_NOT_DISRUPT}: "true"'
    try:
        hold = parse_duration(value)
    except ValueError:
        return None  # neither "true" nor a duration: Karpenter ignores it
    started = facts.started if facts else None
    if started is None or now < started + timedelta(seconds=hold):
        return f'pod {pod.key} has {L.DO_NOT_DISRUPT}: "{value}", not yet elapsed since it started'
    return None


def _consolidate_after(node: ManagedNode, pool: NodePool, now: datetime) -> str | None:
    after = pool.spec.disruption.consolidate_after
    if after == NEVER:
        return f"nodepool {pool.name} has consolidateAfter: Never"
    wait = timedelta(seconds=parse_duration(after))
    stamps = [t for t in (node.created, node.last_pod_event) if t is not None]
    if not stamps or wait.total_seconds() <= 0:
        return None
    since = max(stamps)
    if now - since < wait:
        what = "last pod event" if since == node.last_pod_event else "created"
        return (
            f"{what} {_ago(now - since)} ago, consolidateAfter is {after} "
            f"(disruptable in {_ago(since + wait - now)})"
        )
    return None


def _pod_blocks(
    pods: list[Pod],
    moving: list[Pod],
    facts: Mapping[str, PodFacts],
    pdbs: PdbLedger,
    now: datetime,
) -> str | None:
    """The first pod that holds its node: a do-not-disrupt pod (any running pod, DaemonSet
    ones too), else a pod to be evicted whose PodDisruptionBudgets refuse it."""
    for p in pods:
        if not p.deleting and (r := pod_do_not_disrupt(p, facts.get(p.key), now)):
            return r
    return next((r for p in moving if (r := pdbs.blocking(p))), None)


def classify(
    cluster: ClusterView,
    nominated: Mapping[str, list[str]],
    budgets: BudgetLedger,
    pdbs: PdbLedger,
    now: datetime,
) -> tuple[list[Candidate], list[NodeVerdict]]:
    """Split the managed nodes into candidates and blocked nodes (each once, by name).

    ``nominated`` maps a node to the pending pods the plan puts on it now; drift is checked
    against the node's own pool's catalog."""
    candidates: list[Candidate] = []
    blocked: list[NodeVerdict] = []
    for node in cluster.managed:
        pool = cluster.pools[node.pool]
        pods = cluster.node_pods.get(node.name, [])
        moving = must_move(pods, cluster.pods)
        reason: str | None = None
        hold: str | None = None
        drifted: str | None = None
        if node.deleting:
            reason = "being deleted"
        elif not node.initialized:
            reason = f'not initialized (no {L.NODE_INITIALIZED}: "true" label)'
        elif cluster.node_annotations.get(node.name, {}).get(L.DO_NOT_DISRUPT) == "true":
            reason = f'node has {L.DO_NOT_DISRUPT}: "true"'
        elif nominated.get(node.name):
            names = nominated[node.name]
            more = f" and {len(names) - 1} more" if len(names) > 1 else ""
            reason = f"nominated for pending pod {names[0]}{more}"
        elif hold := _consolidate_after(node, pool, now):
            drifted = node_drift(cluster, node, pool, now)
            if drifted is None:
                reason = hold
        if reason is None:
            reason = _pod_blocks(pods, moving, cluster.pods, pdbs, now)
        if reason is None and budgets.exhausted(node.pool):
            reason = budgets.describe(node.pool)
        if reason is not None:
            blocked.append(NodeVerdict(node.name, reason))
            continue
        claim = cluster.claims[node.name]
        expire = claim.expire_after or pool.spec.template.spec.expire_after
        remaining = lifetime_remaining(node.created, expire, now)
        annotations = {
            p.key: cluster.pods[p.key].annotations for p in moving if p.key in cluster.pods
        }
        candidates.append(
            Candidate(
                node=node,
                pods=tuple(moving),
                disruption_cost=disruption_cost(moving, annotations, remaining),
                drifted=drifted if hold else node_drift(cluster, node, pool, now),
                consolidation_hold=hold,
            )
        )
    return candidates, blocked
