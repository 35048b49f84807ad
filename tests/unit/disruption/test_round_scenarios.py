"""Whole rounds, black box, through the ``joinery plan --disruption`` contract: which nodes go,
what replaces them and where each pod lands (prices from the test catalog: c5.large 0.085,
c6i.xlarge 0.170, m5.xlarge 0.192, m5.2xlarge 0.384, zone a cheapest)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from models.policies import FeatureGates, Policies
from tests.support.disruption import (
    blocked,
    bound,
    claim_for,
    commands,
    disrupt,
    disrupted,
    kept,
    managed,
    pdb,
    pool,
)
from tests.support.labels import ARCH, CAPACITY_TYPE, HOSTNAME
from tests.support.manifests import daemonset, pod, pod_affinity, req

# Karpenter's SpotToSpotConsolidation gate is off by default; these tests replace spot by spot.
SPOT_TO_SPOT = Policies(gates=FeatureGates(spot_to_spot_consolidation=True))

OD_AMD = [req(CAPACITY_TYPE, "In", "on-demand"), req(ARCH, "In", "amd64")]
ZONE_KEY = "topology.kubernetes.io/zone"
ALL = [{"nodes": "100%"}]


def _node(name: str, instance_type: str = "m5.xlarge", **kw: Any) -> list[Mapping[str, Any]]:
    n = managed(name, instance_type, **kw)
    return [n, claim_for(n)]


def _after(out: Mapping[str, Any]) -> float:
    return float(out["disruption"]["costPerHour"]["after"])


def test_an_empty_node_is_removed_and_nothing_replaces_it() -> None:
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=ALL),
            *_node("a"),
            *_node("b"),
            bound("w", "a", "3", "12Gi"),
        ]
    )
    assert disrupted(out) == {"b": "Empty"}
    (cmd,) = [c for c in commands(out) if c["reason"] == "Empty"]
    assert cmd["replacements"] == [] and cmd["pods"] == {}
    assert cmd["savingsPerHour"] == pytest.approx(0.192)


def test_daemonset_and_mirror_pods_do_not_make_a_node_busy() -> None:
    mirror = bound("etcd", "b", owner_kind="Node")
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=ALL),
            daemonset("logs"),
            *_node("a"),
            *_node("b"),
            bound("w", "a", "3", "12Gi"),
            bound("logs-b", "b", "100m", "128Mi", owner_kind="DaemonSet"),
            mirror,
        ]
    )
    assert disrupted(out) == {"b": "Empty"}


def test_several_empty_nodes_go_in_one_round_within_the_budget() -> None:
    nodes = [d for i in range(5) for d in _node(f"e{i}")]
    out = disrupt([pool(requirements=OD_AMD, budgets=[{"nodes": "2"}]), *nodes])
    assert len(disrupted(out)) == 2
    assert set(disrupted(out).values()) == {"Empty"}
    rest = {**blocked(out), **kept(out)}
    assert len(rest) == 3 and all("budget" in r for r in rest.values())


def test_an_oversized_node_is_replaced_by_the_cheapest_that_holds_its_pods() -> None:
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=ALL),
            *_node("big", "m5.2xlarge"),
            bound("w", "big", "1", "2Gi"),
        ]
    )
    (cmd,) = commands(out)
    assert cmd["reason"] == "Underutilized" and cmd["nodes"] == ["big"]
    (rep,) = cmd["replacements"]
    assert rep["instanceTypes"][0] == "c5.large" and rep["price"] == pytest.approx(0.085)
    assert "m5.2xlarge" not in rep["instanceTypes"] and "r5.2xlarge" not in rep["instanceTypes"]
    assert cmd["pods"] == {"default/w": "replacement-0"}
    assert cmd["savingsPerHour"] == pytest.approx(0.384 - 0.085)
    assert _after(out) == pytest.approx(0.085)


def test_a_node_nothing_cheaper_can_hold_is_kept_with_a_reason() -> None:
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=ALL),
            *_node("c", "c5.large"),
            bound("w", "c", "1500m", "2Gi"),
        ]
    )
    assert commands(out) == []
    assert kept(out)["c"]


def test_a_node_whose_pods_fit_elsewhere_is_deleted_not_replaced() -> None:
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=ALL),
            *_node("big", "m5.2xlarge"),
            bound("w0", "big", "6", "8Gi"),
            *_node("small", "c5.large"),
            bound("w1", "small", "500m", "1Gi"),
        ]
    )
    (cmd,) = commands(out)
    assert cmd["nodes"] == ["small"] and cmd["replacements"] == []
    assert cmd["pods"] == {"default/w1": "big"}
    assert _after(out) == pytest.approx(0.384)


def test_several_underused_nodes_consolidate_in_one_round() -> None:
    nodes = [d for i in range(3) for d in _node(f"n{i}")]
    pods = [bound(f"w{i}", f"n{i}", "1", "1Gi") for i in range(3)]
    out = disrupt([pool(requirements=OD_AMD, budgets=ALL), *nodes, *pods])
    assert _after(out) <= 0.192 + 1e-9
    for c in commands(out):
        assert c["reason"] == "Underutilized"


def test_when_empty_pools_only_remove_empty_nodes() -> None:
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=ALL, policy="WhenEmpty"),
            *_node("big", "m5.2xlarge"),
            bound("w", "big", "1", "2Gi"),
            *_node("e"),
        ]
    )
    assert disrupted(out) == {"e": "Empty"}
    assert "big" in kept(out)


def test_required_anti_affinity_keeps_pods_apart() -> None:
    anti = {"podAntiAffinity": pod_affinity(HOSTNAME, {"app": "web"}, anti=True)["podAntiAffinity"]}
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=ALL),
            *_node("a", "c5.large"),
            *_node("b", "c5.large"),
            bound("w0", "a", "500m", "1Gi", labels={"app": "web"}, affinity=anti),
            bound("w1", "b", "500m", "1Gi", labels={"app": "web"}, affinity=anti),
        ]
    )
    assert commands(out) == []
    assert set(kept(out)) == {"a", "b"}


def test_a_round_never_evicts_more_than_a_pdb_allows() -> None:
    nodes = [d for i in range(3) for d in _node(f"n{i}", "m5.2xlarge")]
    pods = [bound(f"web-{i}", f"n{i}", "500m", "1Gi", labels={"app": "web"}) for i in range(3)]
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=ALL),
            *nodes,
            *pods,
            pdb("web", {"app": "web"}, max_unavailable=1),
        ]
    )
    moved = [k for c in commands(out) for k in c["pods"]]
    assert len(moved) <= 1
    assert len(commands(out)) >= 1


def test_a_drifted_node_is_replaced_even_at_a_higher_price() -> None:
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=ALL),
            *_node("s", "c5.large", capacity_type="spot"),
            bound("w", "s", "1500m", "2Gi"),
        ]
    )
    (cmd,) = commands(out)
    assert cmd["reason"] == "Drifted" and cmd["nodes"] == ["s"]
    (rep,) = cmd["replacements"]
    assert rep["capacityTypes"] == ["on-demand"]
    assert cmd["savingsPerHour"] < 0
    assert cmd["pods"] == {"default/w": "replacement-0"}


def test_a_drifted_node_whose_pods_fit_elsewhere_is_deleted() -> None:
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=ALL),
            *_node("ok", "m5.2xlarge"),
            bound("w0", "ok", "6", "8Gi"),
            *_node("s", "c5.large", capacity_type="spot"),
            bound("w1", "s", "500m", "1Gi"),
        ]
    )
    cmd = next(c for c in commands(out) if "s" in c["nodes"])
    assert cmd["reason"] == "Drifted" and cmd["replacements"] == []
    assert cmd["pods"] == {"default/w1": "ok"}


def test_drift_respects_its_own_budget() -> None:
    nodes = [d for i in range(3) for d in _node(f"s{i}", "c5.large", capacity_type="spot")]
    pods = [bound(f"w{i}", f"s{i}", "1500m", "2Gi") for i in range(3)]
    budgets: list[dict[str, Any]] = [{"nodes": "100%"}, {"nodes": "1", "reasons": ["Drifted"]}]
    out = disrupt([pool(requirements=OD_AMD, budgets=budgets), *nodes, *pods])
    assert list(disrupted(out).values()) == ["Drifted"]


def test_cost_before_counts_the_pending_pods_new_claims() -> None:
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=ALL),
            *_node("a", "c5.large"),
            bound("w", "a", "1500m", "2Gi"),
            pod("new", "1500m", "2Gi"),
        ]
    )
    assert out["cost"]["perHour"] == pytest.approx(0.085)
    assert out["disruption"]["costPerHour"]["before"] == pytest.approx(0.085 + 0.085)


def test_nodes_of_pools_not_in_the_inputs_receive_pods_but_are_not_disrupted() -> None:
    other = managed("other", "m5.2xlarge", nodepool_name="elsewhere")
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=ALL),
            other,
            *_node("a", "c5.large"),
            bound("w", "a", "500m", "1Gi"),
        ]
    )
    (cmd,) = commands(out)
    assert cmd["nodes"] == ["a"] and cmd["pods"] == {"default/w": "other"}
    assert "other" not in {**blocked(out), **kept(out)}


def test_a_pod_with_a_zonal_volume_moves_only_within_its_zone() -> None:
    from tests.support.catalogs import ZB
    from tests.support.manifests import pv, pvc

    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=ALL),
            *_node("other-zone", "m5.2xlarge", zone=ZB),
            bound("w0", "other-zone", "1", "2Gi"),
            *_node("a", "m5.xlarge"),
            bound("db", "a", "500m", "1Gi", pvcs=["data"]),
            pvc("data", volume_name="vol-a"),
            pv("vol-a", "us-east-1a"),
        ]
    )
    cmd = next(c for c in commands(out) if "a" in c["nodes"])
    assert cmd["pods"]["default/db"] == "replacement-0"
    assert cmd["replacements"][0]["zones"] == ["us-east-1a"]


def test_a_spot_node_is_not_replaced_by_spot_without_fifteen_cheaper_types() -> None:
    pool_ = pool(
        requirements=[req(CAPACITY_TYPE, "In", "spot"), req(ARCH, "In", "amd64")], budgets=ALL
    )
    out = disrupt(
        [pool_, *_node("s", "m5.2xlarge", capacity_type="spot"), bound("w", "s", "1", "2Gi")],
        policies=SPOT_TO_SPOT,
    )
    assert commands(out) == []
    assert "15 cheaper spot types" in kept(out)["s"]


def test_spot_nodes_merge_into_one_cheaper_spot_node() -> None:
    pool_ = pool(
        requirements=[req(CAPACITY_TYPE, "In", "spot"), req(ARCH, "In", "amd64")], budgets=ALL
    )
    out = disrupt(
        [
            pool_,
            *_node("s0", "m5.xlarge", capacity_type="spot"),
            *_node("s1", "m5.xlarge", capacity_type="spot"),
            bound("w0", "s0", "1", "2Gi"),
            bound("w1", "s1", "1", "2Gi"),
        ],
        policies=SPOT_TO_SPOT,
    )
    (cmd,) = commands(out)
    assert sorted(cmd["nodes"]) == ["s0", "s1"]
    (rep,) = cmd["replacements"]
    assert rep["capacityTypes"] == ["spot"]
    assert all(p == "replacement-0" for p in cmd["pods"].values())
    assert cmd["savingsPerHour"] > 0


def test_an_on_demand_node_replaced_where_spot_is_allowed_is_pinned_to_spot() -> None:
    pool_ = pool(requirements=[req(ARCH, "In", "amd64")], budgets=ALL)
    out = disrupt([pool_, *_node("big", "m5.2xlarge"), bound("w", "big", "1", "2Gi")])
    (cmd,) = commands(out)
    assert cmd["replacements"][0]["capacityTypes"] == ["spot"]


def test_zonal_spread_keeps_a_pod_in_its_zone_when_moved() -> None:
    from tests.support.catalogs import ZB
    from tests.support.manifests import spread

    sel = {"app": "web"}
    zonal = [spread(ZONE_KEY, sel)]
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=ALL),
            *_node("a1", "m5.2xlarge"),
            *_node("a2", "m5.2xlarge"),
            *_node("b1", "m5.2xlarge", zone=ZB),
            bound("w-a", "a1", "500m", "1Gi", labels=sel, spread=zonal),
            bound("w-b", "b1", "500m", "1Gi", labels=sel, spread=zonal),
            bound("fill", "a2", "6", "20Gi"),
        ]
    )
    (cmd,) = commands(out)
    assert sorted(cmd["nodes"]) == ["a1", "b1"]
    # w-a stays in zone a (a2 has room); w-b cannot join it there (skew 2), so it gets a
    # cheaper node in zone b.
    assert cmd["pods"] == {"default/w-a": "a2", "default/w-b": "replacement-0"}
    assert cmd["replacements"][0]["zones"] == ["us-east-1b"]


def test_a_pod_on_no_pool_node_does_not_block_and_is_not_moved() -> None:
    plain = managed("static", "m5.2xlarge", nodepool_name="unmanaged-pool")
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=ALL),
            plain,
            bound("s", "static", "7", "30Gi"),
            *_node("e"),
        ]
    )
    assert disrupted(out) == {"e": "Empty"}


def test_budget_schedule_active_at_now_blocks_the_pool() -> None:
    budgets = [{"nodes": "0", "schedule": "0 9 * * *", "duration": "8h"}, {"nodes": "100%"}]
    out = disrupt([pool(requirements=OD_AMD, budgets=budgets), *_node("e")])
    assert commands(out) == []
    assert "budget allows no disruption" in blocked(out)["e"]


def test_budget_schedule_outside_its_window_allows() -> None:
    budgets = [{"nodes": "0", "schedule": "0 0 * * *", "duration": "1h"}, {"nodes": "100%"}]
    out = disrupt([pool(requirements=OD_AMD, budgets=budgets), *_node("e")])
    assert disrupted(out) == {"e": "Empty"}


def test_an_uninitialized_node_is_no_destination() -> None:
    booting = managed("booting", "m5.2xlarge", initialized=False)
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=ALL),
            booting,
            claim_for(booting),
            *_node("a", "c5.large"),
            bound("w", "a", "500m", "1Gi"),
        ]
    )
    moves = {k: v for c in commands(out) for k, v in c["pods"].items()}
    assert moves.get("default/w") != "booting"
    assert "not initialized" in blocked(out)["booting"]


def test_two_pdbs_each_limit_their_own_pods() -> None:
    nodes = [d for i in range(4) for d in _node(f"n{i}", "m5.2xlarge")]
    pods = [
        bound(f"web-{i}", f"n{i}", "500m", "1Gi", labels={"app": "web" if i < 2 else "api"})
        for i in range(4)
    ]
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=ALL),
            *nodes,
            *pods,
            pdb("web", {"app": "web"}, max_unavailable=1),
            pdb("api", {"app": "api"}, max_unavailable=1),
        ]
    )
    moved = [k for c in commands(out) for k in c["pods"]]
    assert sum(1 for k in moved if k in ("default/web-0", "default/web-1")) <= 1
    assert sum(1 for k in moved if k in ("default/web-2", "default/web-3")) <= 1


def test_a_drifted_node_in_a_when_empty_pool_is_still_replaced() -> None:
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=ALL, policy="WhenEmpty"),
            *_node("s", "c5.large", capacity_type="spot"),
            bound("w", "s", "1500m", "2Gi"),
        ]
    )
    assert disrupted(out) == {"s": "Drifted"}
