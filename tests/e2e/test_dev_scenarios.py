"""``joinery dev --scenario NAME --exit``, run as a user would, for every scenario.

Each run starts the whole sandbox (Temporal, control plane, EC2 emulator, worker) in a
subprocess on free loopback ports, drives the scenario and stops everything. The contract
checked here is the one CI and people rely on: the last stdout line is the JSON summary, the
exit code is 0 exactly when the summary says ``ok``, and nothing is left running.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
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
# Seconds the scenario itself may take (--timeout): a guard against a hang, not a speed
# bar (alone, smoke is Running in ~30 s). Seven stacks boot at once on two cores, and on a
# loaded CI box smoke, started fifth, once waited past 150 s for its first NodeClaim.
SCENARIO_TIMEOUT = 240
# Disruption scenarios wait out several rounds, each with its 15 s validation delay.
DISRUPTION_TIMEOUT = 420
# The capacity block's end waits for a garbage-collection pass (every 2 minutes).
RESERVED_TIMEOUT = 300
TIMEOUTS = {
    "consolidation": DISRUPTION_TIMEOUT,
    "drift": DISRUPTION_TIMEOUT,
    "migration": DISRUPTION_TIMEOUT,
    "reserved": RESERVED_TIMEOUT,
    "smoke": SCENARIO_TIMEOUT,
    "interruption": SCENARIO_TIMEOUT,
    "efa": SCENARIO_TIMEOUT,
}
STAGGER_SECONDS = 8


@dataclass
class ScenarioRun:
    """One ``joinery dev --scenario`` subprocess; its output goes to files, not pipes, so a
    chatty stack never blocks on a full pipe while the tests wait for another scenario."""

    name: str
    timeout: int
    process: subprocess.Popen[bytes]
    stdout: Path
    stderr: Path

    def result(self) -> tuple[int, dict[str, Any], str]:
        code = self.process.wait(timeout=self.timeout + 120)
        lines = self.stdout.read_text(errors="replace").strip().splitlines()
        err = self.stderr.read_text(errors="replace")
        assert lines, err[-4000:]
        summary: dict[str, Any] = json.loads(lines[-1])
        return code, summary, err


def start_scenario(name: str, timeout: int, logs: Path) -> ScenarioRun:
    command = joinery_command(
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
    )
    paths = logs / f"{name}.out", logs / f"{name}.err"
    out, err = (os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC) for p in paths)
    try:
        process = subprocess.Popen(
            command, stdout=out, stderr=err, cwd=REPO, start_new_session=True
        )
    finally:
        os.close(out)
        os.close(err)
    return ScenarioRun(name, timeout, process, *paths)


@pytest.fixture(scope="module")
def scenarios(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, ScenarioRun]]:
    """Every scenario started at once: each runs its own sandbox on free ports and mostly
    waits (boot, validation delays, kube-scheduler backoff), so together they take about as
    long as the longest one instead of the sum (~9 minutes of the suite otherwise)."""
    logs = tmp_path_factory.mktemp("scenarios")
    runs: dict[str, ScenarioRun] = {}
    for name, timeout in TIMEOUTS.items():  # longest first, a little apart: most of a
        if runs:  # sandbox's ports are bound before the next one picks its own
            time.sleep(STAGGER_SECONDS)
        runs[name] = start_scenario(name, timeout, logs)
    yield runs
    for run in runs.values():
        stop(run.process)


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop a scenario still running (a test timed out): Ctrl-C first, so ``joinery dev``
    stops the Temporal server, control plane and worker it started (SIGKILL would leave them
    running, loading every later test), then its whole process group."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGINT)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=60)
    with contextlib.suppress(ProcessLookupError):  # what it did not stop, in its group
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


@pytest.mark.timeout(SCENARIO_TIMEOUT + 150)
@pytest.mark.parametrize("name", ["smoke", "interruption", "efa"])
def test_scenario_holds(name: str, scenarios: dict[str, ScenarioRun]) -> None:
    code, summary, stderr = scenarios[name].result()
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
    elif name == "efa":
        # one node per pod, each launched with its type's EFA interfaces (checked inside)
        assert summary["pods"] == summary["nodes"] == summary["efaInstancesChecked"] == 2
    else:
        # One per node, plus at least the replacement of the interrupted one.
        assert summary["nodes"] >= summary["pods"] + 1


@pytest.mark.timeout(DISRUPTION_TIMEOUT + 150)
def test_consolidation_leaves_a_cheaper_fleet_within_budget_and_pdb(
    scenarios: dict[str, ScenarioRun],
) -> None:
    """40 pods scaled to 4: the DisruptionWorkflow alone makes the fleet smaller and cheaper,
    never disrupting more than the pool's budget at once nor breaking the PDB's promise."""
    code, summary, stderr = scenarios["consolidation"].result()
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
def test_drift_rolls_every_node_within_the_budget(scenarios: dict[str, ScenarioRun]) -> None:
    """The pool's requirements exclude the running nodes: every one is replaced, never more
    than the budget (2) at once, with the PDB's minimum of pods Running throughout."""
    code, summary, stderr = scenarios["drift"].result()
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


@pytest.mark.timeout(DISRUPTION_TIMEOUT + 150)
def test_migration_adopts_karpenters_fleet_then_drifts_and_consolidates(
    scenarios: dict[str, ScenarioRun],
) -> None:
    """A fleet staged as Karpenter v1.14 leaves it: Joinery adopts the current claims without
    a roll or a leak (through a GC round), replaces the one Karpenter's own hash calls
    drifted, then rolls every node on a template change and consolidates the empty ones."""
    code, summary, stderr = scenarios["migration"].result()
    assert summary["ok"] is True, f"{summary}\n{stderr[-4000:]}"
    assert code == 0
    assert summary["adopted"] == summary["restamped"] == 3
    assert summary["rolledOnAdoption"] == 0
    assert summary["instancesTerminatedOnAdoption"] == 0
    assert summary["staleReplaced"] == 1
    assert summary["gcRoundsDuringAdoption"] >= 1
    assert summary["driftRolled"] == 4
    assert summary["nodesAfterConsolidation"] == 1
    assert summary["instancesLeftRunning"] == 0


@pytest.mark.timeout(RESERVED_TIMEOUT + 150)
def test_reserved_prefers_the_reservation_falls_back_and_drains_an_expiring_block(
    scenarios: dict[str, ScenarioRun],
) -> None:
    """Two places in an ODCR for three one-per-node pods: two reserved nodes, one on-demand;
    a capacity block's pod moved to on-demand once the block is within 40 minutes of its end."""
    code, summary, stderr = scenarios["reserved"].result()
    assert summary["ok"] is True, f"{summary}\n{stderr[-4000:]}"
    assert code == 0
    assert summary["instancesLeftRunning"] == 0
    assert (summary["reservedNodes"], summary["onDemandFallbacks"]) == (2, 1)
    assert summary["capacityBlockNodes"] == 1
    assert summary["secondsToBlockDrained"] > 0
