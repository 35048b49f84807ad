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


def run_scenario(name: str) -> tuple[int, dict[str, Any], str]:
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
            str(SCENARIO_TIMEOUT),
        ),
        capture_output=True,
        text=True,
        timeout=SCENARIO_TIMEOUT + 120,
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
