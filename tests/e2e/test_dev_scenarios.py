"""``joinery dev --scenario NAME --exit``, run as a user would, for every scenario.

Each run starts the whole sandbox (Temporal, control plane, EC2 emulator, worker) in a
subprocess on free loopback ports, drives the scenario and stops everything. The contract
checked here is the one CI and people rely on: the last stdout line is the JSON summary, the
exit code is 0 exactly when the summary says ``ok``, and nothing is left running.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from sandbox.dev import joinery_command

REPO = Path(__file__).resolve().parents[2]
KEYS = {
    "scenario",
    "pods",
    "nodes",
    "costPerHour",
    "secondsToAllRunning",
    "instancesLeftRunning",
    "ok",
}
SCENARIO_TIMEOUT = 150  # seconds the scenario itself may take (--timeout)
# Disruption scenarios wait out several rounds, each with its 15 s validation delay.
DISRUPTION_TIMEOUT = 420


def run_scenario(name: str, timeout: int = SCENARIO_TIMEOUT) -> tuple[int, dict[str, Any], str]:
    result = subprocess.run(
        joinery_command(
            "dev",
            "--scenario",
            name,
            "--exit",
            "--temporal-port",
            "0",
            "--boot-delay",
            "1",
            "--timeout",
            str(timeout),
        ),
        capture_output=True,
        text=True,
        timeout=timeout + 120,
        cwd=REPO,
        check=False,
    )
    lines = result.stdout.strip().splitlines()
    assert lines, result.stderr[-4000:]
    summary: dict[str, Any] = json.loads(lines[-1])
    return result.returncode, summary, result.stderr


@pytest.mark.timeout(SCENARIO_TIMEOUT + 150)
@pytest.mark.parametrize("name", ["smoke", "interruption"])
def test_scenario_holds(name: str) -> None:
    code, summary, stderr = run_scenario(name)
    assert set(summary) >= KEYS, summary
    assert summary["scenario"] == name
    assert summary["ok"] is True, f"{summary}\n{stderr[-4000:]}"
    assert code == 0
    assert summary["instancesLeftRunning"] == 0
    assert summary["nodes"] >= 1
    assert summary["costPerHour"] > 0
    assert summary["secondsToAllRunning"] is not None
    if name == "smoke":
        assert summary["pods"] == 20
    else:
        # One per node, plus at least the replacement of the interrupted one.
        assert summary["nodes"] >= summary["pods"] + 1


@pytest.mark.timeout(DISRUPTION_TIMEOUT + 150)
def test_consolidation_leaves_a_cheaper_fleet_within_budget_and_pdb() -> None:
    """40 pods scaled to 4: the DisruptionWorkflow alone makes the fleet smaller and cheaper,
    never disrupting more than the pool's budget at once nor breaking the PDB's promise."""
    code, summary, stderr = run_scenario("consolidation", DISRUPTION_TIMEOUT)
    assert summary["ok"] is True, f"{summary}\n{stderr[-4000:]}"
    assert code == 0
    assert summary["instancesLeftRunning"] == 0
    assert summary["costPerHour"] < summary["costPerHourBefore"]
    assert summary["nodes"] < summary["nodesBefore"]
    assert summary["fixpoint"] is True  # joinery plan --disruption proposes nothing more
    assert summary["podsAfter"] == 4
    assert summary["pdbMinAvailable"] == 3
    assert summary["minPodsRunning"] >= summary["pdbMinAvailable"]
    assert summary["budgetExceeded"] == 0
    assert summary["maxDisrupting"] >= 1
    # Rounds were carried out, each after its validation delay, and the figures add up.
    assert summary["rounds"] >= 1
    assert summary["validationDelays"] >= 1
    assert summary["joinerySeconds"] == pytest.approx(
        summary["secondsToCheaperFleet"] - summary["validationDelaySeconds"], abs=0.2
    )
    assert summary["samples"] >= 20


@pytest.mark.timeout(DISRUPTION_TIMEOUT + 150)
def test_drift_rolls_every_node_within_the_budget() -> None:
    """The pool's requirements exclude the running nodes: every one is replaced, never more
    than the budget (2) at once, with the PDB's minimum of pods Running throughout."""
    code, summary, stderr = run_scenario("drift", DISRUPTION_TIMEOUT)
    assert summary["ok"] is True, f"{summary}\n{stderr[-4000:]}"
    assert code == 0
    assert summary["instancesLeftRunning"] == 0
    assert summary["nodesRolled"] == 4
    assert summary["nodes"] == 4
    assert summary["budget"] == 2
    assert 1 <= summary["maxDisrupting"] <= summary["budget"]
    assert summary["minPodsRunning"] >= summary["pdbMinAvailable"] == 2
    assert summary["validationDelays"] >= 1
    assert summary["samples"] >= 20
