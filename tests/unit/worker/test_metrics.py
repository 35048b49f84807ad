"""Each metric the worker exports, fed through its hook and read back by scraping
``/metrics`` from the worker's own health server (the registry is the process's, so every
test uses names of its own: a pool, a node, a pod)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from activities.disruption.types import MarkInput
from activities.kubernetes.events import Dedupe
from activities.metrics import snake
from worker.running import metrics
from worker.running.metrics import PrometheusCounters
from worker.running.watch_metrics import NodeStates, PodStates, PoolStates


@pytest.fixture
def url(metrics_url: str) -> str:
    return metrics_url


def _pool() -> str:
    return f"pool-{uuid.uuid4().hex[:6]}"


def test_nodeclaim_and_node_lifecycle_counters(url: str, scrape: Any) -> None:
    pool, c = _pool(), PrometheusCounters()
    c.nodeclaim_created(pool)
    c.nodeclaim_created(pool, "Underutilized")
    c.nodeclaim_created(pool, min_values_relaxed=True)  # MIN_VALUES_POLICY=BestEffort
    c.nodeclaim_launched(pool, "default")
    c.nodeclaim_registered(pool, "default")
    c.nodeclaim_initialized(pool, "default")
    c.node_created(pool, "us-east-1a")
    c.nodeclaim_disrupted(pool, "Drifted", "spot")
    c.nodeclaim_terminated(pool, "Expired", "spot", "us-east-1a")
    c.node_terminated(pool, "us-east-1a")
    before = scrape(url).value("karpenter_pods_eviction_requests_total", code="200")
    c.pods_evicted(3)
    m = scrape(url)
    created = "karpenter_nodeclaims_created_total"
    assert m.value(created, nodepool=pool, reason="provisioned", min_values_relaxed="false") == 1
    assert m.value(created, nodepool=pool, reason="underutilized") == 1
    assert m.value(created, nodepool=pool, reason="provisioned", min_values_relaxed="true") == 1
    transitions = "operator_nodeclaim_status_condition_transitions_total"
    for step in ("Launched", "Registered", "Initialized"):
        labels = {"type": step, "status": "True", "reason": step, "karpenter_sh_nodepool": pool}
        assert m.value(transitions, karpenter_k8s_aws_ec2nodeclass="default", **labels) == 1
    assert m.value("karpenter_nodes_created_total", nodepool=pool, zone="us-east-1a") == 1
    assert (
        m.value(
            "karpenter_nodeclaims_disrupted_total",
            nodepool=pool,
            reason="drifted",
            capacity_type="spot",
        )
        == 1
    )
    assert (
        m.value(
            "karpenter_nodeclaims_terminated_total",
            nodepool=pool,
            capacity_type="spot",
            zone="us-east-1a",
        )
        == 1
    )
    assert m.value("karpenter_nodes_terminated_total", nodepool=pool, zone="us-east-1a") == 1
    assert m.value("karpenter_pods_eviction_requests_total", code="200") == before + 3


def test_scheduling_simulation(url: str, scrape: Any) -> None:
    controller = f"test-{uuid.uuid4().hex[:6]}"
    PrometheusCounters().scheduling(controller, 0.3, queued=12, unschedulable=2)
    m = scrape(url)
    duration = "karpenter_scheduler_scheduling_duration_seconds"
    assert m.value(f"{duration}_count", controller=controller) == 1
    assert m.value(f"{duration}_bucket", controller=controller, le="0.35") == 1
    assert m.value(f"{duration}_bucket", controller=controller, le="0.25") == 0
    assert m.value("karpenter_scheduler_queue_depth", controller=controller) == 12
    assert m.value("karpenter_scheduler_unschedulable_pods_count", controller=controller) == 2


def test_disruption_round_decision_and_failure(url: str, scrape: Any) -> None:
    pool, gone, c = _pool(), _pool(), PrometheusCounters()
    evaluation = "karpenter_voluntary_disruption_decision_evaluation_duration_seconds_count"
    decisions = "karpenter_voluntary_disruption_decisions_total"
    failures = "karpenter_voluntary_disruption_queue_failures_total"
    before = scrape(url)
    c.disruption_evaluated(0.1, {"Empty": 1, "Drifted": 0}, {(gone, "Empty"): 1})
    c.disruption_evaluated(
        0.2,
        {"Empty": 2, "Underutilized": 5, "Drifted": 1},
        {(pool, "Empty"): 3, (pool, "Underutilized"): 1, (pool, "Drifted"): 0},
    )
    c.disruption_decision("replace", "Underutilized", "multi", [pool])
    c.disruption_failed("replace", "Underutilized", "multi")
    m = scrape(url)
    assert m.value(evaluation, reason="all") == before.value(evaluation, reason="all") + 2
    for reason, count in (("empty", 2), ("underutilized", 5), ("drifted", 1)):
        assert m.value("karpenter_voluntary_disruption_eligible_nodes", reason=reason) == count
    allowed = "karpenter_nodepools_allowed_disruptions"
    assert m.value(allowed, nodepool=pool, reason="empty") == 3
    assert m.value(allowed, nodepool=pool, reason="underutilized") == 1
    assert m.has(allowed, nodepool=pool, reason="drifted")
    assert not m.has(allowed, nodepool=gone)  # a pool no longer in the round is dropped
    labels = {"decision": "replace", "reason": "underutilized", "consolidation_type": "multi"}
    assert m.value(decisions, **labels) == before.value(decisions, **labels) + 1
    by_pool = "karpenter_voluntary_disruption_decisions_by_nodepool_total"
    assert m.value(by_pool, nodepool=pool, **labels) == 1
    assert m.value(failures, **labels) == before.value(failures, **labels) + 1


def test_cloudprovider_calls_and_errors(url: str, scrape: Any) -> None:
    c = PrometheusCounters()
    before = scrape(url)
    c.cloudprovider_call("Create", 0.5, None)
    c.cloudprovider_call("Create", 0.7, "InsufficientCapacity")
    m = scrape(url)
    labels = {"controller": "worker", "method": "Create", "provider": "aws"}
    count = "karpenter_cloudprovider_duration_seconds_count"
    assert m.value(count, **labels) == before.value(count, **labels) + 2
    errors = "karpenter_cloudprovider_errors_total"
    failed = {**labels, "error": "InsufficientCapacity"}
    assert m.value(errors, **failed) == before.value(errors, **failed) + 1


def test_interruption_messages_and_actions(url: str, scrape: Any) -> None:
    before = scrape(url)
    metrics.interruption_received("SpotInterruption")
    metrics.interruption_received("NoOp")
    metrics.interruption_deleted()
    metrics.interruption_action("CordonAndDrain")
    m = scrape(url)
    received = "karpenter_interruption_received_messages_total"
    for kind in ("spot_interruption", "no_op"):
        assert m.value(received, message_type=kind) == before.value(received, message_type=kind) + 1
    deleted = "karpenter_interruption_deleted_messages_total"
    assert m.value(deleted) == before.value(deleted) + 1
    actions = "karpenter_interruption_actions_performed_total"
    assert (
        m.value(actions, action_type="CordonAndDrain")
        == before.value(actions, action_type="CordonAndDrain") + 1
    )


def _pod(name: str, phase: str, ready_at: str | None = None) -> dict[str, Any]:
    status: dict[str, Any] = {"phase": phase}
    if ready_at:
        status["conditions"] = [{"type": "Ready", "status": "True", "lastTransitionTime": ready_at}]
    return {
        "metadata": {"name": name, "namespace": "ns", "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {"nodeName": "node-a"} if phase != "Pending" else {},
        "status": status,
    }


def test_pod_state_and_startup_duration(url: str, scrape: Any) -> None:
    pods, name = PodStates(), f"web-{uuid.uuid4().hex[:6]}"
    startup = "karpenter_pods_startup_duration_seconds"
    before = scrape(url)
    pods.update(_pod(name, "Pending"))
    assert scrape(url).has("karpenter_pods_state", name=name, phase="Pending", node="")
    pods.update(_pod(name, "Running", ready_at="2026-01-01T00:00:42Z"))
    pods.update(_pod(name, "Running", ready_at="2026-01-01T00:00:42Z"))  # once per pod
    m = scrape(url)
    assert m.has("karpenter_pods_state", name=name, phase="Running", node="node-a")
    assert not m.has("karpenter_pods_state", name=name, phase="Pending")
    assert m.value(f"{startup}_count") == before.value(f"{startup}_count") + 1
    assert m.value(f"{startup}_sum") == pytest.approx(before.value(f"{startup}_sum") + 42)
    # a pod first seen running (a re-list) has no startup to tell
    other = f"api-{uuid.uuid4().hex[:6]}"
    pods.update(_pod(other, "Running", ready_at="2026-01-01T00:00:05Z"))
    assert scrape(url).value(f"{startup}_count") == m.value(f"{startup}_count")
    pods.delete("ns", name)
    assert not scrape(url).has("karpenter_pods_state", name=name)


def test_nodes_allocatable_and_count(url: str, scrape: Any) -> None:
    nodes, pool = NodeStates(), _pool()
    node = {
        "metadata": {
            "name": f"n-{pool}",
            "labels": {
                "karpenter.sh/nodepool": pool,
                "karpenter.sh/capacity-type": "on-demand",
                "node.kubernetes.io/instance-type": "m5.large",
                "topology.kubernetes.io/zone": "us-east-1a",
                "kubernetes.io/arch": "amd64",
            },
        },
        "status": {"allocatable": {"cpu": "1930m", "memory": "7Gi", "ephemeral-storage": "1k"}},
    }
    nodes.update(node)
    m = scrape(url)
    allocatable = "karpenter_nodes_allocatable"
    labels = {"nodepool": pool, "instance_type": "m5.large", "capacity_type": "on-demand"}
    assert m.value(allocatable, resource_type="cpu", **labels) == pytest.approx(1.93)
    assert m.value(allocatable, resource_type="memory", **labels) == 7 * 2**30
    assert m.value(allocatable, resource_type="ephemeral_storage", **labels) == 1000
    assert m.value("karpenter_cluster_state_node_count") == 1
    nodes.delete(f"n-{pool}")
    m = scrape(url)
    assert not m.has(allocatable, nodepool=pool)
    assert m.value("karpenter_cluster_state_node_count") == 0


def test_nodepool_usage_and_limits(url: str, scrape: Any) -> None:
    pools, name = PoolStates(), _pool()
    body: dict[str, Any] = {
        "metadata": {"name": name},
        "spec": {"limits": {"cpu": "100", "memory": "1000Gi"}},
        "status": {"resources": {"cpu": "4", "memory": "16Gi", "nodes": "2"}},
    }
    pools.update(body)
    m = scrape(url)
    assert m.value("karpenter_nodepools_usage", nodepool=name, resource_type="cpu") == 4
    assert m.value("karpenter_nodepools_usage", nodepool=name, resource_type="nodes") == 2
    assert m.value("karpenter_nodepools_limit", nodepool=name, resource_type="cpu") == 100
    del body["spec"]["limits"]["memory"]
    pools.update(body)
    assert not scrape(url).has("karpenter_nodepools_limit", nodepool=name, resource_type="memory")
    pools.delete(name)
    assert not scrape(url).has("karpenter_nodepools_usage", nodepool=name)


def test_the_karpenter_names_users_look_for_are_exported() -> None:
    wanted = {
        "karpenter_voluntary_disruption_decisions_total",
        "karpenter_voluntary_disruption_eligible_nodes",
        "karpenter_voluntary_disruption_decision_evaluation_duration_seconds_bucket",
        "karpenter_nodepools_allowed_disruptions",
        "karpenter_nodeclaims_disrupted_total",
        "karpenter_scheduler_scheduling_duration_seconds_bucket",
        "karpenter_scheduler_queue_depth",
        "karpenter_nodeclaims_created_total",
        "operator_nodeclaim_status_condition_transitions_total",
        "karpenter_nodeclaims_terminated_total",
        "karpenter_nodes_allocatable",
        "karpenter_nodepools_usage",
        "karpenter_nodepools_limit",
        "karpenter_cloudprovider_duration_seconds_bucket",
        "karpenter_cloudprovider_errors_total",
        "karpenter_interruption_received_messages_total",
        "karpenter_interruption_actions_performed_total",
        "karpenter_pods_startup_duration_seconds_sum",
    }
    assert wanted <= metrics.sample_names()


def test_reasons_are_snake_cased_as_karpenter_labels_them() -> None:
    assert snake("Underutilized") == "underutilized"
    assert snake("SpotInterruption") == "spot_interruption"
    assert snake("NoOp") == "no_op"
    assert snake("provisioned") == "provisioned"


def test_decision_labels_of_a_command() -> None:
    assert MarkInput("Empty", ["a", "b"], ["a", "b"]).decision() == ("delete", "empty")
    assert MarkInput("Underutilized", ["a"], ["a"], replacements=1).decision() == (
        "replace",
        "single",
    )
    assert MarkInput("Underutilized", ["a", "b"], ["a", "b"]).decision() == ("delete", "multi")
    assert MarkInput("Drifted", ["a"], ["a"], replacements=1).decision() == ("replace", "")


def test_an_event_told_again_within_its_window_is_dropped() -> None:
    now = [0.0]
    recent = Dedupe(clock=lambda: now[0], limit=2)
    assert recent.first(("Node", "a", "DisruptionBlocked"), 120)
    assert not recent.first(("Node", "a", "DisruptionBlocked"), 120)
    assert recent.first(("Node", "a", "Unconsolidatable"), 900)  # another reason
    now[0] = 121
    assert recent.first(("Node", "a", "DisruptionBlocked"), 120)  # the window passed
    assert not recent.first(("Node", "a", "Unconsolidatable"), 900)  # kept when pruning


def test_the_v1_14_hooks_feed_their_series(url: str, scrape: Any) -> None:
    pool, c = _pool(), PrometheusCounters()
    before = scrape(url)
    c.nodeclaim_unhealthy_disrupted("Ready", pool, "spot", "ami-1")
    c.instance_status_unhealthy("InstanceStatus")
    c.launch_failed("us-east-1a", "", "spot", "InsufficientInstanceCapacity")
    c.termination_failed("us-east-1a")
    c.batch("create_fleet", 0.3, 7)
    c.node_drained(pool)
    c.pods_drained("Underutilized", 4)
    c.pods_evicted(2, code="429")
    c.nodeclaim_termination_duration(pool, 30.0, instance_seconds=10.0)
    c.node_terminated(pool, "us-east-1a", deleting_seconds=5.0, lifetime_seconds=7200.0)
    c.disruption_validation_failed("multi")
    c.disruption_evaluated(0.1, {}, {}, {(pool, "Drifted"): 2})
    metrics.interruption_latency("2000-01-01T00:00:00Z")
    metrics.interruption_latency("not a time")  # nothing
    m = scrape(url)

    def grew(name: str, by: float = 1, **labels: str) -> None:
        assert m.value(name, **labels) == before.value(name, **labels) + by, name

    grew("karpenter_nodeclaims_unhealthy_disrupted_total", condition="Ready", nodepool=pool)
    grew("karpenter_interruption_instance_status_unhealthy_total", category="InstanceStatus")
    grew("karpenter_cloudprovider_instance_launch_failures_total", capacity_type="spot")
    grew("karpenter_cloudprovider_instance_termination_failures_total", zone="us-east-1a")
    grew("karpenter_cloudprovider_batcher_batch_size_sum", 7, batcher="create_fleet")
    grew("karpenter_nodes_drained_total", nodepool=pool)
    grew("karpenter_pods_drained_total", 4, reason="underutilized")
    grew("karpenter_pods_eviction_requests_total", 2, code="429")
    grew("karpenter_nodeclaims_termination_duration_seconds_bucket", nodepool=pool, le="32.0")
    grew("karpenter_nodeclaims_instance_termination_duration_seconds_sum", 10, nodepool=pool)
    grew("karpenter_nodes_termination_duration_seconds", 5, nodepool=pool, quantile="0.5")
    grew("karpenter_nodes_lifetime_duration_seconds_bucket", nodepool=pool, le="7200.0")
    grew("karpenter_voluntary_disruption_failed_validations_total", consolidation_type="multi")
    grew("karpenter_interruption_message_queue_duration_seconds_count")
    budgets = "karpenter_nodepools_nodes_consuming_budgets"
    assert m.value(budgets, nodepool=pool, reason="drifted") == 2
