"""Karpenter's MIN_VALUES_POLICY, PREFERENCE_POLICY and FEATURE_GATES as flags, under Karpenter's
environment names, shared by ``joinery worker`` (through worker/running/settings.py) and
``joinery plan``; light on purpose: the plan command imports it without the worker's clients.
Parsing is models/policies.py's."""

from __future__ import annotations

import argparse
import os

from models.policies import Policies, PolicyError, parse_policies
from worker.usage import UsageError


def _env(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def add_policy_args(p: argparse.ArgumentParser, *, from_env: bool = True) -> None:
    """The three flags; ``from_env`` False (``joinery plan``) leaves the environment out of
    their defaults, so a plan depends on its command line alone."""

    def default(name: str, value: str) -> str:
        return _env(name, value) if from_env else value

    g = p.add_argument_group("Karpenter's scheduling policies and feature gates")
    g.add_argument(
        "--min-values-policy",
        default=default("MIN_VALUES_POLICY", "Strict"),
        metavar="Strict|BestEffort",
        help="Strict: a NodeClaim must keep every requirement's minValues; BestEffort: "
        "lower them to what the instance types give (env MIN_VALUES_POLICY)",
    )
    g.add_argument(
        "--preference-policy",
        default=default("PREFERENCE_POLICY", "Respect"),
        metavar="Respect|Ignore",
        help="Ignore: plan as if pods had no preferred affinities or ScheduleAnyway spread "
        "(env PREFERENCE_POLICY)",
    )
    g.add_argument(
        "--feature-gates",
        default=default("FEATURE_GATES", ""),
        metavar="Name=bool,...",
        help="Karpenter's gates, e.g. SpotToSpotConsolidation=true,NodeRepair=true "
        "(env FEATURE_GATES; both off by default)",
    )


def policies_from(args: argparse.Namespace) -> Policies:
    """The policies the flags (or their environment defaults) name; a bad value is one line
    (``UsageError``: exit 2)."""
    try:
        return parse_policies(
            getattr(args, "min_values_policy", ""),
            getattr(args, "preference_policy", ""),
            getattr(args, "feature_gates", ""),
        )
    except PolicyError as exc:
        raise UsageError(str(exc)) from None
