"""NodePool limits and minValues; invalid and re-pending pods; API defaulting and effective
requests (init containers, sidecars, overhead); output cost rules."""

from __future__ import annotations

from tests.support.catalogs import od_price
from tests.support.labels import ARCH, CAPACITY_TYPE, FAMILY, HOSTNAME, INSTANCE_TYPE
from tests.support.manifests import container, node, nodeclaim, nodepool, pod, req
from tests.support.plans import claim_of, plan, reason, requirement, unschedulable, where

OD = [req(CAPACITY_TYPE, "In", "on-demand")]
AMD_OD = [*OD, req(ARCH, "In", "amd64")]


# ------------------------------------------------------------------------------- limits


def test_cpu_limit_holds_pods_beyond_it_unschedulable() -> None:
    out = plan(
        [
            nodepool(requirements=AMD_OD, limits={"cpu": "4"}),
            *[pod(f"p{i}", "1500m", "1Gi") for i in range(4)],
        ]
    )
    assert len(out["nodeClaims"]) == 1
    claim = out["nodeClaims"][0]
    assert claim["pods"] == ["default/p0", "default/p1"]
    assert claim["instanceTypes"] == ["c6i.xlarge", "m5.xlarge", "g4dn.xlarge"]  # all ≤ 4 cpu
    for p in ("default/p2", "default/p3"):
        assert "limits" in reason(out, p)


def test_cpu_limit_counts_existing_nodes_of_the_pool() -> None:
    # 6 cpu limit, a 4-cpu node of the pool exists: only 2-cpu types are left.
    out = plan(
        [
            nodepool(requirements=AMD_OD, limits={"cpu": "6"}),
            node("n1", "4", "16Gi", nodepool="default"),
            pod("x", "3500m", node_name="n1"),
            *[pod(f"p{i}", "1500m", "1Gi") for i in range(3)],
        ]
    )
    assert [c["instanceTypes"] for c in out["nodeClaims"]] == [["c5.large", "m5.large"]]
    assert sorted(unschedulable(out)) == ["default/p1", "default/p2"]
    assert "limits" in reason(out, "default/p1")


def test_existing_nodes_of_other_pools_do_not_count() -> None:
    out = plan(
        [
            nodepool(requirements=AMD_OD, limits={"cpu": "4"}),
            node("n1", "8", "32Gi", nodepool="other"),
            pod("x", "8", node_name="n1"),
            pod("p", "1500m", "1Gi"),
        ]
    )
    assert claim_of(out, "default/p")["nodePool"] == "default"


def test_in_flight_nodeclaim_counts_toward_limits() -> None:
    out = plan(
        [
            nodepool(requirements=AMD_OD, limits={"cpu": "4"}),
            nodeclaim("nc1", instance_type="m5.xlarge"),
            pod("big", "3", "1Gi"),
            pod("p", "3", "1Gi"),
        ]
    )
    assert out["existingNodes"] == [{"name": "nc1", "pods": ["default/big"]}]
    assert "limits" in reason(out, "default/p")


def test_nodes_limit() -> None:
    out = plan(
        [
            nodepool(
                requirements=[*AMD_OD, req(INSTANCE_TYPE, "In", "c5.large")], limits={"nodes": "1"}
            ),
            *[pod(f"p{i}", "1500m", "1Gi") for i in range(2)],
        ]
    )
    assert len(out["nodeClaims"]) == 1
    assert "limits" in reason(out, "default/p1")


def test_memory_limit() -> None:
    out = plan(
        [
            nodepool(requirements=AMD_OD, limits={"memory": "8Gi"}),
            *[pod(f"p{i}", "1", "3Gi") for i in range(3)],
        ]
    )
    assert out["nodeClaims"][0]["instanceTypes"] == ["m5.large", "c6i.xlarge"]
    assert "limits" in reason(out, "default/p2")


def test_limited_pool_falls_back_to_next_pool() -> None:
    out = plan(
        [
            nodepool("small", AMD_OD, limits={"cpu": "2"}, weight=10),
            nodepool("big", AMD_OD),
            *[pod(f"p{i}", "1500m", "1Gi") for i in range(2)],
        ]
    )
    assert [c["nodePool"] for c in out["nodeClaims"]] == ["small", "big"]


# ---------------------------------------------------------------------------- minValues


def test_min_values_not_met_is_unschedulable_naming_min_values() -> None:
    out = plan(
        [
            nodepool(requirements=[*AMD_OD, req(INSTANCE_TYPE, "Exists", min_values=3)]),
            pod("huge", "10", "1Gi"),  # only m7i.4xlarge fits
            pod("small", "1", "1Gi"),
        ]
    )
    assert "minValues" in reason(out, "default/huge")
    claim = claim_of(out, "default/small")
    assert len(claim["instanceTypes"]) >= 3
    it = requirement(claim, INSTANCE_TYPE)
    assert it is not None and it["minValues"] == 3


def test_min_values_on_instance_family() -> None:
    out = plan(
        [
            nodepool(requirements=[*AMD_OD, req(FAMILY, "Exists", min_values=3)]),
            pod("a", "6", "1Gi"),  # m5, r5, m7i families fit
            pod("b", "10", "1Gi"),  # only m7i
        ]
    )
    assert claim_of(out, "default/a")["instanceTypes"] == [
        "m5.2xlarge",
        "r5.2xlarge",
        "m7i.4xlarge",
    ]
    assert "minValues" in reason(out, "default/b")


def test_min_values_opens_a_new_claim_rather_than_narrowing_below_it() -> None:
    pool = nodepool(
        requirements=[
            *AMD_OD,
            req(INSTANCE_TYPE, "In", "c5.large", "m5.large", "c6i.xlarge", min_values=2),
        ]
    )
    out = plan([pool, pod("a", "1", "1Gi"), pod("b", "1", "5Gi"), pod("c", "100m", "1Gi")])
    assert [c["pods"] for c in out["nodeClaims"]] == [["default/a", "default/b"], ["default/c"]]
    assert all(len(c["instanceTypes"]) >= 2 for c in out["nodeClaims"])


# ------------------------------------------------------------------------- invalid pods


def test_hostname_node_selector_is_invalid_and_reported() -> None:
    out = plan(
        [
            nodepool(requirements=AMD_OD),
            pod("a", "1", "1Gi", node_selector={HOSTNAME: "n1"}),
            pod("b", "1", "1Gi"),
        ]
    )
    assert HOSTNAME in reason(out, "default/a")
    assert where(out)["default/b"] == "claim0"


def test_hostname_in_required_node_affinity_is_invalid() -> None:
    aff = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [req(HOSTNAME, "In", "n1")]}]
            }
        }
    }
    out = plan([nodepool(requirements=AMD_OD), pod("a", "1", "1Gi", affinity=aff)])
    assert HOSTNAME in reason(out, "default/a")


def test_every_pending_pod_appears_exactly_once() -> None:
    # plan() checks the rule; here with a mix of outcomes.
    out = plan(
        [
            nodepool(requirements=AMD_OD, limits={"cpu": "4"}),
            node("n1", "2", "8Gi"),
            pod("on-node", "1500m", "1Gi"),
            pod("claim", "3", "1Gi"),
            pod("over-limit", "3", "1Gi"),
            pod("invalid", "1", node_selector={HOSTNAME: "x"}),
            pod("no-pvc", "1", pvcs=["missing"]),
        ]
    )
    assert where(out) == {
        "default/on-node": "node:n1",
        "default/claim": "claim0",
        "default/over-limit": "unschedulable",
        "default/invalid": "unschedulable",
        "default/no-pvc": "unschedulable",
    }


def test_pods_on_deleting_node_are_pending_again_except_daemonset_pods() -> None:
    out = plan(
        [
            nodepool(requirements=AMD_OD),
            node("old", "4", "16Gi", deleting=True),
            pod("x", "1", "1Gi", node_name="old"),
            pod("logs", "100m", node_name="old", owner_kind="DaemonSet"),
        ]
    )
    # The deleting node takes nothing; x needs a new claim; the DaemonSet pod is not pending.
    assert out["existingNodes"] == []
    assert where(out) == {"default/x": "claim0"}


def test_cordoned_node_is_not_used() -> None:
    out = plan(
        [nodepool(requirements=AMD_OD), node("old", unschedulable=True), pod("a", "1", "1Gi")]
    )
    assert where(out) == {"default/a": "claim0"}


def test_terminal_pods_are_ignored() -> None:
    done = pod("done", "1", "1Gi")
    done["status"] = {"phase": "Succeeded"}
    out = plan([nodepool(requirements=AMD_OD), done, pod("a", "1", "1Gi")])
    assert where(out) == {"default/a": "claim0"}


def test_pending_daemonset_pod_is_reported_not_provisioned_for() -> None:
    out = plan([nodepool(requirements=AMD_OD), pod("ds-x", "100m", owner_kind="DaemonSet")])
    assert out["nodeClaims"] == []
    assert "DaemonSet" in reason(out, "default/ds-x")


# --------------------------------------------------------------------- effective requests


def test_requests_default_to_limits() -> None:
    p = pod("a", containers=[container(None, None, limits={"cpu": "3", "memory": "2Gi"})])
    out = plan([nodepool(requirements=AMD_OD), p])
    claim = claim_of(out, "default/a")
    assert claim["requests"] == {"cpu": "3", "memory": "2Gi", "pods": "1"}
    assert claim["instanceTypes"][0] == "c6i.xlarge"


def test_explicit_request_wins_over_limit() -> None:
    p = pod("a", containers=[container("500m", None, limits={"cpu": "3", "memory": "2Gi"})])
    out = plan([nodepool(requirements=AMD_OD), p])
    assert claim_of(out, "default/a")["requests"] == {"cpu": "500m", "memory": "2Gi", "pods": "1"}


def test_init_container_larger_than_app_sets_the_request() -> None:
    p = pod(
        "a",
        containers=[container("1", "1Gi")],
        initContainers=[container("3", "512Mi", name="init")],
    )
    out = plan([nodepool(requirements=AMD_OD), p])
    assert claim_of(out, "default/a")["requests"] == {"cpu": "3", "memory": "1Gi", "pods": "1"}


def test_sidecar_adds_to_app_and_to_later_init_containers() -> None:
    sidecar = {**container("500m", "256Mi", name="side"), "restartPolicy": "Always"}
    p = pod(
        "a",
        containers=[container("1", "1Gi")],
        initContainers=[sidecar, container("1", "512Mi", name="init")],
    )
    out = plan([nodepool(requirements=AMD_OD), p])
    assert claim_of(out, "default/a")["requests"] == {
        "cpu": "1500m",
        "memory": "1280Mi",
        "pods": "1",
    }


def test_init_container_after_sidecar_peaks_with_it() -> None:
    sidecar = {**container("500m", "256Mi", name="side"), "restartPolicy": "Always"}
    p = pod(
        "a",
        containers=[container("1", "1Gi")],
        initContainers=[sidecar, container("2", "128Mi", name="init")],
    )
    out = plan([nodepool(requirements=AMD_OD), p])
    # init phase: 2 + 0.5 = 2500m cpu; running: 1.5 cpu, 1280Mi.
    assert claim_of(out, "default/a")["requests"] == {
        "cpu": "2500m",
        "memory": "1280Mi",
        "pods": "1",
    }


def test_pod_overhead_is_added() -> None:
    p = pod("a", "1", "1Gi", overhead={"cpu": "250m", "memory": "64Mi"})
    out = plan([nodepool(requirements=AMD_OD), p])
    assert claim_of(out, "default/a")["requests"] == {
        "cpu": "1250m",
        "memory": "1088Mi",
        "pods": "1",
    }


def test_multiple_containers_sum() -> None:
    p = pod("a", containers=[container("1", "1Gi"), container("700m", "512Mi", name="b")])
    out = plan([nodepool(requirements=AMD_OD), p])
    claim = claim_of(out, "default/a")
    assert claim["requests"] == {"cpu": "1700m", "memory": "1536Mi", "pods": "1"}


# --------------------------------------------------------------------------------- cost


def test_cost_is_sum_of_claim_prices_and_lower_bound_below_it() -> None:
    out = plan(
        [
            nodepool(requirements=AMD_OD),
            *[pod(f"p{i}", "1500m", "1Gi") for i in range(3)],
            pod("g", "1", "1Gi", extra={"nvidia.com/gpu": "1"}),
        ]
    )
    prices = [c["price"] for c in out["nodeClaims"]]
    assert out["cost"]["perHour"] == round(sum(prices), 6)
    assert 0 < out["cost"]["lowerBound"] <= out["cost"]["perHour"]
    assert od_price("g4dn.xlarge") in prices


def test_cost_is_zero_without_new_claims() -> None:
    out = plan([nodepool(), node("n1"), pod("a", "1", "1Gi")])
    assert out["cost"] == {"perHour": 0, "lowerBound": 0}
