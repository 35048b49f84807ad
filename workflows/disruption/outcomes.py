"""The last round's decision per node, as the workflow's ``status`` query shows it: which
nodes its commands disrupted (or undid, or dropped at validation, or a pause held), and the
engine's one-line reason for every node it blocked or kept. ``joinery explain`` reads it.

Pure and deterministic: built from the activities' results only, bounded by the decision's
own limit on verdicts.
"""

from __future__ import annotations

from temporalio import workflow

from workflows.disruption.state import (
    BLOCKED,
    DISRUPTED,
    HELD,
    IN_FLIGHT,
    INVALIDATED,
    KEPT,
    UNDONE,
    CommandResult,
    NodeOutcome,
)

with workflow.unsafe.imports_passed_through():
    from activities.disruption.types import CommandSpec, Decision, clip


def decided(first: Decision, latest: Decision, kept: list[CommandSpec]) -> list[NodeOutcome]:
    """Every node the round named, once: the commands it carries out (in flight), those
    dropped at validation, then the latest decision's held, blocked and kept nodes."""
    out: dict[str, NodeOutcome] = {}
    for c in kept:
        for node in c.nodes:
            out.setdefault(node, NodeOutcome(node, IN_FLIGHT, clip(f"{c.reason}: {c.summary}")))
    now = {**latest.kept_nodes, **latest.blocked_nodes, **latest.held_nodes}
    valid = {c.key() for c in kept}
    for c in first.commands:
        if c.key() in valid:
            continue
        for node in c.nodes:
            since = f"; now: {now[node]}" if node in now else ""
            why = f"{c.reason}: {c.summary}, no longer valid after the validation delay{since}"
            out.setdefault(node, NodeOutcome(node, INVALIDATED, clip(why)))
    for outcome, verdicts in (
        (HELD, latest.held_nodes),
        (BLOCKED, latest.blocked_nodes),
        (KEPT, latest.kept_nodes),
    ):
        for node, why in verdicts.items():
            out.setdefault(node, NodeOutcome(node, outcome, why))
    return list(out.values())


def finished(
    outcomes: list[NodeOutcome], commands: list[CommandSpec], results: list[CommandResult]
) -> list[NodeOutcome]:
    """``outcomes`` with each carried-out command's nodes marked disrupted or undone."""
    ended: dict[str, NodeOutcome] = {}
    for c, r in zip(commands, results, strict=True):
        for node in c.nodes:
            if r.done:
                ended[node] = NodeOutcome(node, DISRUPTED, clip(f"{c.reason}: {c.summary}"))
            else:
                ended[node] = NodeOutcome(node, UNDONE, clip(f"{c.reason}: {c.summary}: {r.why}"))
    return [ended.get(o.node, o) for o in outcomes]
