"""With few candidates, consolidation takes the subset that saves the most, not the longest
prefix Karpenter's search finds (issue 35, item 5: the exactness brute force's "path" gaps,
where the rounds' first step left a cluster no later step improves)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from tests.support.catalogs import ZA, ZB, ZC, sized_catalog
from tests.support.disruption import (
    ALL,
    INITIALIZED,
    LONG_AGO,
    blocked,
    bound,
    claim_for,
    commands,
    disrupt,
    pdb,
    pool,
)
from tests.support.disruption import kept as kept_reasons
from tests.support.manifests import node

# name: (cpu, memory, on-demand price in every zone)
SIZES = {
    "two-cpu": ("2", "8Gi", 0.10),
    "four-cpu": ("4", "16Gi", 0.18),
    "eight-cpu": ("8", "32Gi", 0.32),
}
CATALOG = sized_catalog(SIZES)


def _managed(name: str, zone: str) -> list[Mapping[str, Any]]:
    cpu, mem, _ = SIZES["two-cpu"]
    body = node(
        name,
        cpu,
        mem,
        "50",
        zone=zone,
        instance_type="two-cpu",
        nodepool="default",
        labels={INITIALIZED: "true"},
    )
    body["metadata"]["creationTimestamp"] = LONG_AGO
    body["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    return [body, claim_for(body)]


def _cluster(
    budgets: Sequence[Mapping[str, Any]] = ALL,
    pods: Sequence[tuple[str, str]] = (),
    zones: Sequence[str] = (ZA, ZB, ZC),
) -> list[Mapping[str, Any]]:
    """Four two-cpu nodes ($0.10/h): three hold a 1.2-cpu pod, "full" a 1.9-cpu pod. No pod
    fits on another node; all four pods (5.5 cpu) fit on the eight-cpu node ($0.32/h, saves
    $0.08/h), the three 1.2-cpu pods (3.6 cpu) on the four-cpu node ($0.18/h, saves $0.12/h),
    two of them on the four-cpu node for $0.02/h less than their nodes (``zones``: those of
    the 1.2-cpu nodes; ``pods``: more pods on "full")."""
    docs: list[Mapping[str, Any]] = [pool(budgets=budgets)]
    docs += _managed("full", ZA)
    docs.append(bound("big", "full", "1900m", "1Gi", labels={"app": "big"}))
    for i, zone in enumerate(zones):
        docs += _managed(f"n{i}", zone)
        docs.append(bound(f"w{i}", f"n{i}", "1200m", "1Gi", labels={"app": "web"}))
    docs += [bound(name, "full", cpu, "64Mi") for name, cpu in pods]
    return docs


def test_the_subset_saving_most_wins_over_the_longest_prefix() -> None:
    """Karpenter's search takes all four nodes (the longest prefix one cheaper node holds) and
    the cluster ends at $0.32/h, where merging the three others ends at $0.28/h."""
    out = disrupt(_cluster(), CATALOG)
    (cmd,) = commands(out)
    assert sorted(cmd["nodes"]) == ["n0", "n1", "n2"]
    (rep,) = cmd["replacements"]
    assert rep["instanceTypes"][0] == "four-cpu"  # the cheapest first
    assert set(cmd["pods"].values()) == {"replacement-0"}
    assert cmd["savingsPerHour"] == pytest.approx(3 * 0.10 - 0.18)
    assert out["disruption"]["costPerHour"]["after"] == pytest.approx(0.28)
    assert "full" in kept_reasons(out)


def test_among_equal_savings_the_fewest_pods_are_disrupted() -> None:
    """With two 1.2-cpu nodes, the best saves $0.02/h: two nodes on one four-cpu node.
    "full" with either other node saves as much (3.15 cpu), but it runs a second, small pod:
    the two 1.2-cpu nodes disrupt fewer pods."""
    out = disrupt(_cluster(pods=[("side", "50m")], zones=(ZA, ZB)), CATALOG)
    (cmd,) = commands(out)
    assert cmd["nodes"] == ["n0", "n1"]
    assert cmd["savingsPerHour"] == pytest.approx(2 * 0.10 - 0.18)


def test_a_budget_smaller_than_the_candidates_leaves_the_choice_to_karpenters_order() -> None:
    """A budget of two nodes: the round may take only some of the four, and Karpenter's order
    says which (here "full" first by name, every node's pods equally dear to move); the
    three-node merge waits, as the budget says it must."""
    out = disrupt(_cluster(budgets=[{"nodes": "2"}]), CATALOG)
    (cmd,) = commands(out)
    assert cmd["nodes"] == ["full", "n0"]
    assert cmd["savingsPerHour"] == pytest.approx(2 * 0.10 - 0.18)


def test_the_search_keeps_the_pdbs() -> None:
    """A PDB lets one web pod go at a time: no merge of two 1.2-cpu nodes is allowed, and no
    node saves anything alone; the best left is "full" with one of them ($0.02/h)."""
    docs = [*_cluster(), pdb("web", {"app": "web"}, max_unavailable=1)]
    out = disrupt(docs, CATALOG)
    (cmd,) = commands(out)
    assert cmd["nodes"] == ["full", "n0"]
    assert cmd["savingsPerHour"] == pytest.approx(2 * 0.10 - 0.18)
    assert sorted(blocked(out)) == ["n1", "n2"]  # the PDB allows no more this round


def test_the_same_cluster_gives_the_same_round_in_any_document_order() -> None:
    docs = _cluster()
    first = disrupt(docs, CATALOG)
    again = disrupt(list(reversed(docs)), CATALOG)
    assert commands(first) == commands(again)
    assert kept_reasons(first) == kept_reasons(again)
