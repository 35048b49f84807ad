"""What the watchers hand the metrics: each Node, Pod and NodePool as it changes.

Nodes and pods go into the scrape-time view (``worker/running/cluster_metrics.py``); the
durations Karpenter observes on a pod's transitions are observed here, when the watcher
sees the transition: created → bound (``karpenter_pods_bound_duration_seconds``), created
→ Ready (``karpenter_pods_startup_duration_seconds``), and the same from the provisioning
round that placed the pod (``karpenter_pods_provisioning_*_duration_seconds``), each once,
for pods seen before the transition.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from prometheus_client import Gauge

from worker.running import metrics as M
from worker.running.cluster_metrics import VIEW, ClusterView, _node_info, _pod_info, amounts


def _since(moment: datetime | None, later: datetime | None) -> float | None:
    if moment is None or later is None:
        return None
    return max(0.0, (later - moment).total_seconds())


def _transition(pod: Mapping[str, Any], kind: str) -> datetime | None:
    status = pod.get("status") or {}
    for c in status.get("conditions") or []:
        if c.get("type") == kind and c.get("status") == "True":
            text = str(c.get("lastTransitionTime") or "")
            try:
                return datetime.fromisoformat(text.replace("Z", "+00:00"))
            except ValueError:
                return None
    return None


class PodStates:
    """Pods into the view, and the durations of their transitions (see the module)."""

    def __init__(self, view: ClusterView = VIEW) -> None:
        self._view = view
        self._pending: set[tuple[str, str]] = set()
        self._unbound: set[tuple[str, str]] = set()

    def acked(self, namespace: str, name: str) -> None:
        """The watcher saw the pod unschedulable (the provisioner will consider it)."""
        with self._view.lock:
            self._view.acked.setdefault((namespace, name), time.monotonic())

    def update(self, pod: Mapping[str, Any]) -> None:
        info = _pod_info(pod)
        key = (info.namespace, info.name)
        with self._view.lock:
            self._view.pods[key] = info
            placed = self._view.placed.get(key)
        # the monotonic moment the round placed the pod, as a wall-clock time
        placed_at = (
            datetime.fromtimestamp(time.time() - (time.monotonic() - placed), UTC)
            if placed is not None
            else None
        )
        if info.phase == "Pending" and not info.scheduled:
            self._unbound.add(key)
        elif key in self._unbound and info.scheduled:
            self._unbound.discard(key)
            bound = _transition(pod, "PodScheduled")
            if (seconds := _since(info.created, bound)) is not None:
                M.PODS_BOUND_DURATION.observe(seconds)
            if (seconds := _since(placed_at, bound)) is not None:
                M.PODS_PROVISIONING_BOUND.observe(seconds)
        if info.phase == "Pending":
            self._pending.add(key)
            return
        if key in self._pending and (info.ready or info.phase in ("Succeeded", "Failed")):
            self._pending.discard(key)
            self._forget(key)
            if not info.ready:
                return  # a terminal pod never started: no startup to count
            ready = _transition(pod, "Ready")
            if (seconds := _since(info.created, ready)) is not None:
                M.PODS_STARTUP.observe(seconds)
            if (seconds := _since(placed_at, ready)) is not None:
                M.PODS_PROVISIONING_STARTUP.observe(seconds)

    def _forget(self, key: tuple[str, str]) -> None:
        with self._view.lock:
            for times in (self._view.acked, self._view.decided, self._view.placed):
                times.pop(key, None)

    def delete(self, namespace: str, name: str) -> None:
        key = (namespace, name)
        self._pending.discard(key)
        self._unbound.discard(key)
        with self._view.lock:
            self._view.pods.pop(key, None)
        self._forget(key)


class NodeStates:
    """Nodes into the view (``karpenter_nodes_*``, ``karpenter_cluster_*``)."""

    def __init__(self, view: ClusterView = VIEW) -> None:
        self._view = view

    def update(self, node: Mapping[str, Any]) -> None:
        name = str((node.get("metadata") or {}).get("name"))
        info = _node_info(node)
        with self._view.lock:
            self._view.nodes[name] = info

    def delete(self, name: str) -> None:
        with self._view.lock:
            self._view.nodes.pop(name, None)


class PoolStates:
    """``karpenter_nodepools_usage`` (status.resources) and ``karpenter_nodepools_limit``
    (spec.limits) per NodePool, gone with the pool."""

    def __init__(self) -> None:
        self._series: dict[str, list[tuple[Gauge, str]]] = {}

    def update(self, pool: Mapping[str, Any]) -> None:
        name = str((pool.get("metadata") or {}).get("name"))
        status = pool.get("status") or {}
        usage = amounts(status.get("resources"))
        if "nodes" not in usage and isinstance(status.get("nodes"), int):
            usage["nodes"] = float(status["nodes"])  # as Karpenter v1 counts nodes in resources
        limits = amounts((pool.get("spec") or {}).get("limits"))
        self.delete(name)
        series: list[tuple[Gauge, str]] = []
        for gauge, values in ((M.POOL_USAGE, usage), (M.POOL_LIMIT, limits)):
            for resource, amount in values.items():
                gauge.labels(name, resource).set(amount)
                series.append((gauge, resource))
        self._series[name] = series

    def delete(self, name: str) -> None:
        for gauge, resource in self._series.pop(name, []):
            gauge.remove(name, resource)
