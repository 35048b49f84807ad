"""The node simulator's kubelets register a burst's Nodes together, not one after another
(``sandbox/nodes.py``), each once, and a refused registration is tried again."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any
from unittest.mock import MagicMock

from sandbox import nodes
from sandbox.nodes import NodeSimulator


def _claim(i: int) -> dict[str, Any]:
    return {"metadata": {"name": f"c{i}"}, "status": {"providerID": f"aws:///z/i-{i:04d}"}}


def test_a_burst_registers_concurrently_and_each_node_once(monkeypatch: Any) -> None:
    together = 8
    barrier = threading.Barrier(together, timeout=10)
    calls: list[str] = []
    lock = threading.Lock()

    def register(_admin: Any, claim: Mapping[str, Any]) -> dict[str, Any]:
        with lock:
            calls.append(claim["metadata"]["name"])
        barrier.wait()  # breaks (and fails the test) unless 8 registrations run at once
        return {}

    monkeypatch.setattr(nodes, "register", register)
    simulator = NodeSimulator(MagicMock())
    try:
        for i in range(together):
            assert simulator._consider(_claim(i))
            assert simulator._consider(_claim(i))  # seen again while registering: once only
        simulator._kubelets.shutdown(wait=True)
        assert sorted(calls) == [f"c{i}" for i in range(together)]
        assert len(simulator.registered) == together
        assert simulator._consider(_claim(0))  # registered: nothing more
        assert len(calls) == together
    finally:
        simulator.stop()


def test_a_refused_registration_is_tried_again(monkeypatch: Any) -> None:
    tries: list[int] = []

    def register(_admin: Any, claim: Mapping[str, Any]) -> dict[str, Any]:
        tries.append(1)
        if len(tries) < 3:
            raise RuntimeError("the API server is busy")
        return {}

    monkeypatch.setattr(nodes, "register", register)
    simulator = NodeSimulator(MagicMock(), interval=0.01)
    try:
        simulator._consider(_claim(1))
        simulator._kubelets.shutdown(wait=True)
        assert len(tries) == 3
        assert simulator.registered == frozenset({"aws:///z/i-0001"})
    finally:
        simulator.stop()


def test_a_claim_still_booting_is_not_registered(monkeypatch: Any) -> None:
    monkeypatch.setattr(nodes, "register", MagicMock(side_effect=AssertionError("too early")))
    simulator = NodeSimulator(MagicMock(), boot_seconds=30.0)
    try:
        assert simulator._consider(_claim(1)) is False
    finally:
        simulator.stop()


def test_a_claim_deleted_before_its_kubelet_registered_gets_no_node(monkeypatch: Any) -> None:
    """An instance terminated before it joined never registers: a Node created for it would
    stay, with no claim, counted as room by the next rounds."""
    calls: list[str] = []

    def register(_admin: Any, claim: Mapping[str, Any]) -> dict[str, Any]:
        calls.append(claim["metadata"]["name"])
        return {}

    monkeypatch.setattr(nodes, "register", register)
    simulator = NodeSimulator(MagicMock())
    try:
        claim = _claim(7)
        deleting = {**claim, "metadata": {**claim["metadata"], "deletionTimestamp": "now"}}
        assert simulator._consider(deleting)  # the watch saw the claim deleting
        simulator._register(claim, "aws:///z/i-0007")  # a registration queued before that
        assert calls == []
        assert simulator.registered == frozenset()
    finally:
        simulator.stop()
