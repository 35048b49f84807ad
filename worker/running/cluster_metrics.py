"""Karpenter's gauges of what the cluster holds now, computed at scrape time from what the
worker's watchers last saw (Nodes, Pods, NodePools) and from the instance-type catalog.

Karpenter's metrics controllers rebuild these every few seconds from its cluster state;
here the watchers hand each object over as it changes (``NodeStates``, ``PodStates``,
``PoolStates``) and one collector derives every series when ``/metrics`` is read, so a
deleted pod's or node's series go with it and ages (``*_time_seconds``) are current.
Durations observed on a transition (a pod bound, a pod Ready) are recorded as the
watchers see the transition.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from models import labels as L
from models.quantity import parse_quantity

# Karpenter's well-known node labels, as its metrics name them (the part after the "/",
# snake-cased): the core ones and the AWS provider's.
WELL_KNOWN = {
    L.NODEPOOL: "nodepool",
    "topology.kubernetes.io/zone": "zone",
    "topology.kubernetes.io/region": "region",
    "node.kubernetes.io/instance-type": "instance_type",
    "kubernetes.io/arch": "arch",
    "kubernetes.io/os": "os",
    L.CAPACITY_TYPE: "capacity_type",
    "node.kubernetes.io/windows-build": "windows_build",
    "topology.k8s.aws/zone-id": "zone_id",
    **{
        f"karpenter.k8s.aws/{k}": k.replace("-", "_")
        for k in (
            "capacity-reservation-id",
            "capacity-reservation-type",
            "capacity-reservation-interruptible",
            "instance-hypervisor",
            "instance-encryption-in-transit-supported",
            "instance-category",
            "instance-capability-flex",
            "instance-family",
            "instance-generation",
            "instance-local-nvme",
            "instance-size",
            "instance-cpu",
            "instance-cpu-manufacturer",
            "instance-cpu-sustained-clock-speed-mhz",
            "instance-memory",
            "instance-ebs-bandwidth",
            "instance-network-bandwidth",
            "instance-gpu-name",
            "instance-gpu-manufacturer",
            "instance-gpu-count",
            "instance-gpu-memory",
            "instance-accelerator-name",
            "instance-accelerator-manufacturer",
            "instance-accelerator-count",
            "instance-tenancy",
            "placement-group-id",
            "placement-group-partition",
        )
    },
}
NODE_LABELS = ("node_name", "phase", "managed", *WELL_KNOWN.values())
POD_LABELS = (
    *("name", "namespace", "owner", "node", "scheduled", "nodepool", "zone", "arch"),
    *("capacity_type", "instance_type", "phase", "ready", "managed"),
)
OFFERING_LABELS = ("instance_type", "capacity_type", "zone")


def resource_type(name: str) -> str:
    """As Karpenter labels resources: ``ephemeral-storage`` → ``ephemeral_storage``."""
    return name.lower().replace("-", "_")


def amounts(resources: Mapping[str, Any] | None) -> dict[str, float]:
    """Quantities as Karpenter reports them: cpu in cores, everything else in units."""
    out: dict[str, float] = {}
    for name, quantity in (resources or {}).items():
        try:
            # parse_quantity counts thousandths (cpu "1500m" is 1500)
            out[resource_type(str(name))] = parse_quantity(str(quantity)) / 1000
        except (ValueError, ArithmeticError):
            continue
    return out


def _add(into: dict[str, float], more: Mapping[str, float]) -> None:
    for k, v in more.items():
        into[k] = into.get(k, 0.0) + v


def _time(text: object) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def _condition(status: Mapping[str, Any], kind: str) -> Mapping[str, Any] | None:
    return next((c for c in status.get("conditions") or [] if c.get("type") == kind), None)


def pod_totals(spec: Mapping[str, Any], field_name: str) -> dict[str, float]:
    """Containers' requests (or limits), with the larger of the init containers' peak, as
    the kube-scheduler counts a pod (a limit without a request counts as the request)."""
    app: dict[str, float] = {}
    for c in spec.get("containers") or []:
        res = c.get("resources") or {}
        values = amounts(res.get(field_name))
        if field_name == "requests":
            values = {**amounts(res.get("limits")), **values}
        _add(app, values)
    for c in spec.get("initContainers") or []:
        res = c.get("resources") or {}
        values = amounts(res.get(field_name))
        if field_name == "requests":
            values = {**amounts(res.get("limits")), **values}
        for k, v in values.items():
            app[k] = max(app.get(k, 0.0), v)
    _add(app, amounts(spec.get("overhead")))
    return app


@dataclass
class NodeInfo:
    labels: tuple[str, ...]
    pool: str
    allocatable: dict[str, float]
    capacity: dict[str, float]
    created: datetime | None


@dataclass
class PodInfo:
    namespace: str
    name: str
    owner: str
    node: str
    phase: str
    ready: bool
    scheduled: bool
    created: datetime | None
    daemon: bool
    requests: dict[str, float]
    limits: dict[str, float]


@dataclass
class ClusterView:
    """The objects the collector derives series from; fed by the watchers and read at
    scrape time (one lock, held briefly on either side)."""

    nodes: dict[str, NodeInfo] = field(default_factory=dict)
    pods: dict[tuple[str, str], PodInfo] = field(default_factory=dict)
    # when the watcher first saw a pod unschedulable, the provisioner decided on it, and
    # a round first placed it (Karpenter's ack, decision and success times)
    acked: dict[tuple[str, str], float] = field(default_factory=dict)
    decided: dict[tuple[str, str], float] = field(default_factory=dict)
    placed: dict[tuple[str, str], float] = field(default_factory=dict)
    synced: Callable[[], bool] = lambda: True
    unsynced_since: float | None = None
    offerings: Callable[[], Iterable[Offering]] = lambda: ()
    # told the name of each NodePool node the catalog has no price for (once per node)
    unpriced: Callable[[str], None] = lambda _pool: None
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass(frozen=True)
class Offering:
    """One catalog offering, as the cloud provider metrics label it."""

    instance_type: str
    capacity_type: str
    zone: str
    price: float
    available: bool
    cpu_cores: float
    memory_bytes: float


VIEW = ClusterView()


def _node_info(node: Mapping[str, Any]) -> NodeInfo:
    meta = node.get("metadata") or {}
    labels = meta.get("labels") or {}
    status = node.get("status") or {}
    pool = str(labels.get(L.NODEPOOL, ""))
    values = (
        str(meta.get("name")),
        str(status.get("phase") or ""),
        "true" if pool else "false",
        *(str(labels.get(k, "")) for k in WELL_KNOWN),
    )
    return NodeInfo(
        labels=values,
        pool=pool,
        allocatable=amounts(status.get("allocatable")),
        capacity=amounts(status.get("capacity")),
        created=_time(meta.get("creationTimestamp")),
    )


def _owner(meta: Mapping[str, Any]) -> tuple[str, bool]:
    """Karpenter's self link of the first owner, and whether a DaemonSet owns the pod."""
    refs = meta.get("ownerReferences") or []
    if not refs:
        return "", False
    ref = refs[0]
    kind = str(ref.get("kind") or "")
    link = f"/apis/{ref.get('apiVersion')}/namespaces/{meta.get('namespace')}/{kind.lower()}s/"
    return link + str(ref.get("name")), kind == "DaemonSet"


def _pod_info(pod: Mapping[str, Any]) -> PodInfo:
    meta = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    ready = _condition(status, "Ready")
    scheduled = _condition(status, "PodScheduled")
    owner, daemon = _owner(meta)
    return PodInfo(
        namespace=str(meta.get("namespace")),
        name=str(meta.get("name")),
        owner=owner,
        node=str(spec.get("nodeName") or ""),
        phase=str(status.get("phase") or "Unknown"),
        ready=ready is not None and ready.get("status") == "True",
        scheduled=scheduled is not None and scheduled.get("status") == "True",
        created=_time(meta.get("creationTimestamp")),
        daemon=daemon,
        requests=pod_totals(spec, "requests"),
        limits=pod_totals(spec, "limits"),
    )


class ClusterCollector(Collector):
    """Every scrape-time series; see the module docstring."""

    def __init__(self, view: ClusterView = VIEW, clock: Callable[[], float] = time.time) -> None:
        self.view = view
        self.clock = clock
        self._unpriced: set[str] = set()

    def describe(self) -> list[Metric]:
        return list(self._families())

    def declared(self) -> dict[str, tuple[str, tuple[str, ...]]]:
        """name → (type, label names) of every family this collector exports."""
        return {f.name: ("gauge", labels) for f, labels in self._family_labels()}

    def _family_labels(self) -> Iterator[tuple[GaugeMetricFamily, tuple[str, ...]]]:
        for name, doc, labels in FAMILIES:
            yield GaugeMetricFamily(name, doc, labels=list(labels)), labels

    def _families(self) -> Iterator[GaugeMetricFamily]:
        for family, _labels in self._family_labels():
            yield family

    def collect(self) -> Iterator[Metric]:
        families = {f.name: f for f in self._families()}
        now = self.clock()
        view = self.view
        with view.lock:
            nodes = dict(view.nodes)
            pods = list(view.pods.values())
            acked, decided, placed = dict(view.acked), dict(view.decided), dict(view.placed)
        self._nodes(families, nodes, pods, now)
        self._pods(families, nodes, pods, now, acked, decided, placed)
        self._state(families, len(nodes), now)
        self._catalog(families, nodes)
        yield from families.values()

    # -- nodes -----------------------------------------------------------------------------
    def _nodes(
        self,
        f: dict[str, GaugeMetricFamily],
        nodes: Mapping[str, NodeInfo],
        pods: Iterable[PodInfo],
        now: float,
    ) -> None:
        by_node: dict[str, list[PodInfo]] = {}
        for p in pods:
            if p.node and p.phase not in ("Succeeded", "Failed"):
                by_node.setdefault(p.node, []).append(p)
        cluster_alloc: dict[str, float] = {}
        cluster_used: dict[str, float] = {}
        for name, n in sorted(nodes.items()):
            on = by_node.get(name, [])
            sums: dict[str, dict[str, float]] = {
                "karpenter_nodes_allocatable": n.allocatable,
                "karpenter_nodes_system_overhead": {
                    k: v - n.allocatable.get(k, 0.0) for k, v in n.capacity.items()
                },
                # as Karpenter sums pods: "pods" counts them, even when there are none
                "karpenter_nodes_total_pod_requests": {"pods": 0.0},
                "karpenter_nodes_total_pod_limits": {"pods": 0.0},
                "karpenter_nodes_total_daemon_requests": {"pods": 0.0},
                "karpenter_nodes_total_daemon_limits": {"pods": 0.0},
            }
            one = {"pods": 1.0}
            for p in on:
                _add(sums["karpenter_nodes_total_pod_requests"], {**p.requests, **one})
                _add(sums["karpenter_nodes_total_pod_limits"], {**p.limits, **one})
                if p.daemon:
                    _add(sums["karpenter_nodes_total_daemon_requests"], {**p.requests, **one})
                    _add(sums["karpenter_nodes_total_daemon_limits"], {**p.limits, **one})
            for metric, values in sums.items():
                for resource, value in sorted(values.items()):
                    f[metric].add_metric([*n.labels, resource], value)
            if n.created is not None:
                age = now - n.created.timestamp()
                f["karpenter_nodes_current_lifetime_seconds"].add_metric(list(n.labels), age)
            _add(cluster_alloc, n.allocatable)
            _add(cluster_used, sums["karpenter_nodes_total_pod_requests"])
        for resource, total in sorted(cluster_alloc.items()):
            if total:
                used = 100 * cluster_used.get(resource, 0.0) / total
                f["karpenter_cluster_utilization_percent"].add_metric([resource], used)

    # -- pods ------------------------------------------------------------------------------
    def _pods(
        self,
        f: dict[str, GaugeMetricFamily],
        nodes: Mapping[str, NodeInfo],
        pods: Iterable[PodInfo],
        now: float,
        acked: Mapping[tuple[str, str], float],
        decided: Mapping[tuple[str, str], float],
        placed: Mapping[tuple[str, str], float],
    ) -> None:
        index = {k: i for i, k in enumerate(NODE_LABELS)}
        mono = time.monotonic()
        for p in sorted(pods, key=lambda p: (p.namespace, p.name)):
            n = nodes.get(p.node)

            def label(key: str, n: NodeInfo | None = n) -> str:
                return n.labels[index[key]] if n is not None else ""

            pool = label("nodepool")
            f["karpenter_pods_state"].add_metric(
                [
                    *(p.name, p.namespace, p.owner, p.node, "true" if p.node else "false"),
                    *(pool, label("zone"), label("arch"), label("capacity_type")),
                    *(label("instance_type"), p.phase, "true" if p.ready else "false"),
                    "true" if pool else "false",
                ],
                1,
            )
            key = (p.namespace, p.name)
            ident = [p.name, p.namespace]
            age = now - p.created.timestamp() if p.created is not None else None
            if p.phase == "Pending" and age is not None:
                f["karpenter_pods_unstarted_time_seconds"].add_metric(ident, age)
            if p.phase == "Pending" and not p.scheduled and age is not None:
                f["karpenter_pods_unbound_time_seconds"].add_metric(ident, age)
            if key in placed and p.phase == "Pending":
                since = mono - placed[key]
                f["karpenter_pods_provisioning_unstarted_time_seconds"].add_metric(ident, since)
                if not p.scheduled:
                    f["karpenter_pods_provisioning_unbound_time_seconds"].add_metric(ident, since)
            if key in acked and key not in decided and not p.scheduled:
                undecided = mono - acked[key]
                name = "karpenter_pods_provisioning_scheduling_undecided_time_seconds"
                f[name].add_metric(ident, undecided)

    # -- cluster state and catalog ---------------------------------------------------------
    def _state(self, f: dict[str, GaugeMetricFamily], count: int, now: float) -> None:
        view = self.view
        f["karpenter_cluster_state_node_count"].add_metric([], count)
        synced = view.synced()
        if synced:
            view.unsynced_since = None
        elif view.unsynced_since is None:
            view.unsynced_since = now
        f["karpenter_cluster_state_synced"].add_metric([], 1.0 if synced else 0.0)
        unsynced = 0.0 if view.unsynced_since is None else now - view.unsynced_since
        f["karpenter_cluster_state_unsynced_time_seconds"].add_metric([], unsynced)

    def _catalog(self, f: dict[str, GaugeMetricFamily], nodes: Mapping[str, NodeInfo]) -> None:
        try:
            offerings = list(self.view.offerings())
        except Exception:  # the catalog not loaded yet: no catalog series this scrape
            offerings = []
        types: dict[str, Offering] = {}
        for o in sorted(offerings, key=lambda o: (o.instance_type, o.capacity_type, o.zone)):
            labels = [o.instance_type, o.capacity_type, o.zone]
            price = "karpenter_cloudprovider_instance_type_offering_price_estimate"
            f[price].add_metric(labels, o.price)
            available = "karpenter_cloudprovider_instance_type_offering_available"
            f[available].add_metric(labels, 1.0 if o.available else 0.0)
            types.setdefault(o.instance_type, o)
        for name, o in types.items():
            f["karpenter_cloudprovider_instance_type_cpu_cores"].add_metric([name], o.cpu_cores)
            f["karpenter_cloudprovider_instance_type_memory_bytes"].add_metric(
                [name], o.memory_bytes
            )
        if not offerings:
            return
        prices = {(o.instance_type, o.zone, o.capacity_type): o.price for o in offerings}
        index = {k: i for i, k in enumerate(NODE_LABELS)}
        cost: dict[str, float] = {}
        for name, n in nodes.items():
            if not n.pool:
                continue
            it, zone, ct = (n.labels[index[k]] for k in ("instance_type", "zone", "capacity_type"))
            price_of = prices.get((it, zone, ct))
            if price_of is None:
                if name not in self._unpriced:
                    self._unpriced.add(name)
                    self.view.unpriced(n.pool)
                continue
            cost[n.pool] = cost.get(n.pool, 0.0) + price_of
        for pool, total in sorted(cost.items()):
            f["karpenter_nodepools_cost_total"].add_metric([pool], total)


FAMILIES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    *(
        (name, doc, (*NODE_LABELS, "resource_type"))
        for name, doc in (
            ("karpenter_nodes_allocatable", "Resources allocatable by each node."),
            (
                "karpenter_nodes_total_pod_requests",
                "Resources requested by the pods bound to each node, DaemonSet pods included.",
            ),
            (
                "karpenter_nodes_total_pod_limits",
                "Resource limits of the pods bound to each node, DaemonSet pods included.",
            ),
            (
                "karpenter_nodes_total_daemon_requests",
                "Resources requested by the DaemonSet pods bound to each node.",
            ),
            (
                "karpenter_nodes_total_daemon_limits",
                "Resource limits of the DaemonSet pods bound to each node.",
            ),
            (
                "karpenter_nodes_system_overhead",
                "Each node's capacity minus its allocatable (what the system reserves).",
            ),
        )
    ),
    ("karpenter_nodes_current_lifetime_seconds", "Each node's age.", NODE_LABELS),
    (
        "karpenter_cluster_utilization_percent",
        "Pod requests on nodes as a percentage of the nodes' allocatable, by resource.",
        ("resource_type",),
    ),
    ("karpenter_cluster_state_node_count", "Nodes the worker's watchers see.", ()),
    (
        "karpenter_cluster_state_synced",
        "1 when the worker's watches have listed NodeClaims, Nodes, Pods and NodePools whole.",
        (),
    ),
    (
        "karpenter_cluster_state_unsynced_time_seconds",
        "How long the watches have not been synced (0 when synced).",
        (),
    ),
    ("karpenter_pods_state", "1 per pod, labeled by its state and its node's.", POD_LABELS),
    (
        "karpenter_pods_unstarted_time_seconds",
        "Age of each pod still Pending.",
        ("name", "namespace"),
    ),
    (
        "karpenter_pods_unbound_time_seconds",
        "Age of each pod not bound yet.",
        ("name", "namespace"),
    ),
    (
        "karpenter_pods_provisioning_unstarted_time_seconds",
        "Time since a provisioning round placed each pod that is still Pending.",
        ("name", "namespace"),
    ),
    (
        "karpenter_pods_provisioning_unbound_time_seconds",
        "Time since a provisioning round placed each pod that is not bound yet.",
        ("name", "namespace"),
    ),
    (
        "karpenter_pods_provisioning_scheduling_undecided_time_seconds",
        "Time since the watcher saw each unschedulable pod that no round has decided on yet.",
        ("name", "namespace"),
    ),
    (
        "karpenter_nodepools_cost_total",
        "Sum of the catalog's hourly price of each NodePool's nodes (list prices, not a bill).",
        ("nodepool",),
    ),
    (
        "karpenter_cloudprovider_instance_type_offering_price_estimate",
        "Hourly price of each catalog offering.",
        OFFERING_LABELS,
    ),
    (
        "karpenter_cloudprovider_instance_type_offering_available",
        "1 when an offering can be launched now (0 while insufficient capacity marks it).",
        OFFERING_LABELS,
    ),
    (
        "karpenter_cloudprovider_instance_type_cpu_cores",
        "vCPUs of each instance type.",
        ("instance_type",),
    ),
    (
        "karpenter_cloudprovider_instance_type_memory_bytes",
        "Memory of each instance type, in bytes.",
        ("instance_type",),
    ),
)


class _Ready(Protocol):
    @property
    def ready(self) -> bool: ...


def watchers_ready(watchers: _Ready) -> Callable[[], bool]:
    """``karpenter_cluster_state_synced``: the watchers have listed what rounds read."""
    return lambda: watchers.ready
