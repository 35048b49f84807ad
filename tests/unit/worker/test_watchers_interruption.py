"""An interruption message reaches the watchers: the NodeClaim it names is signalled (unless
the message is news only, a rebalance recommendation) and Karpenter's events are told about
it and its Node; the message's time on the queue is observed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from activities.ec2.interruption import (
    REBALANCE_RECOMMENDATION,
    SPOT_INTERRUPTION,
    InterruptionEvent,
)
from activities.lifecycle import interruption_events
from models import contract
from worker.running import metrics
from worker.running.watchers import Watchers


class Recorded:
    def __init__(self) -> None:
        self.signals: list[tuple[str, str, tuple[Any, ...]]] = []
        self.told: list[tuple[str, str, str | None, str, bool]] = []


def _watchers(monkeypatch: pytest.MonkeyPatch) -> tuple[Watchers, Recorded]:
    rec = Recorded()
    w = Watchers(
        kube=None,  # type: ignore[arg-type]  # nothing is read from the cluster
        client=None,  # type: ignore[arg-type]
        loop=None,  # type: ignore[arg-type]
        cluster="c",
        task_queue="q",
    )
    monkeypatch.setattr(w, "signal_claim", lambda name, sig, *a: rec.signals.append((name, sig, a)))
    monkeypatch.setattr(w._writer, "write", lambda _what, fn: fn())  # at once, on this thread

    def tell(
        _kube: Any, kind: str, detail: str, node: str | None, claim: str, draining: bool
    ) -> list[str]:
        rec.told.append((kind, detail, node, claim, draining))
        return []

    monkeypatch.setattr(interruption_events, "tell", tell)
    w._claims_by_provider["aws:///us-east-1a/i-0abc"] = "claim-a"
    w._claim_by_node["node-a"] = "claim-a"
    return w, rec


def _latency_count() -> float:
    (family,) = metrics.INTERRUPTION_LATENCY.collect()
    return next(s.value for s in family.samples if s.name.endswith("_count"))


def test_a_spot_interruption_drains_and_tells(monkeypatch: pytest.MonkeyPatch) -> None:
    w, rec = _watchers(monkeypatch)
    before = _latency_count()
    sent = (datetime.now(UTC) - timedelta(seconds=3)).strftime("%Y-%m-%dT%H:%M:%SZ")
    event = InterruptionEvent(SPOT_INTERRUPTION, ("i-0abc",), time=sent, detail="terminate")
    assert w.on_interruption(event) is True
    assert rec.signals == [("claim-a", contract.SIGNAL_INTERRUPTED, (SPOT_INTERRUPTION,))]
    assert rec.told == [(SPOT_INTERRUPTION, "terminate", "node-a", "claim-a", True)]
    assert _latency_count() == before + 1


def test_a_rebalance_recommendation_tells_without_draining(monkeypatch: pytest.MonkeyPatch) -> None:
    w, rec = _watchers(monkeypatch)
    event = InterruptionEvent(REBALANCE_RECOMMENDATION, ("i-0abc",))
    assert w.on_interruption(event) is True
    assert rec.signals == []
    assert rec.told == [(REBALANCE_RECOMMENDATION, "", "node-a", "claim-a", False)]


def test_an_unknown_instance_keeps_a_draining_message(monkeypatch: pytest.MonkeyPatch) -> None:
    w, rec = _watchers(monkeypatch)
    assert w.on_interruption(InterruptionEvent(SPOT_INTERRUPTION, ("i-0other",))) is False
    assert w.on_interruption(InterruptionEvent(REBALANCE_RECOMMENDATION, ("i-0other",))) is True
    assert rec.signals == [] and rec.told == []
