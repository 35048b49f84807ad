"""The watchers tell the disruption workflow when a pod on a node turns Ready or stops being
Ready: PodDisruptionBudgets count Ready pods, so a round that found a node blocked by a PDB
must hear of the change instead of waiting for the slow timer."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.watcher_signals import signalling_watchers
from worker.running.watchers import pod_healthy


def pod(phase: str, ready: bool, node: str = "n1") -> dict[str, Any]:
    return {
        "metadata": {"namespace": "ns", "name": "web-1"},
        "spec": {"nodeName": node},
        "status": {
            "phase": phase,
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
        },
    }


def test_pod_healthy_is_running_and_ready() -> None:
    assert pod_healthy(pod("Running", True))
    assert not pod_healthy(pod("Running", False))
    assert not pod_healthy(pod("Pending", False))
    assert not pod_healthy({"metadata": {}})


def test_a_bound_pod_turning_ready_or_unready_signals_disruption(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    watchers, signals = signalling_watchers(monkeypatch)
    watchers.on_pod("ADDED", pod("Pending", False))  # listed, bound: a binding is news
    assert signals == ["changed"]
    watchers.on_pod("MODIFIED", pod("Pending", False))
    assert signals == ["changed"]  # nothing new
    watchers.on_pod("MODIFIED", pod("Running", True))
    assert signals == ["changed"] * 2  # turned Ready
    watchers.on_pod("MODIFIED", pod("Running", True))
    assert signals == ["changed"] * 2
    watchers.on_pod("MODIFIED", pod("Running", False))
    assert signals == ["changed"] * 3  # no longer Ready
