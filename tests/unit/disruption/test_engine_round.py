"""A whole round, black box: Empty, then Drifted, then Underutilized commands, each feasible
given the ones before it; budgets counted across them; every candidate in no command kept
with a reason; costs before and after (test catalog on-demand prices in zone a: c5.large
0.085, m5.large 0.096, c6i.xlarge 0.170, m5.xlarge 0.192, m5.2xlarge 0.384)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from tests.support.catalogs import od_price
from tests.support.disruption import (
    ALL,
    OD_AMD,
    blocked,
    bound,
    commands,
    disrupt,
    disrupted,
    kept,
    node_and_claim,
    pool,
)
from tests.support.labels import HOSTNAME, INSTANCE_TYPE
from tests.support.manifests import pod, pod_affinity, req


def _mixed_cluster(budgets: list[dict[str, Any]]) -> list[Mapping[str, Any]]:
    """One empty node, one drifted (spot in an on-demand pool), one oversized node."""
    return [
        pool(requirements=OD_AMD, budgets=budgets),
        *node_and_claim("full"),
        bound("f", "full", "3", "12Gi"),
        *node_and_claim("empty"),
        *node_and_claim("drift", "c5.large", capacity_type="spot"),
        bound("d", "drift", "1500m", "2Gi"),
        *node_and_claim("big", "m5.2xlarge"),
        bound("b", "big", "1", "2Gi"),
    ]


def test_a_round_holds_empty_then_drifted_then_underutilized_commands() -> None:
    out = disrupt(_mixed_cluster(ALL))
    reasons = [c["reason"] for c in commands(out)]
    assert reasons[:2] == ["Empty", "Drifted"] and set(reasons[2:]) == {"Underutilized"}
    gone = disrupted(out)
    assert gone["empty"] == "Empty" and gone["drift"] == "Drifted"
    assert "Underutilized" in gone.values()


def test_a_shared_budget_goes_to_empty_first_then_drifted() -> None:
    out = disrupt(_mixed_cluster([{"nodes": "2"}]))
    assert disrupted(out) == {"empty": "Empty", "drift": "Drifted"}
    # the drifted node's pod moved to "big", which is kept for it; "full" waits for budget
    assert "receives pods from drift" in kept(out)["big"]
    assert "budget" in {**blocked(out), **kept(out)}["full"]


def test_reason_budgets_limit_each_method_alone() -> None:
    budgets: list[dict[str, Any]] = [{"nodes": "100%"}, {"nodes": "0", "reasons": ["Drifted"]}]
    out = disrupt(_mixed_cluster(budgets))
    assert disrupted(out) == {"empty": "Empty", "big": "Underutilized"}


def test_costs_before_and_after_add_up() -> None:
    out = disrupt(_mixed_cluster(ALL))
    cost = out["disruption"]["costPerHour"]
    managed_total = sum(od_price(t) for t in ("m5.xlarge", "m5.xlarge", "m5.2xlarge"))
    # the spot c5.large's price is its spot price; cost before is every managed node's
    assert cost["before"] > managed_total
    saved = sum(c["savingsPerHour"] for c in commands(out))
    assert cost["after"] == pytest.approx(cost["before"] - saved, abs=1e-5)
    assert cost["after"] < cost["before"]


def test_the_same_input_gives_the_same_round() -> None:
    assert disrupt(_mixed_cluster(ALL)) == disrupt(_mixed_cluster(ALL))


def test_every_kept_reason_is_one_line() -> None:
    out = disrupt(_mixed_cluster([{"nodes": "1"}]))
    for reason in {**blocked(out), **kept(out)}.values():
        assert reason and "\n" not in reason


def test_a_pending_pod_the_plan_puts_on_an_empty_node_keeps_it() -> None:
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=ALL),
            *node_and_claim("e"),
            pod("new", "1", "2Gi"),
        ]
    )
    assert out["existingNodes"], "the plan puts the pending pod on the node"
    assert commands(out) == []
    assert "e" in blocked(out)


def test_pods_of_consolidated_nodes_do_not_land_on_nodes_removed_in_the_round() -> None:
    out = disrupt(
        [
            pool(requirements=[*OD_AMD, req(INSTANCE_TYPE, "In", "m5.xlarge")], budgets=ALL),
            *node_and_claim("a"),
            bound("a0", "a", "1", "2Gi"),
            *node_and_claim("b"),
            bound("b0", "b", "1", "2Gi"),
            *node_and_claim("c"),
            bound("c0", "c", "1", "2Gi"),
            *node_and_claim("e"),
        ]
    )
    removed = set(disrupted(out))
    assert "e" in removed
    assert len(removed) >= 2
    for c in commands(out):
        for dest in c["pods"].values():
            assert dest not in removed
    # every moved pod's destination is still there after the round
    survivors = {"a", "b", "c"} - removed
    for c in commands(out):
        assert set(c["pods"].values()) <= survivors


def test_a_round_holds_several_consolidations_within_the_budget() -> None:
    docs: list[Mapping[str, Any]] = [pool(requirements=OD_AMD, budgets=[{"nodes": "3"}])]
    for i in range(6):
        docs += node_and_claim(f"n{i}", "m5.2xlarge")
        docs.append(bound(f"w{i}", f"n{i}", "1", "2Gi"))
    out = disrupt(docs)
    assert 2 <= len(disrupted(out)) <= 3
    assert all(r == "Underutilized" for r in disrupted(out).values())


def test_hostname_anti_affinity_holds_after_the_round() -> None:
    anti = {"podAntiAffinity": pod_affinity(HOSTNAME, {"app": "db"}, anti=True)["podAntiAffinity"]}
    out = disrupt(
        [
            pool(requirements=[*OD_AMD, req(INSTANCE_TYPE, "In", "m5.xlarge")], budgets=ALL),
            *node_and_claim("a"),
            bound("db0", "a", "500m", "1Gi", labels={"app": "db"}, affinity=anti),
            *node_and_claim("b"),
            bound("db1", "b", "500m", "1Gi", labels={"app": "db"}, affinity=anti),
            *node_and_claim("c"),
            bound("w", "c", "500m", "1Gi"),
        ]
    )
    where = {"default/db0": "a", "default/db1": "b", "default/w": "c"}
    (cmd,) = commands(out)
    assert len(cmd["nodes"]) == 1 and cmd["replacements"] == []
    where.update(cmd["pods"])
    assert not set(where.values()) & set(cmd["nodes"])
    assert where["default/db0"] != where["default/db1"]


def test_pools_spend_their_own_underutilized_budgets() -> None:
    docs: list[Mapping[str, Any]] = [
        pool("p1", requirements=OD_AMD, budgets=[{"nodes": "1"}]),
        pool("p2", requirements=OD_AMD, budgets=[{"nodes": "0"}]),
    ]
    for p in ("p1", "p2"):
        docs += node_and_claim(f"{p}-big", "m5.2xlarge", nodepool_name=p)
        docs.append(bound(f"{p}-w", f"{p}-big", "1", "2Gi"))
    out = disrupt(docs)
    assert disrupted(out) == {"p1-big": "Underutilized"}
    assert "p2-big" in {**blocked(out), **kept(out)}
