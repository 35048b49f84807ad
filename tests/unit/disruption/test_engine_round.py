"""A whole round, black box: Empty, then Drifted, then Underutilized commands, each feasible
given the ones before it; budgets counted across them; every candidate in no command kept
with a reason; costs before and after (test catalog on-demand prices in zone a: c5.large
0.085, m5.large 0.096, c6i.xlarge 0.170, m5.xlarge 0.192, m5.2xlarge 0.384)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from disruption_helpers import (
    blocked,
    bound,
    claim_for,
    commands,
    disrupt,
    disrupted,
    kept,
    managed,
    pool,
)
from helpers import ARCH, CAPACITY_TYPE, HOSTNAME, INSTANCE_TYPE, od_price, pod, pod_affinity, req

OD_AMD = [req(CAPACITY_TYPE, "In", "on-demand"), req(ARCH, "In", "amd64")]
ALL = [{"nodes": "100%"}]


def _node(name: str, instance_type: str = "m5.xlarge", **kw: Any) -> list[Mapping[str, Any]]:
    n = managed(name, instance_type, **kw)
    return [n, claim_for(n)]


def _mixed_cluster(budgets: list[dict[str, Any]]) -> list[Mapping[str, Any]]:
    """One empty node, one drifted (spot in an on-demand pool), one oversized node."""
    return [
        pool(requirements=OD_AMD, budgets=budgets),
        *_node("full"),
        bound("f", "full", "3", "12Gi"),
        *_node("empty"),
        *_node("drift", "c5.large", capacity_type="spot"),
        bound("d", "drift", "1500m", "2Gi"),
        *_node("big", "m5.2xlarge"),
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
    budgets = [{"nodes": "100%"}, {"nodes": "0", "reasons": ["Drifted"]}]
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
            *_node("e"),
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
            *_node("a"),
            bound("a0", "a", "1", "2Gi"),
            *_node("b"),
            bound("b0", "b", "1", "2Gi"),
            *_node("c"),
            bound("c0", "c", "1", "2Gi"),
            *_node("e"),
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
        docs += _node(f"n{i}", "m5.2xlarge")
        docs.append(bound(f"w{i}", f"n{i}", "1", "2Gi"))
    out = disrupt(docs)
    assert 2 <= len(disrupted(out)) <= 3
    assert all(r == "Underutilized" for r in disrupted(out).values())


def test_hostname_anti_affinity_holds_after_the_round() -> None:
    anti = {"podAntiAffinity": pod_affinity(HOSTNAME, {"app": "db"}, anti=True)["podAntiAffinity"]}
    out = disrupt(
        [
            pool(requirements=[*OD_AMD, req(INSTANCE_TYPE, "In", "m5.xlarge")], budgets=ALL),
            *_node("a"),
            bound("db0", "a", "500m", "1Gi", labels={"app": "db"}, affinity=anti),
            *_node("b"),
            bound("db1", "b", "500m", "1Gi", labels={"app": "db"}, affinity=anti),
            *_node("c"),
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
        docs += _node(f"{p}-big", "m5.2xlarge", nodepool_name=p)
        docs.append(bound(f"{p}-w", f"{p}-big", "1", "2Gi"))
    out = disrupt(docs)
    assert disrupted(out) == {"p1-big": "Underutilized"}
    assert "p2-big" in {**blocked(out), **kept(out)}
