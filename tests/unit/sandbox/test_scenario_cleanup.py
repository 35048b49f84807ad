"""The scenario runner's final cleanup: a fleet kept on purpose (``scale`` with
``JOINERY_SCALE_RETIRE=0``) is counted, not waited for, and is no failure; any other fleet
left behind still is, and so is anything else a launch made (Azure's NICs and disks)."""

from __future__ import annotations

import json
import sys
import types
from typing import Any

import pytest

import sandbox.scenarios as scenarios
from sandbox.scenarios.common import Summary


class FakeSandbox:
    """Three instances, each still running a workload pod (no node can empty)."""

    removals = 0
    closed = 0
    leftovers: dict[str, int] = {}

    def __init__(self, stack: Any, log: Any) -> None:
        pass

    def wait_leftovers_gone(self, *, timeout: float) -> dict[str, int]:
        return dict(FakeSandbox.leftovers)

    def close(self) -> None:
        FakeSandbox.closed += 1

    def live_instances(self) -> list[str]:
        return ["i-1", "i-2", "i-3"]

    def nodeclaims(self) -> list[dict[str, Any]]:
        return [{}, {}, {}]

    def remove_empty_nodes(self, *, timeout: float) -> int:
        FakeSandbox.removals += 1
        raise RuntimeError(f"timed out after {timeout:.0f}s waiting for every NodeClaim removed")

    def wait_instances_terminated(self, *, timeout: float) -> int:
        return len(self.live_instances())


def run_with(monkeypatch: pytest.MonkeyPatch, keep: bool) -> Summary:
    def run(sandbox: Any, summary: Summary, timeout: float) -> None:
        summary.fleetKept = keep

    module = types.ModuleType("fake_scenario")
    module.run = run  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "fake_scenario", module)
    monkeypatch.setitem(scenarios.SCENARIOS, "fake", "fake_scenario")
    monkeypatch.setattr(scenarios, "Sandbox", FakeSandbox)
    FakeSandbox.removals = FakeSandbox.closed = 0
    return scenarios.run("fake", stack=None, log=print)  # type: ignore[arg-type]


def test_a_fleet_kept_on_purpose_is_counted_not_waited_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    summary = run_with(monkeypatch, keep=True)
    assert summary.ok, summary.failures
    assert summary.instancesLeftRunning == 3
    assert FakeSandbox.removals == 0
    assert json.loads(summary.to_json())["fleetKept"] is True


def test_a_fleet_left_otherwise_still_fails_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    summary = run_with(monkeypatch, keep=False)
    assert not summary.ok
    assert FakeSandbox.removals == 1
    assert summary.failures == [
        "cleanup: timed out after 90s waiting for every NodeClaim removed",
        "3 instance(s) left running",
    ]
    assert "fleetKept" not in summary.to_json()
    assert FakeSandbox.closed == 1


def test_nics_and_disks_left_fail_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(FakeSandbox, "leftovers", {"network interfaces": 2, "disks": 0})
    summary = run_with(monkeypatch, keep=False)
    assert "2 network interfaces left behind" in summary.failures
    assert not any("disks" in f for f in summary.failures)
    out = json.loads(summary.to_json())
    assert (out["network_interfaces_left"], out["disks_left"]) == (2, 0)
