"""The scrape-time gauges (node requests and limits, utilization, pod state and ages, the
catalog's offerings, NodePool cost) and the quantile summaries, on a view of their own:
values worked out by hand from the objects given."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from worker.running.cluster_metrics import ClusterCollector, ClusterView, Offering
from worker.running.quantiles import QuantileSummary
from worker.running.watch_metrics import NodeStates, PodStates

NOW = datetime(2026, 1, 1, 1, 0, 0, tzinfo=UTC).timestamp()


def _samples(registry: CollectorRegistry) -> list[tuple[str, dict[str, str], float]]:
    text = generate_latest(registry).decode()
    return [
        (s.name, dict(s.labels), s.value)
        for f in text_string_to_metric_families(text)
        for s in f.samples
    ]


def _value(
    samples: list[tuple[str, dict[str, str], float]], metric: str, /, **labels: str
) -> float:
    found = [v for n, ls, v in samples if n == metric and labels.items() <= ls.items()]
    assert len(found) == 1, (metric, labels, found)
    return found[0]


def _node(name: str, pool: str = "default") -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "labels": {
                "karpenter.sh/nodepool": pool,
                "node.kubernetes.io/instance-type": "m5.large",
                "topology.kubernetes.io/zone": "us-east-1a",
                "karpenter.sh/capacity-type": "spot",
                "kubernetes.io/arch": "amd64",
                "karpenter.k8s.aws/instance-family": "m5",
            },
        },
        "status": {
            "phase": "",
            "capacity": {"cpu": "2", "memory": "8Gi", "pods": "29"},
            "allocatable": {"cpu": "1930m", "memory": "7Gi", "pods": "29"},
        },
    }


def _pod(name: str, node: str = "", daemon: bool = False, **status: Any) -> dict[str, Any]:
    owner = {"apiVersion": "apps/v1", "kind": "DaemonSet" if daemon else "ReplicaSet"}
    return {
        "metadata": {
            "name": name,
            "namespace": "ns",
            "creationTimestamp": "2026-01-01T00:30:00Z",
            "ownerReferences": [{**owner, "name": "owner"}],
        },
        "spec": {
            "nodeName": node or None,
            "containers": [
                {"resources": {"requests": {"cpu": "500m"}, "limits": {"memory": "1Gi"}}}
            ],
        },
        "status": {"phase": "Running" if node else "Pending", **status},
    }


@pytest.fixture
def view() -> ClusterView:
    return ClusterView()


@pytest.fixture
def registry(view: ClusterView) -> CollectorRegistry:
    registry = CollectorRegistry()
    registry.register(ClusterCollector(view, clock=lambda: NOW))
    return registry


def test_node_requests_limits_overhead_and_utilization(
    view: ClusterView, registry: CollectorRegistry
) -> None:
    NodeStates(view).update(_node("a"))
    pods = PodStates(view)
    pods.update(_pod("web", "a"))
    pods.update(_pod("agent", "a", daemon=True))
    pods.update(_pod("waiting"))
    s = _samples(registry)
    a = {"node_name": "a", "nodepool": "default", "instance_family": "m5", "managed": "true"}
    assert _value(s, "karpenter_nodes_total_pod_requests", resource_type="cpu", **a) == 1.0
    # a limit without a request is the request (API defaulting): 2 x 1Gi
    assert _value(s, "karpenter_nodes_total_pod_requests", resource_type="memory", **a) == 2**31
    assert _value(s, "karpenter_nodes_total_pod_requests", resource_type="pods", **a) == 2
    assert _value(s, "karpenter_nodes_total_daemon_requests", resource_type="cpu", **a) == 0.5
    assert _value(s, "karpenter_nodes_total_daemon_limits", resource_type="pods", **a) == 1
    assert _value(s, "karpenter_nodes_total_pod_limits", resource_type="memory", **a) == 2**31
    assert _value(s, "karpenter_nodes_system_overhead", resource_type="cpu", **a) == pytest.approx(
        0.07
    )
    assert _value(s, "karpenter_nodes_system_overhead", resource_type="memory", **a) == 2**30
    assert _value(s, "karpenter_nodes_current_lifetime_seconds", **a) == 3600
    util = "karpenter_cluster_utilization_percent"
    assert _value(s, util, resource_type="cpu") == pytest.approx(100 * 1.0 / 1.93)
    assert _value(s, util, resource_type="pods") == pytest.approx(100 * 2 / 29)
    assert _value(s, "karpenter_cluster_state_node_count") == 1


def test_pod_state_labels_and_ages(view: ClusterView, registry: CollectorRegistry) -> None:
    NodeStates(view).update(_node("a"))
    pods = PodStates(view)
    pods.update(
        _pod("web", "a", conditions=[{"type": "Ready", "status": "True"}]),
    )
    pods.update(_pod("waiting"))
    s = _samples(registry)
    web = _value(
        s,
        "karpenter_pods_state",
        name="web",
        node="a",
        scheduled="true",
        nodepool="default",
        zone="us-east-1a",
        arch="amd64",
        capacity_type="spot",
        instance_type="m5.large",
        phase="Running",
        ready="true",
        managed="true",
        owner="/apis/apps/v1/namespaces/ns/replicasets/owner",
    )
    assert web == 1
    waiting = {"name": "waiting", "namespace": "ns"}
    assert _value(s, "karpenter_pods_state", scheduled="false", managed="false", **waiting) == 1
    assert _value(s, "karpenter_pods_unstarted_time_seconds", **waiting) == 1800
    assert _value(s, "karpenter_pods_unbound_time_seconds", **waiting) == 1800
    assert not [n for n, ls, _ in s if n.startswith("karpenter_pods_un") and ls["name"] == "web"]
    pods.delete("ns", "waiting")
    assert not [ls for n, ls, _ in _samples(registry) if ls.get("name") == "waiting"]


def test_catalog_offerings_and_pool_cost(view: ClusterView, registry: CollectorRegistry) -> None:
    offerings = [
        Offering("m5.large", "spot", "us-east-1a", 0.04, True, 2, 8 * 2**30),
        Offering("m5.large", "on-demand", "us-east-1a", 0.096, False, 2, 8 * 2**30),
    ]
    view.offerings = lambda: offerings
    unpriced: list[str] = []
    view.unpriced = unpriced.append
    nodes = NodeStates(view)
    nodes.update(_node("a"))
    nodes.update(_node("b"))
    other = _node("c", pool="gpu")
    other["metadata"]["labels"]["node.kubernetes.io/instance-type"] = "p3.2xlarge"
    nodes.update(other)
    s = _samples(registry)
    price = "karpenter_cloudprovider_instance_type_offering_price_estimate"
    assert _value(s, price, instance_type="m5.large", capacity_type="on-demand") == 0.096
    available = "karpenter_cloudprovider_instance_type_offering_available"
    assert _value(s, available, capacity_type="on-demand") == 0
    assert _value(s, available, capacity_type="spot") == 1
    assert _value(s, "karpenter_cloudprovider_instance_type_cpu_cores") == 2
    assert _value(s, "karpenter_cloudprovider_instance_type_memory_bytes") == 8 * 2**30
    assert _value(s, "karpenter_nodepools_cost_total", nodepool="default") == pytest.approx(0.08)
    assert unpriced == ["gpu"]
    _samples(registry)
    assert unpriced == ["gpu"]  # told once per node


def _count(histogram: Any, suffix: str) -> float:
    return float(next(s.value for s in histogram.collect()[0].samples if s.name.endswith(suffix)))


def test_the_bound_duration_is_observed_once_per_pod_seen_unbound() -> None:
    from worker.running import metrics as M

    pods = PodStates(ClusterView())
    before = _count(M.PODS_BOUND_DURATION, "_count")
    total = _count(M.PODS_BOUND_DURATION, "_sum")
    pods.update(_pod("p"))
    scheduled = {
        "type": "PodScheduled",
        "status": "True",
        "lastTransitionTime": "2026-01-01T00:30:20Z",
    }
    bound = _pod("p", "a") | {"status": {"phase": "Pending", "conditions": [scheduled]}}
    pods.update(bound)
    pods.update(bound)
    assert _count(M.PODS_BOUND_DURATION, "_count") == before + 1
    assert _count(M.PODS_BOUND_DURATION, "_sum") == pytest.approx(total + 20)
    # a pod first seen bound (a re-list) tells nothing
    pods.update(_pod("q", "a") | {"status": {"phase": "Pending", "conditions": [scheduled]}})
    assert _count(M.PODS_BOUND_DURATION, "_count") == before + 1


def test_a_summary_exports_quantiles_over_its_window() -> None:
    now = [0.0]
    registry = CollectorRegistry()
    summary = QuantileSummary(
        "x_seconds", "x", ["pool"], registry, max_age=60, clock=lambda: now[0]
    )
    for v in (1, 2, 3, 4, 100):
        summary.labels("a").observe(v)
    s = _samples(registry)
    assert _value(s, "x_seconds", quantile="0", pool="a") == 1
    assert _value(s, "x_seconds", quantile="0.5", pool="a") == 3
    assert _value(s, "x_seconds", quantile="1", pool="a") == 100
    assert _value(s, "x_seconds_count", pool="a") == 5
    assert _value(s, "x_seconds_sum", pool="a") == 110
    now[0] = 61.0
    summary.labels("a").observe(7)
    s = _samples(registry)
    assert _value(s, "x_seconds", quantile="0", pool="a") == 7  # older ones left the window
    assert _value(s, "x_seconds_count", pool="a") == 6


def test_a_round_decision_times_the_pod_from_seen_to_decided_to_ready() -> None:
    """Seen unschedulable (acked), placed by a round, then Ready: the decision and the
    provisioning startup are observed once, and the pod's times are forgotten."""
    from worker.running import metrics as M
    from worker.running.cluster_metrics import VIEW

    registry = CollectorRegistry()
    registry.register(ClusterCollector(VIEW))
    pods, name = PodStates(), f"p-{uuid.uuid4().hex[:6]}"
    decisions = _count(M.PODS_SCHEDULING_DECISION, "_count")
    startups = _count(M.PODS_PROVISIONING_STARTUP, "_count")
    pods.update(_pod(name))
    pods.acked("ns", name)
    undecided = "karpenter_pods_provisioning_scheduling_undecided_time_seconds"
    assert _value(_samples(registry), undecided, name=name) >= 0
    M.PrometheusCounters().pods_decided([("ns", name), ("ns", "never-seen")], [])
    M.PrometheusCounters().pods_decided([("ns", name)], [])  # a later round: no new decision
    assert _count(M.PODS_SCHEDULING_DECISION, "_count") == decisions + 1
    s = _samples(registry)
    assert _value(s, "karpenter_pods_provisioning_unstarted_time_seconds", name=name) >= 0
    assert not [ls for n, ls, _ in s if n == undecided and ls["name"] == name]
    assert ("ns", "never-seen") not in VIEW.decided  # only pods the watchers hold
    ready = {"type": "Ready", "status": "True", "lastTransitionTime": "2099-01-01T00:00:00Z"}
    pods.update(_pod(name, "a", conditions=[ready]))
    assert _count(M.PODS_PROVISIONING_STARTUP, "_count") == startups + 1
    assert ("ns", name) not in VIEW.decided and ("ns", name) not in VIEW.placed
    pods.delete("ns", name)
    assert ("ns", name) not in VIEW.pods
