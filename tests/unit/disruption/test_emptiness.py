"""Emptiness, black box: a node whose pods are only DaemonSet, mirror or finished pods goes
in an Empty command with no replacement, within the Empty budget, in any consolidating or
WhenEmpty pool (test catalog prices: c5.large 0.085, m5.xlarge 0.192)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from tests.support.disruption import (
    ALL,
    DO_NOT_DISRUPT,
    NOW,
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


def _busy(name: str) -> list[Mapping[str, Any]]:
    """A node its pod fills (3 of 4 cpu): never empty, never consolidated."""
    return [*node_and_claim(name), bound(f"{name}-w", name, "3", "12Gi")]


@pytest.mark.parametrize("policy", ["WhenEmpty", "WhenEmptyOrUnderutilized", "Balanced"])
def test_every_policy_removes_empty_nodes(policy: str) -> None:
    out = disrupt(
        [pool(requirements=OD_AMD, budgets=ALL, policy=policy), *_busy("a"), *node_and_claim("e")]
    )
    assert disrupted(out) == {"e": "Empty"}
    assert "a" in kept(out)


def test_a_node_with_only_finished_pods_is_empty() -> None:
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=ALL),
            *_busy("a"),
            *node_and_claim("e"),
            bound("job-1", "e", "1", "1Gi", owner_kind="Job", phase="Succeeded"),
            bound("job-2", "e", "1", "1Gi", owner_kind="Job", phase="Failed"),
        ]
    )
    assert disrupted(out) == {"e": "Empty"}
    (cmd,) = commands(out)
    assert cmd["pods"] == {}


def test_a_node_with_one_running_pod_is_not_empty() -> None:
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=ALL, policy="WhenEmpty"),
            *node_and_claim("e"),
            bound("w", "e", "100m", "128Mi"),
        ]
    )
    assert commands(out) == []
    assert "e" in kept(out)


def test_an_empty_command_saves_the_node_price_and_replaces_nothing() -> None:
    out = disrupt(
        [pool(requirements=OD_AMD, budgets=ALL), *_busy("a"), *node_and_claim("e", "c5.large")]
    )
    (cmd,) = commands(out)
    assert cmd == {
        "reason": "Empty",
        "nodes": ["e"],
        "replacements": [],
        "pods": {},
        "savingsPerHour": pytest.approx(0.085),
    }
    cost = out["disruption"]["costPerHour"]
    assert cost["before"] - cost["after"] == pytest.approx(0.085)


def test_an_empty_budget_of_zero_keeps_empty_nodes_but_not_underutilized_ones() -> None:
    budgets: list[dict[str, Any]] = [{"nodes": "100%"}, {"nodes": "0", "reasons": ["Empty"]}]
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=budgets),
            *node_and_claim("e"),
            *node_and_claim("big", "m5.2xlarge"),
            bound("w", "big", "1", "2Gi"),
        ]
    )
    assert disrupted(out) == {"big": "Underutilized"}
    assert "e" in {**blocked(out), **kept(out)}


def test_each_pool_spends_its_own_empty_budget() -> None:
    docs: list[Mapping[str, Any]] = [
        pool("p1", requirements=OD_AMD, budgets=[{"nodes": "1"}]),
        pool("p2", requirements=OD_AMD, budgets=[{"nodes": "1"}]),
    ]
    for p in ("p1", "p2"):
        for i in range(3):
            docs += node_and_claim(f"{p}-e{i}", nodepool_name=p)
    out = disrupt(docs)
    gone = sorted(disrupted(out))
    assert len(gone) == 2
    assert {g.split("-")[0] for g in gone} == {"p1", "p2"}


def test_a_do_not_disrupt_node_is_not_removed_even_when_empty() -> None:
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=ALL),
            *node_and_claim("e", annotations={DO_NOT_DISRUPT: "true"}),
        ]
    )
    assert commands(out) == []
    assert "do-not-disrupt" in blocked(out)["e"]


def test_an_empty_node_waits_for_consolidate_after() -> None:
    recent = (NOW.replace(minute=0).isoformat()).replace("+00:00", "Z")
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=ALL, consolidate_after="1h"),
            *node_and_claim("e", last_pod_event=recent),
            *node_and_claim("old"),
        ]
    )
    assert disrupted(out) == {"old": "Empty"}
    assert "e" in blocked(out)


def test_consolidate_after_never_disables_emptiness() -> None:
    out = disrupt(
        [pool(requirements=OD_AMD, budgets=ALL, consolidate_after="Never"), *node_and_claim("e")]
    )
    assert commands(out) == []
    assert "e" in blocked(out)


def test_an_uninitialized_empty_node_is_not_removed() -> None:
    out = disrupt([pool(requirements=OD_AMD, budgets=ALL), *node_and_claim("e", initialized=False)])
    assert commands(out) == []
    assert "e" in blocked(out)


def test_empty_nodes_go_first_when_the_budget_is_shared() -> None:
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=[{"nodes": "1"}]),
            *node_and_claim("big", "m5.2xlarge"),
            bound("w", "big", "1", "2Gi"),
            *node_and_claim("e"),
        ]
    )
    assert disrupted(out) == {"e": "Empty"}
    assert "budget" in {**blocked(out), **kept(out)}["big"]


def test_a_deleting_empty_node_is_left_to_its_deletion() -> None:
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=ALL),
            *node_and_claim("e", deleting=True),
            *node_and_claim("f"),
        ]
    )
    assert disrupted(out) == {"f": "Empty"}
    assert "e" in blocked(out)
