"""When a round is due with no cluster change (``scheduling.disruption.due``): the earliest
end of a time hold on a node that nothing else holds, checked against the candidate verdicts
the same round gives just before and just after that moment."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from models.catalog import load_catalog
from scheduling.disruption.due import next_due
from scheduling.disruption.prepare import RoundInputs, prepare_round
from scheduling.inputs import Document
from tests.support.catalogs import catalog
from tests.support.disruption import DO_NOT_DISRUPT, NOW, bound, claim_for, managed, pool

SECOND = timedelta(seconds=1)


def _prepare(docs: Sequence[Mapping[str, Any]], now: datetime) -> RoundInputs:
    return prepare_round(
        [Document(copy.deepcopy(dict(d)), f"doc {i}") for i, d in enumerate(docs)],
        load_catalog(catalog()),
        now,
    )


def _due(docs: Sequence[Mapping[str, Any]], now: datetime = NOW) -> datetime | None:
    return next_due(_prepare(docs, now).cluster, now)


def _candidates(docs: Sequence[Mapping[str, Any]], now: datetime) -> set[str]:
    return {c.node.name for c in _prepare(docs, now).candidates}


def _stamp(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_an_empty_node_is_due_when_its_consolidate_after_ends() -> None:
    a = managed("a")
    docs = [
        pool(consolidate_after="30s"),
        a,
        claim_for(a, last_pod_event=_stamp(NOW - 10 * SECOND)),
    ]
    due = _due(docs)
    assert due == NOW + 20 * SECOND
    # the oracle: the round itself blocks the node just before and takes it at that moment
    assert _candidates(docs, due - SECOND) == set()
    assert _candidates(docs, due) == {"a"}


def test_the_earliest_node_sets_the_time_and_the_later_of_creation_and_pod_event_counts() -> None:
    a, b = managed("a"), managed("b")
    docs = [
        pool(consolidate_after="1m"),
        a,
        claim_for(a, last_pod_event=_stamp(NOW - 5 * SECOND)),
        b,
        claim_for(b, created=_stamp(NOW - 40 * SECOND), last_pod_event=_stamp(NOW - 50 * SECOND)),
    ]
    assert _due(docs) == NOW + 20 * SECOND  # b: created 40 s ago


def test_a_pod_do_not_disrupt_duration_holds_the_node_until_both_holds_end() -> None:
    a = managed("a")
    docs = [
        pool(consolidate_after="30s"),
        a,
        claim_for(a, last_pod_event=_stamp(NOW - 20 * SECOND)),
        bound("web-0", "a", annotations={DO_NOT_DISRUPT: "2m"}, started=_stamp(NOW - 60 * SECOND)),
    ]
    due = _due(docs)
    assert due == NOW + 60 * SECOND
    assert _candidates(docs, due - SECOND) == set()
    assert _candidates(docs, due) == {"a"}


def test_holds_no_clock_ends_make_nothing_due() -> None:
    a, b, c = managed("a"), managed("b", annotations={DO_NOT_DISRUPT: "true"}), managed("c")
    recent = _stamp(NOW - 5 * SECOND)
    docs = [
        pool(consolidate_after="30s"),
        a,
        claim_for(a, last_pod_event=recent),
        bound("web-0", "a", annotations={DO_NOT_DISRUPT: "true"}),
        b,
        claim_for(b, last_pod_event=recent),
        managed("d", initialized=False),
    ]
    assert _due(docs) is None
    # elapsed holds and consolidateAfter: Never make nothing due either
    assert _due([pool(consolidate_after="30s"), c, claim_for(c)]) is None
    assert _due([pool(consolidate_after="Never"), c, claim_for(c, last_pod_event=recent)]) is None


def test_a_budget_window_that_allows_nothing_is_due_when_it_closes() -> None:
    a = managed("a")
    window = {"nodes": "0", "schedule": "0 12 * * *", "duration": "10m"}  # 12:00-12:10 UTC
    docs = [pool(budgets=[window, {"nodes": "10%"}]), a, claim_for(a)]
    now = NOW + 3 * timedelta(minutes=1)
    due = _due(docs, now)
    assert due == NOW + timedelta(minutes=10)
    assert _candidates(docs, due - SECOND) == set()
    assert _candidates(docs, due) == {"a"}
    assert _due(docs, NOW + timedelta(minutes=11)) is None  # closed: nothing to wait for
