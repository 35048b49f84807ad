"""The last round's decision per node, as the workflow's ``status`` query shows it: which
nodes its commands disrupted (or undid, or dropped at validation, or a pause held), and the
engine's one-line reason for every node it blocked or kept. ``joinery explain`` reads it.

A node a command disrupted is named by no later round (it is gone), so its outcome is
carried into the next rounds' lists, the most recent CARRIED of them, so ``joinery explain``
can still say which round removed it and why.

Pure and deterministic: built from the activities' results only, bounded by the decision's
own limit on verdicts plus CARRIED.
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

CARRIED = 200


def decided(
    first: Decision,
    latest: Decision,
    kept: list[CommandSpec],
    round_no: int = 0,
    previous: list[NodeOutcome] | None = None,
) -> list[NodeOutcome]:
    """Every node the round named, once: the commands it carries out (in flight), those
    dropped at validation, then the latest decision's held, blocked and kept nodes; then
    the nodes earlier rounds disrupted or undid that this one does not name."""
    out: dict[str, NodeOutcome] = {}
    for c in kept:
        for node in c.nodes:
            why = clip(f"{c.reason}: {c.summary}")
            out.setdefault(node, NodeOutcome(node, IN_FLIGHT, why, round_no))
    now = {**latest.kept_nodes, **latest.blocked_nodes, **latest.held_nodes}
    valid = {c.key() for c in kept}
    for c in first.commands:
        if c.key() in valid:
            continue
        for node in c.nodes:
            since = f"; now: {now[node]}" if node in now else ""
            why = f"{c.reason}: {c.summary}, no longer valid after the validation delay{since}"
            out.setdefault(node, NodeOutcome(node, INVALIDATED, clip(why), round_no))
    for outcome, verdicts in (
        (HELD, latest.held_nodes),
        (BLOCKED, latest.blocked_nodes),
        (KEPT, latest.kept_nodes),
    ):
        for node, why in verdicts.items():
            out.setdefault(node, NodeOutcome(node, outcome, why, round_no))
    acted = [o for o in previous or [] if o.outcome in (DISRUPTED, UNDONE) and o.node not in out]
    return list(out.values()) + acted[:CARRIED]


def finished(
    outcomes: list[NodeOutcome], commands: list[CommandSpec], results: list[CommandResult]
) -> list[NodeOutcome]:
    """``outcomes`` with each carried-out command's nodes marked disrupted or undone."""
    ended: dict[str, NodeOutcome] = {}
    for c, r in zip(commands, results, strict=True):
        for node in c.nodes:
            if r.done:
                why = clip(f"{c.reason}: {c.summary}")
                ended[node] = NodeOutcome(node, DISRUPTED, why)
            else:
                ended[node] = NodeOutcome(node, UNDONE, clip(f"{c.reason}: {c.summary}: {r.why}"))
    out = []
    for o in outcomes:
        end = ended.get(o.node)
        out.append(NodeOutcome(o.node, end.outcome, end.reason, o.round) if end else o)
    return out
