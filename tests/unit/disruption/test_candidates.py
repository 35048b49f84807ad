"""Which managed nodes may be disrupted now, and the one-line reason for each that may not
(DESIGN.md: uninitialized or deleting nodes, do-not-disrupt on the node or a pod, a pod whose
PDBs allow no eviction, consolidateAfter, a pool whose budget is used up)."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import pytest

from models.catalog import load_catalog
from scheduling.disruption.prepare import RoundInputs, prepare_round
from scheduling.inputs import Document
from tests.support.catalogs import catalog
from tests.support.disruption import DO_NOT_DISRUPT, NOW, bound, claim_for, managed, pdb, pool
from tests.support.manifests import daemonset, node, pod


def _prepare(docs: Sequence[Mapping[str, Any]], now: datetime = NOW) -> RoundInputs:
    return prepare_round(
        [Document(copy.deepcopy(dict(d)), f"doc {i}") for i, d in enumerate(docs)],
        load_catalog(catalog()),
        now,
    )


def _verdicts(docs: Sequence[Mapping[str, Any]], now: datetime = NOW) -> dict[str, str | None]:
    """Node → its blocked reason, or None for a candidate."""
    i = _prepare(docs, now)
    out: dict[str, str | None] = {c.node.name: None for c in i.candidates}
    for v in i.blocked:
        assert v.node not in out, "a node is listed once"
        out[v.node] = v.reason
    return out


def _cluster(*extra: Mapping[str, Any], **pool_kw: Any) -> list[Mapping[str, Any]]:
    a, b = managed("a"), managed("b")
    return [
        pool(**pool_kw),
        a,
        claim_for(a),
        b,
        claim_for(b),
        bound("web-0", "a", labels={"app": "web"}),
        bound("web-1", "b", labels={"app": "web"}),
        *extra,
    ]


def test_healthy_nodes_are_candidates_with_the_pods_that_would_move() -> None:
    i = _prepare([*_cluster(), daemonset("logs"), bound("logs-a", "a", owner_kind="DaemonSet")])
    assert {c.node.name for c in i.candidates} == {"a", "b"}
    a = next(c for c in i.candidates if c.node.name == "a")
    assert [p.key for p in a.pods] == ["default/web-0"]  # not the DaemonSet pod
    assert a.node.price == pytest.approx(0.192)
    assert a.node.claim == "a-claim"
    assert a.disruption_cost == pytest.approx(1.0)


def test_a_node_not_in_a_known_pool_is_not_managed() -> None:
    other = node("other", nodepool="elsewhere")
    plain = node("plain")
    v = _verdicts([*_cluster(), other, plain])
    assert set(v) == {"a", "b"}


def test_uninitialized_and_deleting_nodes_are_blocked() -> None:
    c = managed("c", initialized=False)
    d = managed("d", deleting=True)
    v = _verdicts([*_cluster(), c, claim_for(c), d, claim_for(d)])
    assert "not initialized" in (v["c"] or "")
    assert v["d"] == "being deleted"


def test_a_deleting_claim_makes_its_node_deleting() -> None:
    c = managed("c")
    v = _verdicts([*_cluster(), c, claim_for(c, deleting=True)])
    assert v["c"] == "being deleted"


def test_a_claim_whose_instance_is_terminating_frees_its_budget() -> None:
    """Read from the claim's InstanceTerminating condition: the node still shows as being
    deleted, but the pool's budget no longer counts it (Karpenter's count)."""
    c = managed("c")
    going = claim_for(c, deleting=True)
    i = _prepare([*_cluster(), c, going])
    assert (i.budgets.pools["default"].total, i.budgets.pools["default"].disrupting) == (3, 1)
    going = copy.deepcopy(dict(going))
    going.setdefault("status", {})["conditions"] = [
        {"type": "InstanceTerminating", "status": "True", "reason": "InstanceTerminating"}
    ]
    i = _prepare([*_cluster(), c, going])
    assert (i.budgets.pools["default"].total, i.budgets.pools["default"].disrupting) == (2, 0)
    assert _verdicts([*_cluster(), c, going])["c"] == "being deleted"


def test_do_not_disrupt_on_the_node() -> None:
    c = managed("c", annotations={DO_NOT_DISRUPT: "true"})
    v = _verdicts([*_cluster(), c, claim_for(c)])
    assert v["c"] == f'node has {DO_NOT_DISRUPT}: "true"'


def test_do_not_disrupt_on_a_pod_true_or_a_duration_not_yet_elapsed() -> None:
    v = _verdicts(
        _cluster(
            bound("keep", "a", annotations={DO_NOT_DISRUPT: "true"}),
            bound("warm", "b", annotations={DO_NOT_DISRUPT: "2h"}, started="2026-11-23T11:00:00Z"),
        )
    )
    assert "pod default/keep" in (v["a"] or "")
    assert "pod default/warm" in (v["b"] or "") and "not yet elapsed" in (v["b"] or "")


def test_a_do_not_disrupt_duration_that_has_elapsed_no_longer_blocks() -> None:
    v = _verdicts(
        _cluster(
            bound("warm", "b", annotations={DO_NOT_DISRUPT: "30m"}, started="2026-11-23T11:00:00Z")
        )
    )
    assert v["b"] is None


def test_a_pod_whose_pdb_allows_no_eviction_blocks_its_node() -> None:
    v = _verdicts(_cluster(pdb("web", {"app": "web"}, min_available=2)))
    assert "PodDisruptionBudget default/web allows no eviction" in (v["a"] or "")
    assert "2 of 2 pod(s) healthy" in (v["a"] or "")


def test_a_pdb_with_room_does_not_block() -> None:
    v = _verdicts(_cluster(pdb("web", {"app": "web"}, max_unavailable=1)))
    assert v == {"a": None, "b": None}


def test_consolidate_after_never_blocks() -> None:
    v = _verdicts(_cluster(consolidate_after="Never"))
    assert v["a"] == "nodepool default has consolidateAfter: Never"


def test_consolidate_after_counts_from_the_later_of_creation_and_last_pod_event() -> None:
    c, d, e = managed("c"), managed("d"), managed("e")
    v = _verdicts(
        [
            *_cluster(consolidate_after="10m"),
            c,
            claim_for(c, last_pod_event="2026-11-23T11:55:00Z"),
            d,
            claim_for(d, created="2026-11-23T11:58:00Z"),
            e,
            claim_for(e, last_pod_event="2026-11-23T11:40:00Z"),
        ]
    )
    assert v["c"] == "last pod event 5m0s ago, consolidateAfter is 10m (disruptable in 5m0s)"
    assert v["d"] == "created 2m0s ago, consolidateAfter is 10m (disruptable in 8m0s)"
    assert v["e"] is None
    assert v["a"] is None  # created long ago, no pod event


def test_a_pool_whose_budget_allows_nothing_blocks_its_nodes() -> None:
    v = _verdicts(_cluster(budgets=[{"nodes": "0"}]))
    assert "budget allows no disruption" in (v["a"] or "")


def test_not_ready_nodes_use_up_the_budget_of_the_others() -> None:
    c = managed("c", ready=False)
    v = _verdicts([*_cluster(budgets=[{"nodes": "1"}]), c, claim_for(c)])
    assert all("1 already disrupting" in (r or "") for r in v.values())


def test_a_node_nominated_for_pending_pods_is_blocked() -> None:
    v = _verdicts(_cluster(pod("pending-0", "500m", "1Gi")))
    assert "nominated for pending pod default/pending-0" in (v["a"] or "")
    assert v["b"] is None


def test_the_first_reason_wins_and_each_node_is_listed_once() -> None:
    c = managed("c", initialized=False, annotations={DO_NOT_DISRUPT: "true"})
    v = _verdicts([*_cluster(consolidate_after="Never"), c, claim_for(c)])
    assert "not initialized" in (v["c"] or "")


def test_a_managed_node_without_a_claim_is_its_own_claim() -> None:
    c = managed("c")
    i = _prepare([*_cluster(), c])
    assert next(x for x in i.candidates if x.node.name == "c").node.claim == "c"


def test_disruption_cost_follows_deletion_cost_priority_and_remaining_lifetime() -> None:
    cheap = bound(
        "cheap", "a", annotations={"controller.kubernetes.io/pod-deletion-cost": "-2147483648"}
    )
    important = bound("important", "b", priority=1_000_000_000)
    c = managed("c")
    i = _prepare(
        [
            *_cluster(cheap, important),
            c,
            claim_for(c, created="2026-11-22T12:00:00Z", expire_after="48h"),
            bound("x", "c"),
        ]
    )
    cost = {x.node.name: x.disruption_cost for x in i.candidates}
    assert cost["a"] < 1.0  # web-0 (1) + cheap (1 - 16 clamped to -10)
    assert cost["b"] == pytest.approx(1 + 10)  # web-1, and important's 1 + 29.8 clamped to 10
    assert cost["c"] == pytest.approx(0.5)  # one pod, half its 48h lifetime left
