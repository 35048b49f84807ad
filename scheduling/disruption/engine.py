"""A whole round: every method in turn on one evolving cluster, within budgets and PDBs.

Karpenter runs one method per pass (the first that finds anything wins) and re-reads the
cluster between passes. A Joinery round runs all of them, each on the cluster the earlier
commands leave behind, so one round can remove the empty nodes, roll drifted ones and
consolidate the rest at once, while budgets and PDBs are counted across all its commands:

1. Empty (every pool), 2. Drifted, 3. Underutilized (multi-node, single-node).

Every candidate ends in a command, in ``blocked`` (budget used up or PDBs exhausted by this
round) or in ``kept`` with the finding that stopped it; blocked nodes from the candidate
checks come first, as given.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from models.nodepool import NodePool
from scheduling.disruption.budgets import BudgetLedger
from scheduling.disruption.context import RoundContext
from scheduling.disruption.drift_method import replace_drifted
from scheduling.disruption.emptiness import empty_nodes
from scheduling.disruption.pdb import PdbLedger
from scheduling.disruption.simulate import RoundState
from scheduling.disruption.types import (
    DRIFTED,
    Candidate,
    ManagedNode,
    NodeVerdict,
    RoundDecision,
)
from scheduling.disruption.underutilized import consolidate
from scheduling.problem import Problem
from scheduling.solver import Plan


def decide(
    problem: Problem,
    plan: Plan,
    managed: list[ManagedNode],
    candidates: list[Candidate],
    blocked: list[NodeVerdict],
    budgets: BudgetLedger,
    pdbs: PdbLedger,
    pools: Mapping[str, NodePool],
) -> RoundDecision:
    ctx = RoundContext(RoundState.after_plan(problem, plan), budgets, pdbs, pools)
    with _inputs_frozen():
        empty_nodes(ctx, candidates)
        replace_drifted(ctx, candidates)
        consolidate(ctx, candidates)

    out_blocked = list(blocked)
    kept: list[NodeVerdict] = []
    for c in sorted(candidates, key=lambda c: c.node.name):
        name = c.node.name
        if name in ctx.taken:
            continue
        held = ctx.held.get(name)
        if held is None and name in ctx.state.destinations:
            held = _destination_held(ctx, c)
        if held is None and name not in ctx.kept and name not in ctx.state.destinations:
            held = c.consolidation_hold  # drifted, yet no method took it: the window holds it
        if held is not None:
            out_blocked.append(NodeVerdict(name, held))
        elif name in ctx.state.destinations:
            kept.append(NodeVerdict(name, _receiving(ctx, name)))
        else:
            kept.append(NodeVerdict(name, ctx.kept.get(name) or _idle_reason(c)))
    before = sum(n.price or 0.0 for n in managed) + plan.cost
    saved = sum(c.savings_per_hour for c in ctx.commands)
    return RoundDecision(
        commands=ctx.commands,
        blocked=sorted(out_blocked, key=lambda v: v.node),
        kept=kept,
        cost_before=before,
        cost_after=before - saved,
    )


@contextmanager
def _inputs_frozen() -> Iterator[None]:
    """Keep Python's cyclic garbage collector off the round's inputs while it runs.

    Every pod, node and instance type read lives until the round ends, and the hundreds of
    simulations a large round runs allocate enough to trigger many full collections, each of
    which walked all of them again: a fifth of a 2,000-node round's time. ``gc.freeze`` sets
    them aside, objects the round creates are collected as usual, and ``gc.unfreeze`` gives
    them back afterwards, so nothing is kept alive. Left alone when something else in the
    process froze objects already (it manages them)."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _destination_held(ctx: RoundContext, c: Candidate) -> str | None:
    """Why a drifted node that receives pods this round may not roll now (its budget or
    PDBs), or None. The methods skip destinations without asking; a drifted node is to be
    replaced whatever it holds, so the budget, not the pods it took, is what keeps it (a
    node not drifted keeps "receives pods": nothing says it would go otherwise)."""
    return ctx.refusal([c], DRIFTED) if c.drifted else None


def _receiving(ctx: RoundContext, name: str) -> str:
    sources = sorted(n for cmd in ctx.commands if name in cmd.pods.values() for n in cmd.nodes)
    return f"receives pods from {', '.join(sources)} this round"


def _idle_reason(c: Candidate) -> str:
    if not c.pods:
        return "empty, but no method took it"
    return "no cheaper way to run its pods was found"
