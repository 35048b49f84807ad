"""``joinery dev --scenario`` offers exactly the scenarios the sandbox has (the CLI keeps its
own list so that importing it stays cheap)."""

from __future__ import annotations

from sandbox import scenarios
from worker.cli.dev_command import SCENARIO_NAMES


def test_the_cli_lists_every_scenario() -> None:
    assert sorted(SCENARIO_NAMES) == scenarios.names()
