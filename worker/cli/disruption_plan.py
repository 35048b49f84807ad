"""``joinery plan --disruption``: what one disruption round would do now, and why not more.

The plan object of ``joinery plan`` with one more key, ``disruption`` (DESIGN.md's contract).
``--now`` fixes the time the round is evaluated at, so the same input gives the same output.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import yaml

from models.instancetype import InstanceType
from models.policies import Policies
from scheduling.disruption.report import decision_to_dict, decision_to_table
from scheduling.disruption.round import run_round
from scheduling.inputs import Document, InputError
from scheduling.lowerbound import lower_bound
from scheduling.report import plan_to_dict, plan_to_table
from worker.cli.plan_json import dumps_indented
from worker.usage import UsageError, one_line


def parse_now(text: str | None) -> datetime:
    """``--now`` as an aware UTC time; the clock when absent."""
    if text is None:
        return datetime.now(UTC)
    try:
        value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"--now: not an RFC 3339 time: {text!r}") from None
    if value.tzinfo is None:
        raise UsageError(f"--now: {text!r} names no time zone (add Z or an offset)")
    return value.astimezone(UTC)


def run_disruption(
    args: argparse.Namespace,
    documents: list[Document],
    instance_types: list[InstanceType],
    own: Mapping[str, list[InstanceType]] | None = None,
    policies: Policies | None = None,
) -> int:
    """The round on ``instance_types``, with pools' own catalogs from ``own`` (their plan,
    replacements, and their nodes' prices and drift)."""
    now = parse_now(args.now)
    try:
        result = run_round(documents, instance_types, now, own, policies)
    except InputError as exc:
        raise UsageError(str(exc)) from None
    for w in result.parsed.warnings:
        print(one_line(f"warning: {w}"), file=sys.stderr)
    doc: dict[str, Any] = plan_to_dict(
        result.plan, lower_bound(result.solver, result.plan.scheduled)
    )
    doc["disruption"] = decision_to_dict(result.decision)
    if args.output == "json":
        print(dumps_indented(doc))
    elif args.output == "yaml":
        print(yaml.safe_dump(doc, sort_keys=False), end="")
    else:
        print(plan_to_table(doc))
        print()
        print(decision_to_table(doc["disruption"]))
    return 0
