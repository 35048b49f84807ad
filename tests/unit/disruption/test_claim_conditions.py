"""The Consolidatable and Drifted conditions a NodeClaim should carry, as Karpenter keeps
them, and the write plan that touches a claim only when a status or reason changes."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from activities.disruption.claim_conditions import applied, changes
from models.catalog import load_catalog
from scheduling.disruption.claim_conditions import Wanted, desired
from scheduling.disruption.prepare import prepare_round
from scheduling.inputs import Document
from tests.support.catalogs import catalog
from tests.support.disruption import NOW, claim_for, managed, node_and_claim, pool
from tests.support.labels import CAPACITY_TYPE
from tests.support.manifests import req

C, D = "Consolidatable", "Drifted"


def _desired(docs: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Wanted | None]]:
    types = load_catalog(catalog())
    i = prepare_round(
        [Document(copy.deepcopy(dict(d)), f"doc {n}") for n, d in enumerate(docs)], types, NOW
    )
    return desired(i.cluster, NOW)


def test_an_initialized_claim_past_consolidate_after_is_consolidatable_and_not_drifted() -> None:
    got = _desired([pool(consolidate_after="5m"), *node_and_claim("a")])
    assert got == {"a-claim": {C: Wanted(C, "True", C), D: None}}


def test_consolidate_after_counts_from_the_last_pod_event() -> None:
    recent = "2026-11-23T11:58:00Z"  # two minutes before NOW
    assert (
        _desired([pool(consolidate_after="5m"), *node_and_claim("a", last_pod_event=recent)])[
            "a-claim"
        ][C]
        is None
    )
    old = "2026-11-23T11:54:00Z"
    assert _desired([pool(consolidate_after="5m"), *node_and_claim("a", last_pod_event=old)])[
        "a-claim"
    ][C] == Wanted(C, "True", C)


def test_consolidate_after_counts_from_a_recent_creation() -> None:
    body = managed("a")
    docs = [pool(consolidate_after="5m"), body, claim_for(body, created="2026-11-23T11:59:00Z")]
    assert _desired(docs)["a-claim"][C] is None


def test_never_and_uninitialized_claims_carry_no_consolidatable() -> None:
    assert _desired([pool(consolidate_after="Never"), *node_and_claim("a")])["a-claim"][C] is None
    got = _desired([pool(), *node_and_claim("a", initialized=False)])
    assert got["a-claim"][C] is None


def test_drifted_carries_the_engine_reason_and_message() -> None:
    got = _desired([pool(requirements=[req(CAPACITY_TYPE, "In", "spot")]), *node_and_claim("a")])
    drifted = got["a-claim"][D]
    assert drifted is not None
    assert (drifted.type, drifted.status, drifted.reason) == (D, "True", "RequirementsDrifted")
    assert drifted.message.startswith("nodepool default no longer admits it")


def test_drift_is_reported_for_claims_the_round_may_not_disrupt() -> None:
    docs = [
        pool(consolidate_after="Never", requirements=[req(CAPACITY_TYPE, "In", "spot")]),
        *node_and_claim("a", annotations={"karpenter.sh/do-not-disrupt": "true"}),
    ]
    got = _desired(docs)["a-claim"]
    assert got[C] is None
    drifted = got[D]
    assert drifted is not None and drifted.reason == "RequirementsDrifted"


def test_a_deleting_claim_is_left_alone() -> None:
    body = managed("a")
    assert _desired([pool(), body, claim_for(body, deleting=True)]) == {}


def _cond(type_: str, status: str, reason: str, at: str = "2026-01-01T00:00:00Z") -> dict[str, Any]:
    return {"type": type_, "status": status, "reason": reason, "lastTransitionTime": at}


def test_nothing_to_write_when_status_and_reason_match() -> None:
    existing = [_cond(C, "True", C), _cond("Ready", "True", "Ready")]
    assert changes(existing, {C: Wanted(C, "True", C), D: None}) == {}


def test_a_message_change_alone_is_no_write_but_a_reason_change_is() -> None:
    existing = [_cond(D, "True", "NodePoolDrifted") | {"message": "old"}]
    assert changes(existing, {D: Wanted(D, "True", "NodePoolDrifted", "new")}) == {}
    todo = changes(existing, {D: Wanted(D, "True", "RequirementsDrifted")})
    assert list(todo) == [D]


def test_removal_drops_only_that_condition_and_a_new_one_gets_the_write_time() -> None:
    existing = [_cond("Ready", "True", "Ready"), _cond(D, "True", "NodePoolDrifted")]
    todo = changes(existing, {C: Wanted(C, "True", C), D: None})
    out = applied(existing, todo, generation=3, at="2026-11-23T12:00:00Z")
    assert [c["type"] for c in out] == ["Ready", C]
    assert out[0]["lastTransitionTime"] == "2026-01-01T00:00:00Z"
    assert out[1]["lastTransitionTime"] == "2026-11-23T12:00:00Z"
    assert out[1]["observedGeneration"] == 3


def test_a_reason_change_keeps_the_transition_time() -> None:
    existing = [_cond(D, "True", "NodePoolDrifted")]
    todo = changes(existing, {D: Wanted(D, "True", "RequirementsDrifted", "m")})
    out = applied(existing, todo, generation=None, at="2026-11-23T12:00:00Z")
    assert out[0]["reason"] == "RequirementsDrifted"
    assert out[0]["lastTransitionTime"] == "2026-01-01T00:00:00Z"
