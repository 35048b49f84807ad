"""``joinery dev --scenario`` offers exactly the scenarios the sandbox has (the CLI keeps its
own list so that importing it stays cheap)."""

from __future__ import annotations

import argparse

import pytest

from sandbox import scenarios
from worker.cli.dev_command import AZURE_SCENARIOS, SCENARIO_NAMES, _validate, register
from worker.usage import UsageError


def test_the_cli_lists_every_scenario() -> None:
    assert sorted(SCENARIO_NAMES) == scenarios.names()


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    return parser.parse_args(["dev", *argv])


def test_azure_runs_only_the_scenarios_with_an_azure_twin() -> None:
    assert set(AZURE_SCENARIOS) <= set(SCENARIO_NAMES)
    for name in AZURE_SCENARIOS:
        args = _args("--provider", "azure", "--scenario", name)
        _validate(args)
        assert args.region == "eastus"
    with pytest.raises(UsageError, match=r"--scenario efa runs on aws only"):
        _validate(_args("--provider", "azure", "--scenario", "efa"))


def test_the_region_defaults_per_cloud() -> None:
    aws = _args("--scenario", "efa")
    _validate(aws)
    assert aws.region == "us-east-1" and aws.provider == "aws"
    given = _args("--provider", "azure", "--region", "westus2")
    _validate(given)
    assert given.region == "westus2"
