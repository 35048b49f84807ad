"""Karpenter's MIN_VALUES_POLICY, PREFERENCE_POLICY and FEATURE_GATES as settings: parsed
with Karpenter's syntax and defaults, a bad value refused in one line (exit 2)."""

from __future__ import annotations

import argparse

import pytest

from models.policies import (
    BEST_EFFORT,
    IGNORE,
    RESPECT,
    STRICT,
    FeatureGates,
    PolicyError,
    parse_feature_gates,
    parse_policies,
)
from worker.cli.command import main
from worker.cli.worker_command import register as register_worker
from worker.cli.worker_command import settings_from


def test_defaults_are_karpenters() -> None:
    p = parse_policies()
    assert (p.min_values, p.preference) == (STRICT, RESPECT)
    assert p.gates == FeatureGates(spot_to_spot_consolidation=False, node_repair=False)


def test_feature_gates_take_karpenters_syntax() -> None:
    gates = parse_feature_gates(
        " SpotToSpotConsolidation=true , NodeRepair=True,ReservedCapacity=1"
    )
    assert gates.spot_to_spot_consolidation and gates.node_repair
    assert not parse_feature_gates("SpotToSpotConsolidation=false").spot_to_spot_consolidation
    # Karpenter's own default string is accepted as it stands.
    karpenter_default = (
        "NodeRepair=false,ReservedCapacity=true,SpotToSpotConsolidation=false,"
        "NodeOverlay=false,StaticCapacity=false,CapacityBuffer=false"
    )
    assert parse_feature_gates(karpenter_default) == FeatureGates()


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ("SpotToSpot=true", "unknown feature gate 'SpotToSpot'"),
        ("NodeRepair", "expected Name=true|false"),
        ("NodeRepair=maybe", "invalid value 'maybe' for feature gate NodeRepair"),
        ("NodeOverlay=true", "NodeOverlay is not implemented"),
        ("StaticCapacity=true", "StaticCapacity is not implemented"),
        ("CapacityBuffer=true", "CapacityBuffer is not implemented"),
        ("ReservedCapacity=false", "ReservedCapacity=false is not implemented"),
    ],
)
def test_bad_gates_are_one_line(raw: str, says: str) -> None:
    with pytest.raises(PolicyError, match=says):
        parse_feature_gates(raw)


def test_policies_refuse_unknown_values() -> None:
    assert parse_policies(BEST_EFFORT, IGNORE).relax_min_values
    assert parse_policies(BEST_EFFORT, IGNORE).ignore_preferences
    with pytest.raises(PolicyError, match="MIN_VALUES_POLICY"):
        parse_policies("strict")  # Karpenter's values are case-sensitive
    with pytest.raises(PolicyError, match="PREFERENCE_POLICY"):
        parse_policies(preference="Prefer")


def _worker_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    register_worker(parser.add_subparsers())
    return parser.parse_args(["worker", *argv])


def test_worker_reads_karpenters_environment_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIN_VALUES_POLICY", "BestEffort")
    monkeypatch.setenv("PREFERENCE_POLICY", "Ignore")
    monkeypatch.setenv("FEATURE_GATES", "SpotToSpotConsolidation=true")
    settings = settings_from(_worker_args([]))
    assert settings.policies.min_values == BEST_EFFORT
    assert settings.policies.preference == IGNORE
    assert settings.policies.gates.spot_to_spot_consolidation
    # a flag wins over the environment
    flagged = settings_from(_worker_args(["--feature-gates", "NodeRepair=true"]))
    assert flagged.policies.gates.node_repair
    assert not flagged.policies.gates.spot_to_spot_consolidation


def test_cli_refuses_a_bad_gate_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["plan", "-f", "examples/workload.yaml", "--catalog", "examples/catalog.yaml"]
    assert main([*argv, "--feature-gates", "Foo=true"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown feature gate 'Foo'" in err
    assert main([*argv, "--min-values-policy", "Bogus"]) == 2
    assert "invalid MIN_VALUES_POLICY" in capsys.readouterr().err


def test_disruption_plan_takes_the_policies(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["plan", "-f", "examples/cluster.yaml", "--catalog", "examples/catalog.yaml"]
    flags = ["--preference-policy", "Ignore", "--feature-gates", "SpotToSpotConsolidation=true"]
    assert main([*argv, "--disruption", *flags]) == 0
    assert '"disruption"' in capsys.readouterr().out
