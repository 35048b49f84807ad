"""Where pods land: existing capacity, claims of this run, new claims by NodePool weight; which
instance types a claim lists and at what price; DaemonSet overhead in a claim's requests."""

from __future__ import annotations

from tests.support.catalogs import ZA, ZB, ZC, ZONES, catalog, od_price, spot_price
from tests.support.labels import ARCH, CAPACITY_TYPE, GPU, INSTANCE_TYPE
from tests.support.manifests import daemonset, node, nodeclaim, nodepool, pod, req, taint
from tests.support.plans import claim_of, plan, reason, requirement, where

OD = [req(CAPACITY_TYPE, "In", "on-demand")]
AMD_OD = [*OD, req(ARCH, "In", "amd64")]


def test_largest_pod_is_placed_first_and_takes_existing_room() -> None:
    # n1 has room for the large pod or the small one, not both: largest first wins it.
    out = plan(
        [
            nodepool(requirements=OD),
            node("n1", "4", "16Gi"),
            pod("small", "1", "1Gi"),
            pod("large", "3500m", "1Gi"),
        ]
    )
    assert out["existingNodes"] == [{"name": "n1", "pods": ["default/large"]}]
    assert where(out)["default/small"] == "claim0"
    assert len(out["nodeClaims"]) == 1


def test_existing_node_with_room_is_used_before_a_new_claim() -> None:
    out = plan([nodepool(), node("n1", "4", "16Gi"), pod("a", "1", "1Gi"), pod("b", "1", "1Gi")])
    assert out["nodeClaims"] == []
    assert out["existingNodes"] == [{"name": "n1", "pods": ["default/a", "default/b"]}]
    assert out["cost"]["perHour"] == 0


def test_existing_node_counts_pods_already_bound_to_it() -> None:
    # n1 has 4 cpu; a bound pod already uses 3, so the pending 2-cpu pod needs a new node.
    out = plan(
        [
            nodepool(requirements=AMD_OD),
            node("n1", "4", "16Gi"),
            pod("bound", "3", "1Gi", node_name="n1"),
            pod("a", "2", "1Gi"),
        ]
    )
    assert out["existingNodes"] == []
    assert claim_of(out, "default/a")["instanceTypes"][0] == "c5.large"


def test_in_flight_nodeclaim_is_used_before_a_new_claim() -> None:
    out = plan([nodepool(requirements=OD), nodeclaim("nc1"), pod("a", "1", "1Gi")])
    assert out["nodeClaims"] == []
    assert out["existingNodes"] == [{"name": "nc1", "pods": ["default/a"]}]


def test_in_flight_nodeclaim_capacity_is_its_instance_type() -> None:
    # nc1 is a c5.large (2 cpu): one 1500m pod fits, the second does not.
    out = plan(
        [
            nodepool(requirements=AMD_OD),
            nodeclaim("nc1", instance_type="c5.large"),
            pod("a", "1500m", "1Gi"),
            pod("b", "1500m", "1Gi"),
        ]
    )
    assert out["existingNodes"] == [{"name": "nc1", "pods": ["default/a"]}]
    assert where(out)["default/b"] == "claim0"


def test_claims_opened_in_this_run_are_reused() -> None:
    out = plan([nodepool(requirements=AMD_OD), *[pod(f"p{i}", "500m", "512Mi") for i in range(3)]])
    assert len(out["nodeClaims"]) == 1
    claim = out["nodeClaims"][0]
    assert claim["pods"] == ["default/p0", "default/p1", "default/p2"]
    assert claim["requests"] == {"cpu": "1500m", "memory": "1536Mi", "pods": "3"}
    assert claim["instanceTypes"][0] == "c5.large"
    assert claim["price"] == od_price("c5.large")


def test_claims_are_filled_first_fit_in_creation_order() -> None:
    # Two 1500m pods need two 2-cpu nodes; the 400m pod then goes to the first claim.
    out = plan(
        [
            nodepool(requirements=[*AMD_OD, req(INSTANCE_TYPE, "In", "c5.large")]),
            pod("a", "1500m", "1Gi"),
            pod("b", "1500m", "1Gi"),
            pod("c", "400m", "256Mi"),
        ]
    )
    assert [c["pods"] for c in out["nodeClaims"]] == [
        ["default/a", "default/c"],
        ["default/b"],
    ]


def test_higher_weight_nodepool_is_tried_first() -> None:
    out = plan(
        [
            nodepool("low", OD, weight=10),
            nodepool("high", [*OD, req(ARCH, "In", "arm64")], weight=50),
            pod("a", "1", "1Gi"),
        ]
    )
    claim = claim_of(out, "default/a")
    assert claim["nodePool"] == "high"
    assert claim["instanceTypes"] == ["m6g.large", "m6g.xlarge"]


def test_nodepool_without_weight_comes_after_weighted_ones() -> None:
    out = plan(
        [
            nodepool("aaa-unweighted", OD),
            nodepool("weighted", [*OD, req(ARCH, "In", "amd64")], weight=1),
            pod("a", "1", "1Gi"),
        ]
    )
    assert claim_of(out, "default/a")["nodePool"] == "weighted"


def test_falls_back_to_next_nodepool_when_first_cannot_fit() -> None:
    # "high" only has 4-cpu arm types; a 6-cpu pod must come from "low".
    out = plan(
        [
            nodepool("low", OD, weight=10),
            nodepool("high", [*OD, req(ARCH, "In", "arm64")], weight=50),
            pod("a", "6", "1Gi"),
        ]
    )
    claim = claim_of(out, "default/a")
    assert claim["nodePool"] == "low"
    assert claim["instanceTypes"] == ["m5.2xlarge", "r5.2xlarge", "m7i.4xlarge"]
    assert claim["price"] == od_price("m5.2xlarge")


def test_claim_lists_every_compatible_type_cheapest_first() -> None:
    out = plan([nodepool(requirements=AMD_OD), pod("a", "3", "10Gi")])
    claim = claim_of(out, "default/a")
    # 3 cpu and 10Gi: m5.xlarge (0.192), g4dn.xlarge (0.526 but no GPU asked: still compatible),
    # m5.2xlarge, r5.2xlarge, m7i.4xlarge; c6i.xlarge has only 8Gi.
    assert claim["instanceTypes"] == [
        "m5.xlarge",
        "m5.2xlarge",
        "r5.2xlarge",
        "g4dn.xlarge",
        "m7i.4xlarge",
    ]
    assert claim["price"] == od_price("m5.xlarge")
    it_req = requirement(claim, INSTANCE_TYPE)
    assert it_req is not None and it_req["operator"] == "In"
    assert sorted(it_req["values"]) == sorted(claim["instanceTypes"])


def test_price_is_cheapest_offering_across_capacity_types_and_zones() -> None:
    out = plan(
        [nodepool(requirements=[req(INSTANCE_TYPE, "In", "m5.large")]), pod("a", "1", "1Gi")]
    )
    claim = claim_of(out, "default/a")
    assert claim["capacityTypes"] == ["on-demand", "spot"]
    assert claim["zones"] == list(ZONES)
    assert claim["price"] == spot_price("m5.large", ZA)


def test_unavailable_offerings_are_ignored() -> None:
    # c5.large is cheaper than m5.large but none of its on-demand offerings is available.
    cat = catalog(unavailable=[("c5.large", z, "on-demand") for z in ZONES])
    out = plan(
        [
            nodepool(requirements=[*OD, req(INSTANCE_TYPE, "In", "c5.large", "m5.large")]),
            pod("a", "1", "1Gi"),
        ],
        cat,
    )
    claim = claim_of(out, "default/a")
    assert claim["instanceTypes"] == ["m5.large"]
    assert claim["price"] == od_price("m5.large")


def test_unavailable_offering_removes_its_zone_and_price() -> None:
    cat = catalog(unavailable=[("c5.large", ZA, "on-demand")])
    out = plan(
        [nodepool(requirements=[*OD, req(INSTANCE_TYPE, "In", "c5.large")]), pod("a", "1", "1Gi")],
        cat,
    )
    claim = claim_of(out, "default/a")
    assert claim["zones"] == [ZB, ZC]
    assert claim["price"] == od_price("c5.large", ZB)


def test_instance_types_filtered_by_nodepool_requirements() -> None:
    out = plan([nodepool(requirements=[*OD, req(ARCH, "In", "arm64")]), pod("a", "1", "1Gi")])
    assert claim_of(out, "default/a")["instanceTypes"] == ["m6g.large", "m6g.xlarge"]


def test_instance_types_filtered_by_resources() -> None:
    out = plan([nodepool(requirements=AMD_OD), pod("a", "2500m", "20Gi")])
    assert claim_of(out, "default/a")["instanceTypes"] == [
        "m5.2xlarge",
        "r5.2xlarge",
        "m7i.4xlarge",
    ]


def test_extended_resource_selects_gpu_type() -> None:
    out = plan([nodepool(requirements=OD), pod("g", "1", "1Gi", extra={GPU: "1"})])
    claim = claim_of(out, "default/g")
    assert claim["instanceTypes"] == ["g4dn.xlarge"]
    assert claim["zones"] == [ZA, ZB]  # g4dn is not offered in zone c
    assert claim["requests"][GPU] == "1"
    assert claim["price"] == od_price("g4dn.xlarge")


def test_allocatable_is_capacity_minus_overhead() -> None:
    # With 200m reserved per node, a 2-cpu pod no longer fits a 2-cpu type.
    cat = catalog(overhead={"cpu": "200m", "memory": "256Mi"})
    out = plan([nodepool(requirements=AMD_OD), pod("a", "1900m", "1Gi")], cat)
    assert claim_of(out, "default/a")["instanceTypes"][0] == "c6i.xlarge"


def test_pod_too_large_for_any_type_is_unschedulable_naming_resources() -> None:
    out = plan([nodepool(requirements=OD), pod("huge", "64", "1Gi")])
    assert out["nodeClaims"] == []
    why = reason(out, "default/huge")
    assert "no instance type fits" in why and "cpu" in why


def test_daemonset_overhead_is_in_claim_requests_and_type_choice() -> None:
    # 1700m + 500m DaemonSet = 2200m: 2-cpu types no longer fit.
    out = plan(
        [
            nodepool(requirements=AMD_OD),
            daemonset("logs", "500m", "256Mi"),
            pod("a", "1700m", "1Gi"),
            pod("b", "100m", "256Mi"),
        ]
    )
    assert len(out["nodeClaims"]) == 1
    claim = out["nodeClaims"][0]
    assert claim["instanceTypes"][0] == "c6i.xlarge"
    # DaemonSet requests plus the pods; `pods` counts every pod that will run, daemon included.
    assert claim["requests"] == {"cpu": "2300m", "memory": "1536Mi", "pods": "3"}


def test_daemonset_not_tolerating_nodepool_taint_adds_no_overhead() -> None:
    out = plan(
        [
            nodepool(requirements=AMD_OD, taints=[{"key": "dedicated", "effect": "NoSchedule"}]),
            daemonset("logs", "500m", "256Mi"),
            pod(
                "a",
                "1",
                "1Gi",
                tolerations=[{"key": "dedicated", "operator": "Exists"}],
            ),
        ]
    )
    assert claim_of(out, "default/a")["requests"] == {"cpu": "1", "memory": "1Gi", "pods": "1"}


def test_daemonset_with_non_matching_node_selector_adds_no_overhead() -> None:
    out = plan(
        [
            nodepool(requirements=AMD_OD),
            daemonset("arm-only", "500m", "256Mi", node_selector={ARCH: "arm64"}),
            daemonset("everywhere", "100m", "64Mi"),
            pod("a", "1", "1Gi"),
        ]
    )
    assert claim_of(out, "default/a")["requests"] == {
        "cpu": "1100m",
        "memory": "1088Mi",
        "pods": "2",
    }


def test_no_nodepool_leaves_pods_unschedulable() -> None:
    out = plan([pod("a", "1", "1Gi")])
    assert out["nodeClaims"] == []
    assert "NodePool" in reason(out, "default/a")


def test_a_booting_node_is_simulated_with_the_taints_it_will_have() -> None:
    """A registered Node not yet initialized still carries the unregistered and not-ready
    taints and its claim's startup taints; pending pods count on it as Karpenter does, and
    get no second node. Once initialized, its taints are taken as they are."""
    booting = node(
        "n1",
        nodepool="default",
        taints=[
            taint("karpenter.sh/unregistered", "NoExecute"),
            taint("node.kubernetes.io/not-ready"),
            taint("example.com/agent-starting"),
        ],
    )
    claim = nodeclaim("default-abcde")
    claim["spec"]["startupTaints"] = [taint("example.com/agent-starting")]
    claim["status"] = {"nodeName": "n1", "providerID": booting["spec"]["providerID"]}
    docs = [nodepool(), booting, claim, pod("web", "1", "1Gi")]
    out = plan(docs)
    assert where(out) == {"default/web": "node:n1"} and out["nodeClaims"] == []

    booting["metadata"]["labels"]["karpenter.sh/initialized"] = "true"
    out = plan([nodepool(), booting, claim, pod("web", "1", "1Gi")])
    assert where(out)["default/web"] == "claim0"


def test_a_launched_claim_is_its_node_before_registration_names_it() -> None:
    """A launched claim carries ``status.providerID`` (as Kubernetes spells it) before
    registration writes ``status.nodeName``; its Node, once there, represents it. Counted
    twice, as an empty in-flight claim beside the Node whose pod the kube-scheduler bound,
    the claim took a pending pod that fits nowhere: a 1,000-pod burst's rounds created too
    few claims until registration caught up (docs/performance.md, session 27)."""
    booting = node(
        "i-0abc", nodepool="default", taints=[taint("karpenter.sh/unregistered", "NoExecute")]
    )
    claim = nodeclaim("default-abcde")
    claim["status"] = {"providerID": booting["spec"]["providerID"]}
    bound = pod("first", "3", "1Gi", node_name="i-0abc")
    out = plan([nodepool(), booting, claim, bound, pod("second", "3", "1Gi")])
    assert where(out) == {"default/second": "claim0"}
    assert len(out["nodeClaims"]) == 1
