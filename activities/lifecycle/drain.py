"""Drain: move the pods off a node that is going away, in Karpenter's order.

Pods leave through the eviction API (so PodDisruptionBudgets are honoured) in four groups:
non-critical, non-critical DaemonSet, critical, critical DaemonSet; a group starts only when
the ones before it are gone. Left alone: pods that tolerate ``karpenter.sh/disrupted``,
mirror (static) pods and finished pods. ``karpenter.sh/do-not-disrupt`` pods are never
evicted. When the claim's terminationGracePeriod is about to run out, each remaining pod is
deleted early enough that its own grace period ends by the node's deadline.

One call is one pass; the workflow calls again after a backoff, so a PDB that blocks for an
hour costs timers, not a pinned activity slot. A Node that no longer exists has nothing to
drain, as in Karpenter, whose drain runs only on a Node it holds: the pods still bound to its
name are the pod garbage collector's, and their PodDisruptionBudgets would block forever.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from activities.deps import Deps
from activities.kubernetes import conditions as cond
from activities.kubernetes import events, eviction, nodeclaims, nodes, pods
from activities.kubernetes.errors import EvictionBlocked, NotFound
from activities.kubernetes.retries import retry_conflicts
from activities.lifecycle import events as lifecycle_events
from activities.lifecycle.types import BlockedPod, DrainInput, DrainStatus
from activities.timestamps import parse_iso, utc_now
from models import conditions
from models import labels as L

CRITICAL_PRIORITY_CLASSES = frozenset({"system-cluster-critical", "system-node-critical"})
PDB_VIOLATION = "PDBViolation"


def key(pod: dict[str, Any]) -> str:
    meta = pod["metadata"]
    return f"{meta['namespace']}/{meta['name']}"


def tolerates_disrupted(pod: dict[str, Any]) -> bool:
    for t in (pod.get("spec") or {}).get("tolerations") or []:
        effect = t.get("effect") or ""
        if effect not in ("", "NoSchedule"):
            continue
        if t.get("operator") == "Exists" and not t.get("key"):
            return True
        if t.get("key") == L.DISRUPTED_TAINT_KEY:
            return True
    return False


def group_of(pod: dict[str, Any]) -> int:
    """0 non-critical, 1 non-critical DaemonSet, 2 critical, 3 critical DaemonSet."""
    critical = (pod.get("spec") or {}).get("priorityClassName") in CRITICAL_PRIORITY_CLASSES
    return (2 if critical else 0) + (1 if pods.is_daemonset_pod(pod) else 0)


def grace_seconds(pod: dict[str, Any]) -> float:
    value = (pod.get("spec") or {}).get("terminationGracePeriodSeconds")
    return float(value) if value is not None else 30.0


def held(pod: dict[str, Any]) -> bool:
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    return annotations.get(L.DO_NOT_DISRUPT) == "true"


def drain_pass(
    deps: Deps,
    inp: DrainInput,
    *,
    now: datetime | None = None,
    already_evicted: Iterable[str] = (),
    heartbeat: Callable[[list[str]], None] = lambda _done: None,
) -> DrainStatus:
    moment = now or utc_now()
    deadline = parse_iso(inp.grace_deadline) if inp.grace_deadline else None
    status = DrainStatus(done=False)
    resumed = set(already_evicted)
    groups: list[list[dict[str, Any]]] = [[], [], [], []]
    try:
        nodes.get(deps.kube, inp.node_name)
    except NotFound:
        # e.g. a workflow task that finalized a dead node was lost and is run again
        status.done = True
        _report(deps, inp, status)
        return status
    for pod in pods.on_node(deps.kube, inp.node_name):
        if pods.is_terminal(pod) or pods.is_mirror_pod(pod) or tolerates_disrupted(pod):
            continue
        k = key(pod)
        meta = pod["metadata"]
        if deadline is not None:
            left = (deadline - moment).total_seconds()
            if left <= grace_seconds(pod):
                if pods.delete(
                    deps.kube,
                    meta["namespace"],
                    meta["name"],
                    grace_period_seconds=max(0, int(left)),
                    uid=meta.get("uid"),
                ):
                    status.deleted.append(k)
                    lifecycle_events.disrupted(
                        deps.kube, pod, max(0, int(left)), inp.grace_deadline or ""
                    )
                continue
        if meta.get("deletionTimestamp") or k in resumed:
            status.waiting.append(k)
            continue
        if held(pod):
            status.held.append(k)
            continue
        groups[group_of(pod)].append(pod)
    evicting = next((i for i, g in enumerate(groups) if g), None)
    evicted: list[dict[str, Any]] = []
    for i, group in enumerate(groups):
        if i != evicting:
            status.waiting.extend(key(p) for p in group)
            continue
        for pod in group:
            try:
                if eviction.evict(deps.kube, pod):
                    status.evicted.append(key(pod))
                    evicted.append(pod)
                    heartbeat([*resumed, *status.evicted])
            except EvictionBlocked as exc:
                status.blocked.append(BlockedPod(exc.pod, list(exc.pdbs)))
    status.done = not (
        status.evicted or status.waiting or status.blocked or status.held or status.deleted
    )
    if status.evicted:
        deps.counters.pods_evicted(len(status.evicted))
    if status.blocked:
        deps.counters.pods_evicted(len(status.blocked), code="429")
    reported = _report(deps, inp, status)
    if reported is not None and (status.evicted or status.done):
        claim, changed = reported
        labels = (claim.get("metadata") or {}).get("labels") or {}
        why = cond.find(
            (claim.get("status") or {}).get("conditions") or [], conditions.DISRUPTION_REASON
        )
        reason = str((why or {}).get("reason") or "Deleted")
        if status.evicted:
            deps.counters.pods_drained(reason, len(status.evicted))
            lifecycle_events.evicted(deps.kube, evicted, reason)
        if status.done and changed:  # once: when Drained turns True
            deps.counters.node_drained(str(labels.get(L.NODEPOOL) or ""))
    return status


def _report(deps: Deps, inp: DrainInput, status: DrainStatus) -> tuple[dict[str, Any], bool] | None:
    """Drained condition on the claim; an event when a PDB blocks. Returns the claim as
    read and whether the condition changed (None when the claim is gone)."""
    if status.done:
        c = cond.Condition(conditions.DRAINED, "True", conditions.DRAINED)
    elif status.blocked:
        first = status.blocked[0]
        budgets = ", ".join(first.pdbs) or "a PodDisruptionBudget"
        more = f" (+{len(status.blocked) - 1} more)" if len(status.blocked) > 1 else ""
        c = cond.Condition(
            conditions.DRAINED,
            "False",
            PDB_VIOLATION,
            f"evicting {first.pod} violates {budgets}{more}",
        )
    elif status.held:
        c = cond.Condition(
            conditions.DRAINED,
            "False",
            "DoNotDisrupt",
            f"{len(status.held)} pod(s) with {L.DO_NOT_DISRUPT}, e.g. {status.held[0]}",
        )
    else:
        left = len(status.evicted) + len(status.waiting) + len(status.deleted)
        c = cond.Condition(conditions.DRAINED, "False", "Draining", f"{left} pod(s) leaving")

    read: dict[str, Any] = {}

    def write() -> bool:
        claim = nodeclaims.get(deps.kube, inp.nodeclaim)
        read.clear()
        read.update(claim)
        current = cond.find((claim.get("status") or {}).get("conditions") or [], conditions.DRAINED)
        if current is not None and (current.get("reason"), current.get("message")) == (
            c.reason,
            c.message,
        ):
            return False
        nodeclaims.set_conditions(deps.kube, claim, [c])
        return True

    try:
        changed = retry_conflicts(write)
    except NotFound:
        return None
    if changed and c.reason == PDB_VIOLATION:
        events.record(
            deps.kube,
            kind="NodeClaim",
            name=inp.nodeclaim,
            reason="FailedDraining",
            message=c.message,
            warning=True,
        )
    return read, changed
