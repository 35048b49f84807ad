"""Underutilized, black box: delete a node whose pods fit on the others, else replace one or
more nodes by one claim whose every instance type is strictly cheaper than they are together;
Karpenter's capacity-type rules; which pod lands where (test catalog on-demand prices in zone
a: c5.large 0.085, m5.large 0.096, c6i.xlarge 0.170, m5.xlarge 0.192, m5.2xlarge 0.384,
r5.2xlarge 0.504)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from models.policies import FeatureGates, Policies
from tests.support.catalogs import TYPES, ZA, ZB, ZONES, catalog, od_price, spot_price
from tests.support.disruption import (
    ALL,
    DO_NOT_DISRUPT,
    OD_AMD,
    blocked,
    bound,
    commands,
    disrupt,
    disrupted,
    kept,
    node_and_claim,
    pdb,
    pool,
)
from tests.support.labels import ARCH, CAPACITY_TYPE, INSTANCE_TYPE, ZONE
from tests.support.manifests import req

SPOT_AMD = [req(CAPACITY_TYPE, "In", "spot"), req(ARCH, "In", "amd64")]
SPOT_TO_SPOT = Policies(gates=FeatureGates(spot_to_spot_consolidation=True))
ANY_AMD = [req(CAPACITY_TYPE, "In", "on-demand", "spot"), req(ARCH, "In", "amd64")]


def _after(out: Mapping[str, Any]) -> float:
    return float(out["disruption"]["costPerHour"]["after"])


def _prices(rep: Mapping[str, Any], capacity_type: str = "on-demand") -> list[float]:
    price = od_price if capacity_type == "on-demand" else spot_price
    return [min(price(t, z) for z in rep["zones"]) for t in rep["instanceTypes"]]


def test_a_node_whose_pods_fit_on_the_others_is_deleted_and_its_pods_move_there() -> None:
    out = disrupt(
        [
            pool(
                requirements=[*OD_AMD, req(INSTANCE_TYPE, "In", "m5.xlarge", "c5.large")],
                budgets=ALL,
            ),
            *node_and_claim("a"),
            bound("a0", "a", "2500m", "10Gi"),
            *node_and_claim("b"),
            bound("b0", "b", "2500m", "10Gi"),
            *node_and_claim("c", "c5.large"),
            bound("c0", "c", "500m", "1Gi"),
            bound("c1", "c", "500m", "1Gi"),
        ]
    )
    assert disrupted(out) == {"c": "Underutilized"}
    cmd = next(c for c in commands(out) if "c" in c["nodes"])
    assert cmd["reason"] == "Underutilized" and cmd["replacements"] == []
    assert set(cmd["pods"]) == {"default/c0", "default/c1"}
    assert set(cmd["pods"].values()) <= {"a", "b"}


def test_every_replacement_type_is_strictly_cheaper_than_the_node() -> None:
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=ALL),
            *node_and_claim("big", "m5.2xlarge"),
            bound("w", "big", "2", "6Gi"),
        ]
    )
    (cmd,) = commands(out)
    (rep,) = cmd["replacements"]
    assert rep["instanceTypes"] and "m5.2xlarge" not in rep["instanceTypes"]
    assert all(p < od_price("m5.2xlarge") for p in _prices(rep))
    assert "c5.large" not in rep["instanceTypes"]  # 2 cpu / 6Gi does not fit a c5.large
    assert rep["price"] == pytest.approx(min(_prices(rep)))
    assert cmd["savingsPerHour"] == pytest.approx(od_price("m5.2xlarge") - rep["price"])


def test_a_replacement_keeps_to_the_pool_requirements() -> None:
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=ALL),
            *node_and_claim("big", "m5.2xlarge"),
            bound("w", "big", "1", "2Gi"),
        ]
    )
    (rep,) = commands(out)[0]["replacements"]
    assert all(TYPES[t][3] == "amd64" for t in rep["instanceTypes"])
    assert rep["capacityTypes"] == ["on-demand"]


def test_a_replacement_keeps_to_the_pods_node_selector() -> None:
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=ALL),
            *node_and_claim("big", "m5.2xlarge"),
            bound("w", "big", "1", "2Gi", nodeSelector={INSTANCE_TYPE: "m5.large"}),
        ]
    )
    (cmd,) = commands(out)
    (rep,) = cmd["replacements"]
    assert rep["instanceTypes"] == ["m5.large"]
    assert cmd["pods"] == {"default/w": "replacement-0"}


def test_a_zonal_pod_is_replaced_in_its_zone() -> None:
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=ALL),
            *node_and_claim("big", "m5.2xlarge", zone=ZB),
            bound("w", "big", "1", "2Gi", nodeSelector={ZONE: ZB}),
        ]
    )
    (rep,) = commands(out)[0]["replacements"]
    assert rep["zones"] == [ZB]


def test_a_replacement_is_bought_where_its_pools_nodeclass_has_subnets() -> None:
    """The pool's own catalog (its EC2NodeClass has a subnet in zone b only) decides where
    its replacement can be bought; with the round's catalog, any zone."""
    cts = ("on-demand", "spot")
    only_b = catalog(
        unavailable=[(n, z, ct) for n in TYPES for z in ZONES if z != ZB for ct in cts]
    )
    docs = [
        pool(requirements=OD_AMD, budgets=ALL),
        *node_and_claim("big", "m5.2xlarge", zone=ZB),
        bound("w", "big", "1", "2Gi"),
    ]
    (rep,) = commands(disrupt(docs, pool_catalogs={"default": only_b}))[0]["replacements"]
    assert rep["zones"] == [ZB]
    (rep,) = commands(disrupt(docs))[0]["replacements"]
    assert ZA in rep["zones"]


def test_a_pod_pinned_to_its_own_type_keeps_the_node_with_the_price_in_the_reason() -> None:
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=ALL),
            *node_and_claim("big", "m5.2xlarge"),
            bound("w", "big", "1", "2Gi", nodeSelector={INSTANCE_TYPE: "m5.2xlarge"}),
        ]
    )
    assert commands(out) == []
    assert "$" in kept(out)["big"]


def test_two_nodes_become_one_cheaper_node() -> None:
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=ALL),
            *node_and_claim("r1", "r5.2xlarge"),
            bound("w1", "r1", "3", "10Gi"),
            *node_and_claim("r2", "r5.2xlarge"),
            bound("w2", "r2", "3", "10Gi"),
        ]
    )
    gone = disrupted(out)
    assert gone == {"r1": "Underutilized", "r2": "Underutilized"}
    assert _after(out) < 2 * od_price("r5.2xlarge") / 2
    for c in commands(out):
        assert len(c["replacements"]) <= 1
        assert all(dest.startswith("replacement-") for dest in c["pods"].values())
        total = sum(od_price(n_type) for n_type in ["r5.2xlarge"] * len(c["nodes"]))
        for rep in c["replacements"]:
            assert all(p < total for p in _prices(rep))


def test_an_on_demand_node_replaced_from_a_mixed_pool_is_pinned_to_spot() -> None:
    out = disrupt(
        [
            pool(requirements=ANY_AMD, budgets=ALL),
            *node_and_claim("big", "m5.2xlarge"),
            bound("w", "big", "1", "2Gi"),
        ]
    )
    (cmd,) = commands(out)
    (rep,) = cmd["replacements"]
    assert rep["capacityTypes"] == ["spot"]
    assert all(p < od_price("m5.2xlarge") for p in _prices(rep, "spot"))


def test_spot_to_spot_needs_fifteen_cheaper_types() -> None:
    out = disrupt(
        [
            pool(requirements=SPOT_AMD, budgets=ALL),
            *node_and_claim("s", "m5.2xlarge", capacity_type="spot"),
            bound("w", "s", "1", "2Gi"),
        ],
        policies=SPOT_TO_SPOT,
    )
    assert commands(out) == []
    assert "15" in kept(out)["s"] and "spot" in kept(out)["s"]


def test_spot_to_spot_is_off_without_its_feature_gate() -> None:
    """Karpenter's default: a spot node may go, but a claim that may launch spot never
    replaces it (the same node is replaced under SpotToSpotConsolidation=true, given 15
    cheaper types: tests/unit/disruption/test_spot_to_spot_gate.py)."""
    out = disrupt(
        [
            pool(requirements=SPOT_AMD, budgets=ALL),
            *node_and_claim("s", "m5.2xlarge", capacity_type="spot"),
            bound("w", "s", "1", "2Gi"),
        ]
    )
    assert commands(out) == []
    assert "SpotToSpotConsolidation" in kept(out)["s"]


def test_a_spot_node_whose_pods_fit_elsewhere_is_deleted() -> None:
    out = disrupt(
        [
            pool(requirements=SPOT_AMD, budgets=ALL),
            *node_and_claim("s1", "m5.2xlarge", capacity_type="spot"),
            bound("w1", "s1", "6", "8Gi"),
            *node_and_claim("s2", "m5.xlarge", capacity_type="spot"),
            bound("w2", "s2", "1", "1Gi"),
        ]
    )
    (cmd,) = commands(out)
    assert cmd["nodes"] == ["s2"] and cmd["replacements"] == []
    assert cmd["pods"] == {"default/w2": "s1"}
    assert cmd["savingsPerHour"] == pytest.approx(spot_price("m5.xlarge"))


def test_a_do_not_disrupt_pod_blocks_its_node_but_the_node_still_receives_pods() -> None:
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=ALL),
            *node_and_claim("held", "m5.2xlarge"),
            bound("h", "held", "1", "2Gi", annotations={DO_NOT_DISRUPT: "true"}),
            *node_and_claim("x", "m5.xlarge"),
            bound("w", "x", "1", "1Gi"),
        ]
    )
    assert "held" in blocked(out)
    (cmd,) = commands(out)
    assert cmd["nodes"] == ["x"] and cmd["pods"] == {"default/w": "held"}


def test_a_pdb_allowing_no_eviction_blocks_the_node() -> None:
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=ALL),
            *node_and_claim("big", "m5.2xlarge"),
            bound("w", "big", "1", "2Gi", labels={"app": "db"}),
            pdb("db", {"app": "db"}, max_unavailable=0),
        ]
    )
    assert commands(out) == []
    assert "db" in blocked(out)["big"]


def test_a_node_that_receives_pods_is_not_removed_in_the_same_round() -> None:
    out = disrupt(
        [
            pool(requirements=[*OD_AMD, req(INSTANCE_TYPE, "In", "m5.xlarge")], budgets=ALL),
            *node_and_claim("dest", "m5.xlarge"),
            bound("d", "dest", "1", "2Gi"),
            *node_and_claim("src", "m5.xlarge"),
            bound("s", "src", "1", "2Gi"),
        ]
    )
    (cmd,) = commands(out)
    (src,) = cmd["nodes"]
    (dest,) = set(cmd["pods"].values())
    assert {src, dest} == {"dest", "src"}
    assert "receives pods" in kept(out)[dest]


def test_when_empty_pools_keep_underutilized_nodes_and_say_why() -> None:
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=ALL, policy="WhenEmpty"),
            *node_and_claim("big", "m5.2xlarge"),
            bound("w", "big", "1", "2Gi"),
        ]
    )
    assert commands(out) == []
    assert kept(out)["big"]


def test_the_budget_picks_the_cheapest_node_to_disrupt() -> None:
    costly = {"controller.kubernetes.io/pod-deletion-cost": "1000"}
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=[{"nodes": "1"}]),
            *node_and_claim("k", "m5.2xlarge"),
            bound("k0", "k", "6", "8Gi"),
            *node_and_claim("dear", "m5.xlarge"),
            bound("d", "dear", "500m", "1Gi", annotations=costly),
            *node_and_claim("cheap", "m5.xlarge"),
            bound("c", "cheap", "500m", "1Gi"),
        ]
    )
    assert disrupted(out) == {"cheap": "Underutilized"}
    assert "dear" in {**blocked(out), **kept(out)}


def test_underutilized_budget_of_zero_consolidates_nothing() -> None:
    budgets: list[dict[str, Any]] = [
        {"nodes": "100%"},
        {"nodes": "0", "reasons": ["Underutilized"]},
    ]
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=budgets),
            *node_and_claim("big", "m5.2xlarge"),
            bound("w", "big", "1", "2Gi"),
        ]
    )
    assert commands(out) == []
    assert "big" in {**blocked(out), **kept(out)}


def test_balanced_consolidates_a_cheap_to_disrupt_node_that_saves_much() -> None:
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=ALL, policy="Balanced"),
            *node_and_claim("big", "m5.2xlarge"),
            bound("w", "big", "1", "2Gi"),
            *node_and_claim("k", "m5.xlarge"),
            bound("k0", "k", "3", "12Gi"),
        ]
    )
    assert disrupted(out) == {"big": "Underutilized"}


def test_balanced_keeps_a_node_whose_pods_cost_more_to_move_than_it_saves() -> None:
    def docs(policy: str) -> list[Mapping[str, Any]]:
        return [
            pool(requirements=OD_AMD, budgets=ALL, policy=policy),
            *node_and_claim("full"),
            bound("f", "full", "3", "12Gi"),
            *node_and_claim("busy"),
            *[bound(f"b{i}", "busy", "500m", "512Mi") for i in range(3)],
        ]

    plain = disrupt(docs("WhenEmptyOrUnderutilized"))
    assert disrupted(plain) == {"busy": "Underutilized"}
    (cmd,) = commands(plain)
    assert cmd["replacements"][0]["price"] == pytest.approx(od_price("c5.large"))
    # Balanced: saving 0.107 of the pool's 0.384 $/h (28%) while moving 3 of its 4 pods
    # (75%) scores 0.37, under the 0.5 threshold.
    out = disrupt(docs("Balanced"))
    assert commands(out) == []
    assert "Balanced" in kept(out)["busy"]


def test_nodes_of_other_zones_receive_pods_only_when_the_pod_allows() -> None:
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=ALL),
            *node_and_claim("za", "m5.2xlarge", zone=ZA),
            bound("k", "za", "1", "1Gi"),
            *node_and_claim("zb", "m5.xlarge", zone=ZB),
            bound("w", "zb", "1", "1Gi", nodeSelector={ZONE: ZB}),
        ]
    )
    for c in commands(out):
        if "zb" in c["nodes"]:
            assert c["pods"]["default/w"] != "za"
            for rep in c["replacements"]:
                assert rep["zones"] == [ZB]


def test_a_delete_that_saves_more_beats_replacing_several_nodes_by_one() -> None:
    # Replacing all three (0.768 $/h) by one r5.2xlarge (0.504) is valid, as is deleting "c"
    # alone (its pods fit on "a" and "b"), which saves more and launches nothing.
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=ALL),
            *node_and_claim("a"),
            bound("a0", "a", "2500m", "10Gi"),
            *node_and_claim("b"),
            bound("b0", "b", "2500m", "10Gi"),
            *node_and_claim("c", "m5.2xlarge"),
            bound("c0", "c", "500m", "2Gi"),
            bound("c1", "c", "500m", "2Gi"),
        ]
    )
    (cmd,) = commands(out)
    assert cmd["nodes"] == ["c"] and cmd["replacements"] == []
    assert set(cmd["pods"].values()) <= {"a", "b"}
    assert _after(out) == pytest.approx(2 * od_price("m5.xlarge"))
