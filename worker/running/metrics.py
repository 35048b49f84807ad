"""Prometheus metrics under Karpenter's names and labels, fed by activities (through the
``Counters`` hooks) and by the watchers (``worker/running/watch_metrics.py``, and the
scrape-time gauges of ``worker/running/cluster_metrics.py``).

Names, types, label names and label values are Karpenter v1.14's (``sigs.k8s.io/karpenter``
and the AWS provider) so its dashboards and alerts read Joinery unchanged;
docs/operations.md lists each one and where Joinery differs, and
tests/unit/worker/karpenter_metrics.py holds the reference list the worker is checked
against. ``sample_names()`` is the list a dashboard may use.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from activities.cloud.provider import CloudProvider
from activities.metrics import Counters, snake
from worker.running.cluster_metrics import VIEW, ClusterCollector, Offering
from worker.running.quantiles import QuantileSummary

REGISTRY = CollectorRegistry()
CLUSTER = ClusterCollector(VIEW)
REGISTRY.register(CLUSTER)

# Karpenter's DurationBuckets (controller-runtime's, extended for singleton controllers).
DURATION_BUCKETS = (
    *(0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7),
    *(0.8, 0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15),
    *(20, 25, 30, 40, 50, 60, 120, 150, 300, 450, 600),
)
EXPONENTIAL_11 = tuple(float(2**i) for i in range(11))  # 1 s .. 1024 s
EXPONENTIAL_12 = tuple(float(2**i) for i in range(12))  # 1 s .. 2048 s
_HOUR, _DAY = 3600.0, 86400.0
LIFETIME_BUCKETS = (
    *(900.0, 1800.0, 2700.0, _HOUR, 2 * _HOUR, 4 * _HOUR, 6 * _HOUR, 8 * _HOUR, 10 * _HOUR),
    *(12 * _HOUR, 16 * _HOUR, 20 * _HOUR, _DAY, 2 * _DAY, 3 * _DAY, 5 * _DAY, 10 * _DAY),
    *(15 * _DAY, 20 * _DAY, 25 * _DAY, 30 * _DAY),
)
SIZE_BUCKETS = (
    *(1, 2, 4, 5, 10, 15, 20, 25, 30, 40, 50, 60, 70, 80, 90, 100, 125, 150, 175, 200),
    *(225, 250, 275, 300, 350, 400, 450, 500, 550, 600, 700, 800, 900, 1000),
)
PROVIDER = "aws"


def _counter(name: str, doc: str, labels: Iterable[str] = ()) -> Counter:
    return Counter(name, doc, list(labels), registry=REGISTRY)


def _gauge(name: str, doc: str, labels: Iterable[str] = ()) -> Gauge:
    return Gauge(name, doc, list(labels), registry=REGISTRY)


def _histogram(name: str, doc: str, labels: Iterable[str] = ()) -> Histogram:
    return Histogram(name, doc, list(labels), registry=REGISTRY, buckets=DURATION_BUCKETS)


# -- NodeClaims ---------------------------------------------------------------------------
NODECLAIMS_CREATED = _counter(
    "karpenter_nodeclaims_created_total",
    "NodeClaims created, by reason (provisioned, or the disruption reason of a replacement), "
    "NodePool and whether minValues was relaxed.",
    ["reason", "nodepool", "min_values_relaxed"],
)
NODECLAIMS_TERMINATED = _counter(
    "karpenter_nodeclaims_terminated_total",
    "NodeClaims terminated, by NodePool, capacity type and zone.",
    ["nodepool", "capacity_type", "zone"],
)
NODECLAIMS_DISRUPTED = _counter(
    "karpenter_nodeclaims_disrupted_total",
    "NodeClaims disrupted, by reason (empty, underutilized, drifted, expired, interruption "
    "kinds), NodePool and capacity type.",
    ["reason", "nodepool", "capacity_type"],
)
NODECLAIMS_UNHEALTHY_DISRUPTED = _counter(
    "karpenter_nodeclaims_unhealthy_disrupted_total",
    "Unhealthy NodeClaims replaced by node repair, by the condition that was bad, NodePool, "
    "capacity type and image.",
    ["condition", "nodepool", "capacity_type", "image_id"],
)
NODECLAIMS_TERMINATION_DURATION = Histogram(
    "karpenter_nodeclaims_termination_duration_seconds",
    "Time from a NodeClaim's deletion until its finalizer was removed.",
    ["nodepool"],
    registry=REGISTRY,
    buckets=EXPONENTIAL_12,
)
INSTANCE_TERMINATION_DURATION = Histogram(
    "karpenter_nodeclaims_instance_termination_duration_seconds",
    "Time from the first terminate call for a NodeClaim's instance until it was gone.",
    ["nodepool"],
    registry=REGISTRY,
    buckets=EXPONENTIAL_11,
)
# Karpenter v1 replaced nodeclaims_{launched,registered,initialized}_total with this
# status-condition counter (type Launched / Registered / Initialized, status True).
CONDITION_TRANSITIONS = _counter(
    "operator_nodeclaim_status_condition_transitions_total",
    "NodeClaim status condition transitions, by condition type, status and reason, and the "
    "claim's EC2NodeClass and NodePool labels.",
    ["type", "status", "reason", "karpenter_k8s_aws_ec2nodeclass", "karpenter_sh_nodepool"],
)

# -- Nodes --------------------------------------------------------------------------------
NODES_CREATED = _counter(
    "karpenter_nodes_created_total", "Nodes registered, by NodePool and zone.", ["nodepool", "zone"]
)
NODES_TERMINATED = _counter(
    "karpenter_nodes_terminated_total",
    "Nodes terminated, by NodePool and zone.",
    ["nodepool", "zone"],
)
NODES_TERMINATION_DURATION = QuantileSummary(
    "karpenter_nodes_termination_duration_seconds",
    "Time from a Node's deletion until its finalizer was removed.",
    ["nodepool"],
    registry=REGISTRY,
)
NODES_DRAINED = _counter(
    "karpenter_nodes_drained_total", "Nodes whose drain completed, by NodePool.", ["nodepool"]
)
NODES_LIFETIME = Histogram(
    "karpenter_nodes_lifetime_duration_seconds",
    "A terminated Node's age: from its creation until its finalizer was removed.",
    ["nodepool"],
    registry=REGISTRY,
    buckets=LIFETIME_BUCKETS,
)

# -- Pods ---------------------------------------------------------------------------------
PODS_STARTUP = QuantileSummary(
    "karpenter_pods_startup_duration_seconds",
    "Time from a pod's creation until it is Ready, for pods seen Pending.",
    [],
    registry=REGISTRY,
)
PODS_BOUND_DURATION = _histogram(
    "karpenter_pods_bound_duration_seconds",
    "Time from a pod's creation until it was bound, for pods seen unbound.",
)
PODS_PROVISIONING_BOUND = _histogram(
    "karpenter_pods_provisioning_bound_duration_seconds",
    "Time from the provisioning round that first placed a pod until it was bound.",
)
PODS_PROVISIONING_STARTUP = _histogram(
    "karpenter_pods_provisioning_startup_duration_seconds",
    "Time from the provisioning round that first placed a pod until it was Ready.",
)
PODS_SCHEDULING_DECISION = _histogram(
    "karpenter_pods_scheduling_decision_duration_seconds",
    "Time from the watcher seeing a pod unschedulable until a provisioning round decided on it.",
)
EVICTION_REQUESTS = _counter(
    "karpenter_pods_eviction_requests_total",
    "Eviction requests made while draining nodes, by response code (200 evicted, 429 "
    "refused by a PodDisruptionBudget).",
    ["code"],
)
PODS_DRAINED = _counter(
    "karpenter_pods_drained_total",
    "Pods evicted while draining nodes, by the node's disruption reason.",
    ["reason"],
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
UNFINISHED_WORK = _gauge(
    "karpenter_scheduler_unfinished_work_seconds",
    "How long the scheduling simulations still running have been running.",
    ["controller", "scheduling_id"],
)
IGNORED_PODS = _gauge(
    "karpenter_scheduler_ignored_pods_count",
    "Pending pods the last provisioning round left out as invalid.",
)
PENDING_BY_ZONE = _gauge(
    "karpenter_scheduler_pending_pods_by_effective_zone_count",
    "Pods the last provisioning round considered, by the zone their constraints leave "
    "(a zone, 'flexible' for several, 'none' when none is left).",
    ["controller", "zone"],
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
FAILED_VALIDATIONS = _counter(
    "karpenter_voluntary_disruption_failed_validations_total",
    "Commands whose candidates failed the validation after the 15 s delay.",
    ["consolidation_type"],
)
CONSOLIDATION_TIMEOUTS = _counter(
    "karpenter_voluntary_disruption_consolidation_timeouts_total",
    "Consolidation searches cut short by their time limit, by consolidation type.",
    ["consolidation_type"],
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
CONSUMING_BUDGETS = _gauge(
    "karpenter_nodepools_nodes_consuming_budgets",
    "Nodes of a NodePool using up its budgets now (deleting or NotReady), by reason.",
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
COST_TRACKER_ERRORS = _counter(
    "karpenter_nodepools_cost_tracker_errors_total",
    "Nodes of a NodePool whose hourly price could not be found in the catalog.",
    ["nodepool"],
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
LAUNCH_FAILURES = _counter(
    "karpenter_cloudprovider_instance_launch_failures_total",
    "Offerings a launch could not get, by zone, zone id, capacity type and reason.",
    ["zone", "zone_id", "capacity_type", "reason"],
)
TERMINATION_FAILURES = _counter(
    "karpenter_cloudprovider_instance_termination_failures_total",
    "Instance terminations that failed, by zone and zone id.",
    ["zone", "zone_id"],
)
BATCH_TIME = _histogram(
    "karpenter_cloudprovider_batcher_batch_time_seconds",
    "How long each batch of cloud calls stayed open, by batcher.",
    ["batcher"],
)
BATCH_SIZE = Histogram(
    "karpenter_cloudprovider_batcher_batch_size",
    "Requests per batch of cloud calls, by batcher.",
    ["batcher"],
    registry=REGISTRY,
    buckets=SIZE_BUCKETS,
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
INTERRUPTION_LATENCY = _histogram(
    "karpenter_interruption_message_queue_duration_seconds",
    "Time an interruption message spent on the queue before the worker handled it.",
)
INSTANCE_STATUS_UNHEALTHY = _counter(
    "karpenter_interruption_instance_status_unhealthy_total",
    "Unhealthy instance status checks seen, by status check category.",
    ["category"],
)
INTERRUPTION_ACTIONS = _counter(
    "karpenter_interruption_actions_performed_total",
    "Actions taken on interruption messages (CordonAndDrain, NoAction); a pre-v1.14 name "
    "Joinery keeps.",
    ["action_type"],
)

# -- Build --------------------------------------------------------------------------------
BUILD_INFO = _gauge(
    "karpenter_build_info",
    "1, labeled by Joinery's version (goversion carries the Python version).",
    ["version", "goversion", "goarch", "commit"],
)


def _build_info() -> None:
    import platform
    from importlib import metadata

    try:
        version = metadata.version("joinery")
    except metadata.PackageNotFoundError:
        version = "unknown"
    python = f"python{platform.python_version()}"
    BUILD_INFO.labels(version, python, platform.machine(), "").set(1)


_build_info()
for _kind in ("multi", "single"):  # as Karpenter, both series exist from the start
    CONSOLIDATION_TIMEOUTS.labels(_kind)


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

    def _transition(self, kind: str, nodepool: str, nodeclass: str) -> None:
        CONDITION_TRANSITIONS.labels(kind, "True", kind, nodeclass, nodepool).inc()

    def nodeclaim_launched(self, nodepool: str, nodeclass: str = "") -> None:
        self._transition("Launched", nodepool, nodeclass)

    def nodeclaim_registered(self, nodepool: str, nodeclass: str = "") -> None:
        self._transition("Registered", nodepool, nodeclass)

    def nodeclaim_initialized(self, nodepool: str, nodeclass: str = "") -> None:
        self._transition("Initialized", nodepool, nodeclass)

    def nodeclaim_terminated(
        self, nodepool: str, reason: str, capacity_type: str = "", zone: str = ""
    ) -> None:
        NODECLAIMS_TERMINATED.labels(nodepool, capacity_type, zone).inc()

    def nodeclaim_disrupted(self, nodepool: str, reason: str, capacity_type: str = "") -> None:
        NODECLAIMS_DISRUPTED.labels(snake(reason), nodepool, capacity_type).inc()

    def nodeclaim_termination_duration(
        self, nodepool: str, seconds: float, instance_seconds: float | None = None
    ) -> None:
        NODECLAIMS_TERMINATION_DURATION.labels(nodepool).observe(max(0.0, seconds))
        if instance_seconds is not None:
            INSTANCE_TERMINATION_DURATION.labels(nodepool).observe(max(0.0, instance_seconds))

    def nodeclaim_unhealthy_disrupted(
        self, condition: str, nodepool: str, capacity_type: str = "", image_id: str = ""
    ) -> None:
        NODECLAIMS_UNHEALTHY_DISRUPTED.labels(condition, nodepool, capacity_type, image_id).inc()

    def node_created(self, nodepool: str, zone: str = "") -> None:
        NODES_CREATED.labels(nodepool, zone).inc()

    def node_terminated(
        self,
        nodepool: str,
        zone: str = "",
        *,
        deleting_seconds: float | None = None,
        lifetime_seconds: float | None = None,
    ) -> None:
        NODES_TERMINATED.labels(nodepool, zone).inc()
        if deleting_seconds is not None:
            NODES_TERMINATION_DURATION.labels(nodepool).observe(max(0.0, deleting_seconds))
        if lifetime_seconds is not None:
            NODES_LIFETIME.labels(nodepool).observe(max(0.0, lifetime_seconds))

    def pods_evicted(self, count: int, code: str = "200") -> None:
        EVICTION_REQUESTS.labels(code).inc(count)

    def node_drained(self, nodepool: str) -> None:
        NODES_DRAINED.labels(nodepool).inc()

    def pods_drained(self, reason: str, count: int) -> None:
        PODS_DRAINED.labels(snake(reason)).inc(count)

    def scheduling(self, controller: str, seconds: float, queued: int, unschedulable: int) -> None:
        SCHEDULING_DURATION.labels(controller).observe(seconds)
        QUEUE_DEPTH.labels(controller, "").set(queued)
        UNSCHEDULABLE_PODS.labels(controller).set(unschedulable)

    def scheduling_started(self, controller: str, scheduling_id: str) -> None:
        started = time.monotonic()
        child = UNFINISHED_WORK.labels(controller, scheduling_id)
        child.set_function(lambda: time.monotonic() - started)

    def scheduling_finished(self, controller: str, scheduling_id: str) -> None:
        with contextlib.suppress(KeyError):
            UNFINISHED_WORK.remove(controller, scheduling_id)

    def pods_decided(
        self,
        placed: list[tuple[str, str]],
        undecided: list[tuple[str, str]],
        ignored: int = 0,
        zones: Mapping[str, int] | None = None,
    ) -> None:
        now = time.monotonic()
        with VIEW.lock:  # only pods the watchers hold: they forget them when they go
            for key in (k for k in (*placed, *undecided) if k in VIEW.pods):
                if key not in VIEW.decided:
                    VIEW.decided[key] = now
                    if key in VIEW.acked:
                        PODS_SCHEDULING_DECISION.observe(max(0.0, now - VIEW.acked[key]))
            for key in (k for k in placed if k in VIEW.pods):
                VIEW.placed.setdefault(key, now)
        IGNORED_PODS.set(ignored)
        PENDING_BY_ZONE.clear()
        for zone, count in sorted((zones or {}).items()):
            PENDING_BY_ZONE.labels("provisioner", zone).set(count)

    def disruption_evaluated(
        self,
        seconds: float,
        eligible: Mapping[str, int],
        allowed: Mapping[tuple[str, str], int],
        consuming: Mapping[tuple[str, str], int] | None = None,
    ) -> None:
        EVALUATION_DURATION.labels("all", "").observe(seconds)
        for reason, count in eligible.items():
            ELIGIBLE_NODES.labels(snake(reason)).set(count)
        ALLOWED_DISRUPTIONS.clear()  # a deleted pool's series go with it
        for (pool, reason), count in allowed.items():
            ALLOWED_DISRUPTIONS.labels(pool, snake(reason)).set(count)
        CONSUMING_BUDGETS.clear()
        for (pool, reason), count in (consuming or {}).items():
            CONSUMING_BUDGETS.labels(pool, snake(reason)).set(count)

    def disruption_decision(
        self, decision: str, reason: str, consolidation_type: str, pools: list[str]
    ) -> None:
        DECISIONS.labels(decision, snake(reason), consolidation_type).inc()
        for pool in pools:
            DECISIONS_BY_POOL.labels(pool, decision, snake(reason), consolidation_type).inc()

    def disruption_failed(self, decision: str, reason: str, consolidation_type: str) -> None:
        QUEUE_FAILURES.labels(decision, snake(reason), consolidation_type).inc()

    def disruption_validation_failed(self, consolidation_type: str) -> None:
        FAILED_VALIDATIONS.labels(consolidation_type).inc()

    def cloudprovider_call(self, method: str, seconds: float, error: str | None) -> None:
        caller = _caller()
        CLOUDPROVIDER_DURATION.labels(caller, method, PROVIDER).observe(seconds)
        if error is not None:
            CLOUDPROVIDER_ERRORS.labels(caller, method, PROVIDER, error).inc()

    def launch_failed(self, zone: str, zone_id: str, capacity_type: str, reason: str) -> None:
        LAUNCH_FAILURES.labels(zone, zone_id, capacity_type, reason).inc()

    def termination_failed(self, zone: str = "", zone_id: str = "") -> None:
        TERMINATION_FAILURES.labels(zone, zone_id).inc()

    def batch(self, batcher: str, seconds: float, size: int) -> None:
        BATCH_TIME.labels(batcher).observe(seconds)
        BATCH_SIZE.labels(batcher).observe(size)

    def instance_status_unhealthy(self, category: str) -> None:
        INSTANCE_STATUS_UNHEALTHY.labels(category).inc()


def observe_provider(cloud: CloudProvider, counters: Counters) -> None:
    """Wire what the cloud provider tells (refused offerings, batches) and what it knows
    (the catalog's offerings and prices) into the metrics."""
    cloud.watch_launches(counters.launch_failed, counters.batch)
    VIEW.offerings = lambda: catalog_offerings(cloud)
    VIEW.unpriced = lambda pool: COST_TRACKER_ERRORS.labels(pool).inc()


def catalog_offerings(cloud: CloudProvider) -> list[Offering]:
    """The catalog's offerings, empty until the catalog is loaded (a scrape never waits for
    the cloud)."""
    return [
        Offering(
            instance_type=t.name,
            capacity_type=o.capacity_type,
            zone=o.zone,
            price=o.price,
            available=o.available,
            cpu_cores=t.capacity.get("cpu", 0) / 1000,
            memory_bytes=t.capacity.get("memory", 0) / 1000,
        )
        for t in cloud.loaded_instance_types()
        for o in t.offerings
    ]


def interruption_received(message_type: str, queued_seconds: float | None = None) -> None:
    INTERRUPTION_RECEIVED.labels(snake(message_type)).inc()
    if queued_seconds is not None:
        INTERRUPTION_LATENCY.observe(max(0.0, queued_seconds))


def interruption_latency(sent: str) -> None:
    """``karpenter_interruption_message_queue_duration_seconds``: the event's time (RFC 3339,
    as EventBridge writes it) until now; nothing when it has none."""
    try:
        at = datetime.fromisoformat(sent.replace("Z", "+00:00"))
    except ValueError:
        return
    if at.tzinfo is None:
        return
    INTERRUPTION_LATENCY.observe(max(0.0, (datetime.now(UTC) - at).total_seconds()))


def interruption_deleted() -> None:
    INTERRUPTION_DELETED.inc()


def interruption_action(action_type: str) -> None:
    INTERRUPTION_ACTIONS.labels(action_type).inc()


SUFFIXES = {
    "counter": ("_total", "_created"),
    "gauge": ("",),
    "histogram": ("_bucket", "_sum", "_count", "_created"),
    "summary": ("", "_sum", "_count", "_created"),
}


def declared() -> dict[str, tuple[str, tuple[str, ...]]]:
    """Every family the registry exports: name (as scraped: counters with ``_total``) →
    (type, label names). Read from the registered collectors themselves, so a family
    registered under a wrong name, type or label set shows here as it is."""
    out: dict[str, tuple[str, tuple[str, ...]]] = {}
    collectors: Any = REGISTRY._collector_to_names
    for collector in list(collectors):
        if isinstance(collector, ClusterCollector):
            out.update(collector.declared())
        elif isinstance(collector, QuantileSummary):
            out[collector.name] = ("summary", collector.labelnames)
        elif isinstance(collector, Counter | Gauge | Histogram):
            kind = collector._type
            name = collector._name + ("_total" if kind == "counter" else "")
            out[name] = (kind, tuple(collector._labelnames))
    return out


def sample_names() -> set[str]:
    """Every series name ``/metrics`` can carry from this registry (counters with
    ``_total``, histograms with ``_bucket``/``_sum``/``_count``): what dashboards may use."""
    out: set[str] = set()
    for family in REGISTRY.collect():
        out.update(family.name + s for s in SUFFIXES.get(family.type, ("",)))
    return out
