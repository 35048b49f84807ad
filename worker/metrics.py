"""Prometheus metrics under Karpenter's names where they fit, fed by activities and watchers."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge

from activities.lifecycle.common import Counters

REGISTRY = CollectorRegistry()

NODECLAIMS_CREATED = Counter(
    "karpenter_nodeclaims_created_total",
    "NodeClaims created, by NodePool.",
    ["nodepool"],
    registry=REGISTRY,
)
NODECLAIMS_TERMINATED = Counter(
    "karpenter_nodeclaims_terminated_total",
    "NodeClaims terminated, by NodePool and reason.",
    ["nodepool", "reason"],
    registry=REGISTRY,
)
NODES_CREATED = Counter(
    "karpenter_nodes_created_total",
    "Nodes registered, by NodePool.",
    ["nodepool"],
    registry=REGISTRY,
)
NODES_TERMINATED = Counter(
    "karpenter_nodes_terminated_total",
    "Nodes terminated, by NodePool.",
    ["nodepool"],
    registry=REGISTRY,
)
PODS_EVICTED = Counter(
    "karpenter_pods_evicted_total", "Pods evicted while draining nodes.", registry=REGISTRY
)
PODS_STATE = Gauge(
    "karpenter_pods_state",
    "Pods by state (1 per pod), as Karpenter reports them.",
    ["name", "namespace", "node", "phase"],
    registry=REGISTRY,
)
PROVISIONING_SIGNALS = Counter(
    "joinery_provisioning_signals_total",
    "Signals sent to the provisioning workflow (pods became unschedulable).",
    registry=REGISTRY,
)


class PrometheusCounters(Counters):
    def nodeclaim_created(self, nodepool: str) -> None:
        NODECLAIMS_CREATED.labels(nodepool).inc()

    def nodeclaim_terminated(self, nodepool: str, reason: str) -> None:
        NODECLAIMS_TERMINATED.labels(nodepool, reason).inc()

    def node_created(self, nodepool: str) -> None:
        NODES_CREATED.labels(nodepool).inc()

    def node_terminated(self, nodepool: str) -> None:
        NODES_TERMINATED.labels(nodepool).inc()

    def pods_evicted(self, count: int) -> None:
        PODS_EVICTED.inc(count)


class PodStates:
    """Keeps ``karpenter_pods_state`` to one series per live pod."""

    def __init__(self) -> None:
        self._series: dict[tuple[str, str], tuple[str, str, str, str]] = {}

    def set(self, namespace: str, name: str, node: str, phase: str) -> None:
        labels = (name, namespace, node, phase)
        old = self._series.get((namespace, name))
        if old == labels:
            return
        if old is not None:
            PODS_STATE.remove(*old)
        PODS_STATE.labels(*labels).set(1)
        self._series[(namespace, name)] = labels

    def delete(self, namespace: str, name: str) -> None:
        old = self._series.pop((namespace, name), None)
        if old is not None:
            PODS_STATE.remove(*old)
