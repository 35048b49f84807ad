"""Node constraints: taints and tolerations, nodeSelector, required node affinity (terms ORed,
every operator, custom catalog labels, beta keys) and relaxed preferences."""

from __future__ import annotations

from tests.support.catalogs import ZA, ZB, ZC, ZONES, od_price, spot_price, types_with
from tests.support.labels import (
    ARCH,
    CAPACITY_TYPE,
    GENERATION,
    INSTANCE_TYPE,
    NODEPOOL,
    SIZE,
    ZONE,
)
from tests.support.manifests import (
    node,
    node_affinity,
    nodepool,
    pod,
    preferred_node_affinity,
    preferred_pod_affinity,
    req,
    spread,
    taint,
    toleration,
)
from tests.support.plans import claim_of, plan, reason, requirement, where

OD = [req(CAPACITY_TYPE, "In", "on-demand")]
AMD_OD = [*OD, req(ARCH, "In", "amd64")]
WEB = {"app": "web"}


def by_price(names: list[str]) -> list[str]:
    return sorted(names, key=lambda n: (od_price(n), n))


# ----------------------------------------------------------------------------- taints


def test_untolerated_nodepool_taint_falls_back_to_other_pool() -> None:
    out = plan(
        [
            nodepool("gpu", OD, taints=[taint("dedicated", value="gpu")], weight=50),
            nodepool("general", AMD_OD),
            pod("plain", "1", "1Gi"),
        ]
    )
    assert claim_of(out, "default/plain")["nodePool"] == "general"


def test_untolerated_taint_reason_names_the_taint() -> None:
    out = plan(
        [nodepool("gpu", OD, taints=[taint("dedicated", value="gpu")]), pod("a", "1", "1Gi")]
    )
    why = reason(out, "default/a")
    assert "dedicated=gpu:NoSchedule" in why and "gpu" in why


def test_equal_toleration_with_matching_value_tolerates() -> None:
    out = plan(
        [
            nodepool("gpu", OD, taints=[taint("dedicated", value="gpu")], weight=50),
            nodepool("general", AMD_OD),
            pod(
                "b",
                "1",
                "1Gi",
                tolerations=[toleration("dedicated", value="gpu", effect="NoSchedule")],
            ),
        ]
    )
    assert claim_of(out, "default/b")["nodePool"] == "gpu"


def test_equal_toleration_with_other_value_does_not_tolerate() -> None:
    out = plan(
        [
            nodepool(requirements=OD, taints=[taint("x", value="1")]),
            pod("a", "1", "1Gi", tolerations=[toleration("x", value="2")]),
        ]
    )
    assert "x=1:NoSchedule" in reason(out, "default/a")


def test_exists_toleration_and_effects() -> None:
    out = plan(
        [
            nodepool(requirements=AMD_OD, taints=[taint("x", "NoExecute")]),
            # wrong effect: does not tolerate
            pod("a", "1", "1Gi", tolerations=[toleration("x", "Exists", effect="NoSchedule")]),
            # Exists with no effect tolerates every effect of key x
            pod("b", "1", "1Gi", tolerations=[toleration("x", "Exists")]),
            # Exists with no key tolerates everything
            pod("c", "1", "1Gi", tolerations=[toleration(operator="Exists")]),
        ]
    )
    assert "x:NoExecute" in reason(out, "default/a")
    assert where(out)["default/b"] == where(out)["default/c"] == "claim0"


def test_startup_taints_need_no_toleration() -> None:
    out = plan(
        [
            nodepool(requirements=AMD_OD, startup_taints=[taint("node.example/init")]),
            pod("a", "1", "1Gi"),
        ]
    )
    assert claim_of(out, "default/a")["nodePool"] == "default"


def test_existing_node_taint_keeps_untolerating_pods_off() -> None:
    out = plan(
        [
            nodepool(requirements=AMD_OD),
            node("tainted", taints=[taint("dedicated", value="db")]),
            pod("a", "1", "1Gi"),
            pod("db", "1", "1Gi", tolerations=[toleration("dedicated", "Exists")]),
        ]
    )
    assert where(out) == {"default/a": "claim0", "default/db": "node:tainted"}


def test_prefer_no_schedule_pool_is_used_only_after_relaxation() -> None:
    # The PreferNoSchedule pool has the higher weight, but a clean pool is preferred.
    docs = [
        nodepool("soft", OD, taints=[taint("soft", "PreferNoSchedule")], weight=50),
        nodepool("clean", AMD_OD),
        pod("a", "1", "1Gi"),
    ]
    assert claim_of(plan(docs), "default/a")["nodePool"] == "clean"
    # With only the tainted pool, the taint is tolerated after relaxation.
    out = plan([docs[0], docs[2]])
    assert claim_of(out, "default/a")["nodePool"] == "soft"


def test_prefer_no_schedule_existing_node_used_when_nothing_else() -> None:
    soft = node("n1", taints=[taint("soft", "PreferNoSchedule")])
    out = plan([nodepool(requirements=AMD_OD), soft, pod("a", "1", "1Gi")])
    assert where(out)["default/a"] == "claim0"
    out = plan([soft, pod("a", "1", "1Gi")])
    assert out["existingNodes"] == [{"name": "n1", "pods": ["default/a"]}]


# ---------------------------------------------------------------------- nodeSelector


def test_node_selector_on_custom_catalog_label() -> None:
    out = plan([nodepool(requirements=OD), pod("a", "1", "1Gi", node_selector={SIZE: "medium"})])
    claim = claim_of(out, "default/a")
    assert claim["instanceTypes"] == by_price(types_with(size="medium"))
    assert claim["price"] == od_price("m6g.xlarge")


def test_node_selector_on_instance_type_and_capacity_type() -> None:
    out = plan(
        [
            nodepool(),
            pod("a", "1", "1Gi", node_selector={INSTANCE_TYPE: "m5.large", CAPACITY_TYPE: "spot"}),
        ]
    )
    claim = claim_of(out, "default/a")
    assert claim["instanceTypes"] == ["m5.large"]
    assert claim["capacityTypes"] == ["spot"]
    assert claim["price"] == spot_price("m5.large")


def test_node_selector_on_nodepool_label() -> None:
    out = plan(
        [
            nodepool("a", AMD_OD, weight=50),
            nodepool("b", AMD_OD),
            pod("x", "1", "1Gi", node_selector={NODEPOOL: "b"}),
        ]
    )
    claim = claim_of(out, "default/x")
    assert claim["nodePool"] == "b"
    assert requirement(claim, NODEPOOL) == {"key": NODEPOOL, "operator": "In", "values": ["b"]}


def test_node_selector_on_label_nobody_offers_is_unschedulable() -> None:
    out = plan([nodepool(requirements=OD), pod("a", "1", "1Gi", node_selector={"team": "x"})])
    assert "team" in reason(out, "default/a")


def test_node_selector_on_nodepool_template_label() -> None:
    out = plan(
        [
            nodepool("other", AMD_OD, labels={"team": "y"}, weight=50),
            nodepool("mine", AMD_OD, labels={"team": "x"}),
            pod("a", "1", "1Gi", node_selector={"team": "x"}),
        ]
    )
    claim = claim_of(out, "default/a")
    assert claim["nodePool"] == "mine"
    assert requirement(claim, "team") == {"key": "team", "operator": "In", "values": ["x"]}


def test_node_selector_zone_outside_nodepool_is_unschedulable() -> None:
    out = plan(
        [
            nodepool(requirements=[*OD, req(ZONE, "In", ZA)]),
            pod("a", "1", "1Gi", node_selector={ZONE: ZB}),
        ]
    )
    assert ZONE in reason(out, "default/a")


# ------------------------------------------------------------------ required affinity


def test_required_terms_are_ored_second_used_when_first_unsatisfiable() -> None:
    aff = node_affinity([req(ZONE, "In", "us-west-2a")], [req(ARCH, "In", "arm64")])
    out = plan([nodepool(requirements=OD), pod("a", "1", "1Gi", affinity=aff)])
    assert claim_of(out, "default/a")["instanceTypes"] == ["m6g.large", "m6g.xlarge"]


def test_required_first_term_used_when_satisfiable() -> None:
    aff = node_affinity([req(ZONE, "In", ZC)], [req(ARCH, "In", "arm64")])
    out = plan([nodepool(requirements=AMD_OD), pod("a", "1", "1Gi", affinity=aff)])
    claim = claim_of(out, "default/a")
    assert claim["zones"] == [ZC]
    assert claim["price"] == od_price("c5.large", ZC)


def test_operator_in_on_custom_label() -> None:
    aff = node_affinity([req(SIZE, "In", "medium", "large")])
    out = plan([nodepool(requirements=AMD_OD), pod("a", "1", "1Gi", affinity=aff)])
    expected = types_with(size="medium", arch="amd64") + types_with(size="large", arch="amd64")
    assert claim_of(out, "default/a")["instanceTypes"] == by_price(expected)


def test_operator_not_in_on_custom_label() -> None:
    aff = node_affinity([req(SIZE, "NotIn", "small", "medium", "large")])
    out = plan([nodepool(requirements=OD), pod("a", "1", "1Gi", affinity=aff)])
    assert claim_of(out, "default/a")["instanceTypes"] == ["m7i.4xlarge"]


def test_operator_exists_and_does_not_exist_on_custom_label() -> None:
    exists = node_affinity([req(SIZE, "Exists")])
    out = plan([nodepool(requirements=AMD_OD), pod("a", "1", "1Gi", affinity=exists)])
    assert len(claim_of(out, "default/a")["instanceTypes"]) == 8
    # Every catalog type defines `size`, so DoesNotExist can never be met.
    missing = node_affinity([req(SIZE, "DoesNotExist")])
    out = plan([nodepool(requirements=AMD_OD), pod("b", "1", "1Gi", affinity=missing)])
    assert "size DoesNotExist" in reason(out, "default/b")


def test_operator_does_not_exist_on_label_no_type_defines() -> None:
    aff = node_affinity([req("example.com/gpu-kind", "DoesNotExist")])
    out = plan([nodepool(requirements=AMD_OD), pod("a", "1", "1Gi", affinity=aff)])
    assert claim_of(out, "default/a")["instanceTypes"][0] == "c5.large"


def test_operator_gt_and_lt_on_integer_label() -> None:
    out = plan(
        [
            nodepool(requirements=OD),
            pod("new", "1", "1Gi", affinity=node_affinity([req(GENERATION, "Gt", "5")])),
        ]
    )
    assert claim_of(out, "default/new")["instanceTypes"] == [
        "m6g.large",
        "m6g.xlarge",
        "c6i.xlarge",
        "m7i.4xlarge",
    ]
    out = plan(
        [
            nodepool(requirements=OD),
            pod("old", "1", "1Gi", affinity=node_affinity([req(GENERATION, "Lt", "5")])),
        ]
    )
    assert claim_of(out, "default/old")["instanceTypes"] == ["g4dn.xlarge"]


def test_gt_and_lt_together_form_a_range() -> None:
    aff = node_affinity([req(GENERATION, "Gt", "4"), req(GENERATION, "Lt", "6")])
    out = plan([nodepool(requirements=AMD_OD), pod("a", "1", "1Gi", affinity=aff)])
    assert claim_of(out, "default/a")["instanceTypes"] == by_price(
        types_with(generation="5", arch="amd64")
    )


def test_beta_arch_label_is_normalised() -> None:
    out = plan(
        [
            nodepool(requirements=OD),
            pod("a", "1", "1Gi", node_selector={"beta.kubernetes.io/arch": "arm64"}),
        ]
    )
    assert claim_of(out, "default/a")["instanceTypes"] == ["m6g.large", "m6g.xlarge"]


def test_beta_zone_label_is_normalised() -> None:
    aff = node_affinity([req("failure-domain.beta.kubernetes.io/zone", "In", ZC)])
    out = plan([nodepool(requirements=AMD_OD), pod("a", "1", "1Gi", affinity=aff)])
    claim = claim_of(out, "default/a")
    assert claim["zones"] == [ZC]
    assert requirement(claim, ZONE) == {"key": ZONE, "operator": "In", "values": [ZC]}


# -------------------------------------------------------------------------- preferences


def test_preferred_zone_is_honoured_when_possible() -> None:
    aff = preferred_node_affinity((10, [req(ZONE, "In", ZC)]))
    out = plan([nodepool(requirements=AMD_OD), pod("a", "1", "1Gi", affinity=aff)])
    claim = claim_of(out, "default/a")
    assert claim["zones"] == [ZC]
    assert claim["price"] == od_price("c5.large", ZC)


def test_impossible_preference_is_dropped() -> None:
    aff = preferred_node_affinity((10, [req(ZONE, "In", "us-west-2a")]))
    out = plan([nodepool(requirements=AMD_OD), pod("a", "1", "1Gi", affinity=aff)])
    claim = claim_of(out, "default/a")
    assert claim["zones"] == list(ZONES)
    assert claim["price"] == od_price("c5.large", ZA)


def test_heaviest_preference_first_then_next_heaviest() -> None:
    aff = preferred_node_affinity(
        (10, [req(ZONE, "In", ZB)]),
        (50, [req(ZONE, "In", "us-west-2a")]),
        (30, [req(ZONE, "In", ZC)]),
    )
    out = plan([nodepool(requirements=AMD_OD), pod("a", "1", "1Gi", affinity=aff)])
    assert claim_of(out, "default/a")["zones"] == [ZC]


def test_preferred_node_affinity_yields_to_required() -> None:
    aff = {
        **node_affinity([req(ARCH, "In", "amd64")]),
    }
    aff["nodeAffinity"].update(
        preferred_node_affinity((10, [req(ARCH, "In", "arm64")]))["nodeAffinity"]
    )
    out = plan([nodepool(requirements=OD), pod("a", "1", "1Gi", affinity=aff)])
    assert claim_of(out, "default/a")["instanceTypes"][0] == "c5.large"


def test_preferred_pod_anti_affinity_honoured_when_possible() -> None:
    pods = [
        pod(
            f"w{i}",
            "100m",
            labels=WEB,
            affinity=preferred_pod_affinity("kubernetes.io/hostname", WEB, anti=True),
        )
        for i in range(2)
    ]
    out = plan([nodepool(requirements=AMD_OD), *pods])
    assert where(out) == {"default/w0": "claim0", "default/w1": "claim1"}


def test_preferred_pod_affinity_dropped_when_no_target() -> None:
    aff = preferred_pod_affinity(ZONE, {"app": "nothing"})
    out = plan([nodepool(requirements=AMD_OD), pod("a", "100m", affinity=aff)])
    assert where(out) == {"default/a": "claim0"}


def test_schedule_anyway_spread_is_honoured_when_possible() -> None:
    pods = [
        pod(f"w{i}", "100m", labels=WEB, spread=[spread(when="ScheduleAnyway")]) for i in range(3)
    ]
    out = plan([nodepool(requirements=AMD_OD), *pods])
    assert sorted(c["zones"][0] for c in out["nodeClaims"]) == list(ZONES)
    assert all(len(c["zones"]) == 1 for c in out["nodeClaims"])


def test_schedule_anyway_spread_is_relaxed_when_impossible() -> None:
    # Pods are limited to zone a but the spread counts b and c too (nodeAffinityPolicy Ignore):
    # with DoNotSchedule the second pod would wait; with ScheduleAnyway it schedules.
    aff = node_affinity([req(ZONE, "In", ZA)])
    hard = [
        pod(f"h{i}", "100m", labels=WEB, affinity=aff, spread=[spread(nodeAffinityPolicy="Ignore")])
        for i in range(2)
    ]
    out = plan([nodepool(requirements=AMD_OD), *hard])
    assert where(out)["default/h0"] == "claim0"
    assert "topology spread" in reason(out, "default/h1")
    soft = [
        pod(
            f"s{i}",
            "100m",
            labels=WEB,
            affinity=aff,
            spread=[spread(nodeAffinityPolicy="Ignore", when="ScheduleAnyway")],
        )
        for i in range(2)
    ]
    out = plan([nodepool(requirements=AMD_OD), *soft])
    assert out["unschedulable"] == []
    assert all(c["zones"] == [ZA] for c in out["nodeClaims"])
