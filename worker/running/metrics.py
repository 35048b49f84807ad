"""Prometheus metrics under Karpenter's names and labels, fed by activities (through the
``Counters`` hooks) and by the watchers (gauges of what the cluster holds now).

Names, label names and label values are Karpenter v1's (``sigs.k8s.io/karpenter`` and the
AWS provider) so its dashboards and alerts read Joinery unchanged; docs/operations.md lists
each one and where Joinery differs. ``sample_names()`` is the list a dashboard may use.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, Summary

from activities.metrics import Counters, snake
from models import labels as L
from models.quantity import parse_quantity

REGISTRY = CollectorRegistry()

# Karpenter's DurationBuckets (controller-runtime's, extended for singleton controllers).
DURATION_BUCKETS = (
    *(0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7),
    *(0.8, 0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15),
    *(20, 25, 30, 40, 50, 60, 120, 150, 300, 450, 600),
)
PROVIDER = "aws"


def _counter(name: str, doc: str, labels: Iterable[str] = ()) -> Counter:
    return Counter(name, doc, list(labels), registry=REGISTRY)


def _gauge(name: str, doc: str, labels: Iterable[str] = ()) -> Gauge:
    return Gauge(name, doc, list(labels), registry=REGISTRY)


def _histogram(name: str, doc: str, labels: Iterable[str] = ()) -> Histogram:
    return Histogram(name, doc, list(labels), registry=REGISTRY, buckets=DURATION_BUCKETS)


# -- NodeClaims and Nodes -----------------------------------------------------------------
NODECLAIMS_CREATED = _counter(
    "karpenter_nodeclaims_created_total",
    "NodeClaims created, by reason (provisioned, or the disruption reason of a replacement), "
    "NodePool and whether minValues was relaxed.",
    ["reason", "nodepool", "min_values_relaxed"],
)
NODECLAIMS_LAUNCHED = _counter(
    "karpenter_nodeclaims_launched_total", "NodeClaims whose instance launched.", ["nodepool"]
)
NODECLAIMS_REGISTERED = _counter(
    "karpenter_nodeclaims_registered_total", "NodeClaims whose Node registered.", ["nodepool"]
)
NODECLAIMS_INITIALIZED = _counter(
    "karpenter_nodeclaims_initialized_total", "NodeClaims whose Node initialized.", ["nodepool"]
)
NODECLAIMS_TERMINATED = _counter(
    "karpenter_nodeclaims_terminated_total",
    "NodeClaims terminated, by NodePool, capacity type, zone and the reason they went.",
    ["nodepool", "capacity_type", "zone", "reason"],
)
NODECLAIMS_DISRUPTED = _counter(
    "karpenter_nodeclaims_disrupted_total",
    "NodeClaims disrupted, by reason (empty, underutilized, drifted, expired, interruption "
    "kinds), NodePool and capacity type.",
    ["reason", "nodepool", "capacity_type"],
)
NODES_CREATED = _counter(
    "karpenter_nodes_created_total", "Nodes registered, by NodePool and zone.", ["nodepool", "zone"]
)
NODES_TERMINATED = _counter(
    "karpenter_nodes_terminated_total",
    "Nodes terminated, by NodePool and zone.",
    ["nodepool", "zone"],
)
EVICTION_REQUESTS = _counter(
    "karpenter_nodes_eviction_requests_total",
    "Eviction requests that evicted a pod while draining nodes, by response code.",
    ["code"],
)
NODE_LABELS = ("node_name", "nodepool", "instance_type", "capacity_type", "zone", "arch")
NODES_ALLOCATABLE = _gauge(
    "karpenter_nodes_allocatable",
    "Resources allocatable by each node (cpu in cores, others in units), by node, its "
    "well-known labels and resource type.",
    [*NODE_LABELS, "resource_type"],
)
NODE_COUNT = _gauge("karpenter_cluster_state_node_count", "Nodes the worker's watchers see.")

# -- Pods ---------------------------------------------------------------------------------
PODS_STATE = _gauge(
    "karpenter_pods_state",
    "Pods by state (1 per pod), as Karpenter reports them.",
    ["name", "namespace", "node", "phase"],
)
PODS_STARTUP = Summary(
    "karpenter_pods_startup_duration_seconds",
    "Time from a pod's creation until it is Ready, for pods seen Pending.",
    registry=REGISTRY,
)
PROVISIONING_SIGNALS = _counter(
    "joinery_provisioning_signals_total",
    "Signals sent to the provisioning workflow (pods became unschedulable).",
)

# -- Provisioning -------------------------------------------------------------------------
SCHEDULING_DURATION = _histogram(
    "karpenter_scheduler_scheduling_duration_seconds",
    "Duration of scheduling simulations (the solve) for provisioning and disruption.",
    ["controller"],
)
QUEUE_DEPTH = _gauge(
    "karpenter_scheduler_queue_depth",
    "Pods the last scheduling simulation tried to place.",
    ["controller", "scheduling_id"],
)
UNSCHEDULABLE_PODS = _gauge(
    "karpenter_scheduler_unschedulable_pods_count",
    "Pods the last scheduling simulation could not place.",
    ["controller"],
)

# -- Disruption ---------------------------------------------------------------------------
DECISIONS = _counter(
    "karpenter_voluntary_disruption_decisions_total",
    "Disruption commands started, by decision (delete, replace), reason and consolidation type.",
    ["decision", "reason", "consolidation_type"],
)
DECISIONS_BY_POOL = _counter(
    "karpenter_voluntary_disruption_decisions_by_nodepool_total",
    "Disruption commands started, by NodePool, decision, reason and consolidation type.",
    ["nodepool", "decision", "reason", "consolidation_type"],
)
QUEUE_FAILURES = _counter(
    "karpenter_voluntary_disruption_queue_failures_total",
    "Started disruption commands that failed and were undone.",
    ["decision", "reason", "consolidation_type"],
)
ELIGIBLE_NODES = _gauge(
    "karpenter_voluntary_disruption_eligible_nodes",
    "Nodes eligible for disruption in the last round, by reason.",
    ["reason"],
)
EVALUATION_DURATION = _histogram(
    "karpenter_voluntary_disruption_decision_evaluation_duration_seconds",
    "Duration of a disruption round's decision (every method at once: reason 'all').",
    ["reason", "consolidation_type"],
)
ALLOWED_DISRUPTIONS = _gauge(
    "karpenter_nodepools_allowed_disruptions",
    "Nodes of a NodePool that may be disrupting at once now, by reason (from its budgets).",
    ["nodepool", "reason"],
)

# -- NodePools ----------------------------------------------------------------------------
POOL_USAGE = _gauge(
    "karpenter_nodepools_usage",
    "Resources provisioned for a NodePool (its status.resources).",
    ["nodepool", "resource_type"],
)
POOL_LIMIT = _gauge(
    "karpenter_nodepools_limit",
    "A NodePool's spec.limits.",
    ["nodepool", "resource_type"],
)

# -- Cloud provider and interruption ------------------------------------------------------
CLOUDPROVIDER_DURATION = Histogram(
    "karpenter_cloudprovider_duration_seconds",
    "Duration of cloud provider calls, by caller, method and provider.",
    ["controller", "method", "provider"],
    registry=REGISTRY,
)
CLOUDPROVIDER_ERRORS = _counter(
    "karpenter_cloudprovider_errors_total",
    "Cloud provider calls that failed, by caller, method, provider and error type.",
    ["controller", "method", "provider", "error"],
)
INTERRUPTION_RECEIVED = _counter(
    "karpenter_interruption_received_messages_total",
    "Messages received from the interruption queue, by message type.",
    ["message_type"],
)
INTERRUPTION_DELETED = _counter(
    "karpenter_interruption_deleted_messages_total",
    "Messages deleted from the interruption queue.",
)
INTERRUPTION_ACTIONS = _counter(
    "karpenter_interruption_actions_performed_total",
    "Actions taken on interruption messages (CordonAndDrain, NoAction).",
    ["action_type"],
)


def _caller() -> str:
    """The Temporal activity making a call, as Karpenter names the controller."""
    from temporalio import activity

    return activity.info().activity_type if activity.in_activity() else "worker"


class PrometheusCounters(Counters):
    def nodeclaim_created(
        self, nodepool: str, reason: str = "provisioned", min_values_relaxed: bool = False
    ) -> None:
        relaxed = "true" if min_values_relaxed else "false"  # MIN_VALUES_POLICY=BestEffort
        NODECLAIMS_CREATED.labels(snake(reason), nodepool, relaxed).inc()

    def nodeclaim_launched(self, nodepool: str) -> None:
        NODECLAIMS_LAUNCHED.labels(nodepool).inc()

    def nodeclaim_registered(self, nodepool: str) -> None:
        NODECLAIMS_REGISTERED.labels(nodepool).inc()

    def nodeclaim_initialized(self, nodepool: str) -> None:
        NODECLAIMS_INITIALIZED.labels(nodepool).inc()

    def nodeclaim_terminated(
        self, nodepool: str, reason: str, capacity_type: str = "", zone: str = ""
    ) -> None:
        NODECLAIMS_TERMINATED.labels(nodepool, capacity_type, zone, snake(reason)).inc()

    def nodeclaim_disrupted(self, nodepool: str, reason: str, capacity_type: str = "") -> None:
        NODECLAIMS_DISRUPTED.labels(snake(reason), nodepool, capacity_type).inc()

    def node_created(self, nodepool: str, zone: str = "") -> None:
        NODES_CREATED.labels(nodepool, zone).inc()

    def node_terminated(self, nodepool: str, zone: str = "") -> None:
        NODES_TERMINATED.labels(nodepool, zone).inc()

    def pods_evicted(self, count: int) -> None:
        EVICTION_REQUESTS.labels("200").inc(count)

    def scheduling(self, controller: str, seconds: float, queued: int, unschedulable: int) -> None:
        SCHEDULING_DURATION.labels(controller).observe(seconds)
        QUEUE_DEPTH.labels(controller, "").set(queued)
        UNSCHEDULABLE_PODS.labels(controller).set(unschedulable)

    def disruption_evaluated(
        self,
        seconds: float,
        eligible: Mapping[str, int],
        allowed: Mapping[tuple[str, str], int],
    ) -> None:
        EVALUATION_DURATION.labels("all", "").observe(seconds)
        for reason, count in eligible.items():
            ELIGIBLE_NODES.labels(snake(reason)).set(count)
        ALLOWED_DISRUPTIONS.clear()  # a deleted pool's series go with it
        for (pool, reason), count in allowed.items():
            ALLOWED_DISRUPTIONS.labels(pool, snake(reason)).set(count)

    def disruption_decision(
        self, decision: str, reason: str, consolidation_type: str, pools: list[str]
    ) -> None:
        DECISIONS.labels(decision, snake(reason), consolidation_type).inc()
        for pool in pools:
            DECISIONS_BY_POOL.labels(pool, decision, snake(reason), consolidation_type).inc()

    def disruption_failed(self, decision: str, reason: str, consolidation_type: str) -> None:
        QUEUE_FAILURES.labels(decision, snake(reason), consolidation_type).inc()

    def cloudprovider_call(self, method: str, seconds: float, error: str | None) -> None:
        caller = _caller()
        CLOUDPROVIDER_DURATION.labels(caller, method, PROVIDER).observe(seconds)
        if error is not None:
            CLOUDPROVIDER_ERRORS.labels(caller, method, PROVIDER, error).inc()


def interruption_received(message_type: str) -> None:
    INTERRUPTION_RECEIVED.labels(snake(message_type)).inc()


def interruption_deleted() -> None:
    INTERRUPTION_DELETED.inc()


def interruption_action(action_type: str) -> None:
    INTERRUPTION_ACTIONS.labels(action_type).inc()


def resource_type(name: str) -> str:
    """As Karpenter labels resources: ``ephemeral-storage`` → ``ephemeral_storage``."""
    return name.lower().replace("-", "_")


def _amounts(resources: Mapping[str, Any] | None) -> dict[str, float]:
    """Quantities as Karpenter reports them: cpu in cores, everything else in units."""
    out: dict[str, float] = {}
    for name, quantity in (resources or {}).items():
        try:
            # parse_quantity counts thousandths (cpu "1500m" is 1500)
            out[resource_type(str(name))] = parse_quantity(str(quantity)) / 1000
        except (ValueError, ArithmeticError):
            continue
    return out


class PodStates:
    """Keeps ``karpenter_pods_state`` to one series per live pod, and observes
    ``karpenter_pods_startup_duration_seconds`` once for each pod seen Pending that became
    Ready (creation → the Ready condition's transition), as Karpenter does."""

    def __init__(self) -> None:
        self._series: dict[tuple[str, str], tuple[str, str, str, str]] = {}
        self._pending: set[tuple[str, str]] = set()

    def set(self, namespace: str, name: str, node: str, phase: str) -> None:
        labels = (name, namespace, node, phase)
        old = self._series.get((namespace, name))
        if old == labels:
            return
        if old is not None:
            PODS_STATE.remove(*old)
        PODS_STATE.labels(*labels).set(1)
        self._series[(namespace, name)] = labels

    def update(self, pod: Mapping[str, Any]) -> None:
        meta = pod.get("metadata") or {}
        status = pod.get("status") or {}
        key = (str(meta.get("namespace")), str(meta.get("name")))
        node = str((pod.get("spec") or {}).get("nodeName") or "")
        phase = str(status.get("phase") or "Unknown")
        self.set(*key, node, phase)
        if phase == "Pending":
            self._pending.add(key)
            return
        ready = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), None)
        if key in self._pending and ready is not None and ready.get("status") == "True":
            self._pending.discard(key)
            started = _time(ready.get("lastTransitionTime"))
            created = _time(meta.get("creationTimestamp"))
            if started is not None and created is not None:
                PODS_STARTUP.observe(max(0.0, (started - created).total_seconds()))

    def delete(self, namespace: str, name: str) -> None:
        self._pending.discard((namespace, name))
        old = self._series.pop((namespace, name), None)
        if old is not None:
            PODS_STATE.remove(*old)


class NodeStates:
    """``karpenter_nodes_allocatable`` per node and ``karpenter_cluster_state_node_count``."""

    def __init__(self) -> None:
        self._series: dict[str, list[tuple[str, ...]]] = {}

    def update(self, node: Mapping[str, Any]) -> None:
        meta = node.get("metadata") or {}
        name = str(meta.get("name"))
        labels = meta.get("labels") or {}
        fixed = (
            name,
            str(labels.get(L.NODEPOOL, "")),
            str(labels.get(L.INSTANCE_TYPE, "")),
            str(labels.get(L.CAPACITY_TYPE, "")),
            str(labels.get(L.ZONE, "")),
            str(labels.get(L.ARCH, "")),
        )
        allocatable = _amounts((node.get("status") or {}).get("allocatable"))
        wanted: list[tuple[str, ...]] = [(*fixed, r) for r in sorted(allocatable)]
        for old in self._series.get(name, []):
            if old not in wanted:
                NODES_ALLOCATABLE.remove(*old)
        for series in wanted:
            NODES_ALLOCATABLE.labels(*series).set(allocatable[series[-1]])
        self._series[name] = wanted
        NODE_COUNT.set(len(self._series))

    def delete(self, name: str) -> None:
        for old in self._series.pop(name, []):
            NODES_ALLOCATABLE.remove(*old)
        NODE_COUNT.set(len(self._series))


class PoolStates:
    """``karpenter_nodepools_usage`` (status.resources) and ``karpenter_nodepools_limit``
    (spec.limits) per NodePool, gone with the pool."""

    def __init__(self) -> None:
        self._series: dict[str, list[tuple[Gauge, str]]] = {}

    def update(self, pool: Mapping[str, Any]) -> None:
        name = str((pool.get("metadata") or {}).get("name"))
        status = pool.get("status") or {}
        usage = _amounts(status.get("resources"))
        if "nodes" not in usage and isinstance(status.get("nodes"), int):
            usage["nodes"] = float(status["nodes"])  # as Karpenter v1 counts nodes in resources
        limits = _amounts((pool.get("spec") or {}).get("limits"))
        self.delete(name)
        series: list[tuple[Gauge, str]] = []
        for gauge, amounts in ((POOL_USAGE, usage), (POOL_LIMIT, limits)):
            for resource, amount in amounts.items():
                gauge.labels(name, resource).set(amount)
                series.append((gauge, resource))
        self._series[name] = series

    def delete(self, name: str) -> None:
        for gauge, resource in self._series.pop(name, []):
            gauge.remove(name, resource)


def _time(text: object) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


SUFFIXES = {
    "counter": ("_total", "_created"),
    "gauge": ("",),
    "histogram": ("_bucket", "_sum", "_count", "_created"),
    "summary": ("_sum", "_count", "_created"),
}


def sample_names() -> set[str]:
    """Every series name ``/metrics`` can carry from this registry (counters with
    ``_total``, histograms with ``_bucket``/``_sum``/``_count``): what dashboards may use."""
    out: set[str] = set()
    for family in REGISTRY.collect():
        out.update(family.name + s for s in SUFFIXES.get(family.type, ("",)))
    return out
