"""The Underutilized method: its passes in order, and the exhaustive pass for few candidates.

Karpenter takes the longest prefix of its candidates that one cheaper node (or none) can
replace, whatever that saves, and the round ends one step from where a different first
step would have gone further (three nodes merged into a node costing almost as much as the
three, where two of them merged into a small node save more). When the candidates are few
(``MAX_EXHAUSTIVE``) and the budgets allow them all at once, every subset of them is
tried instead, with the same outcome and the
same checks as a prefix (budgets, PDBs, Balanced, the round's spreads, at most one strictly
cheaper replacement), and the one that saves the most is taken, then the search runs again
on what is left. Above that many candidates the prefix searches run as before: 2^n
simulations would cost more than the round is allowed to.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from scheduling.disruption.consolidation import (
    attempt,
    consolidatable,
    multi_node_pass,
    outcome_of,
    single_node_pass,
)
from scheduling.disruption.context import RoundContext
from scheduling.disruption.types import UNDERUTILIZED, Candidate

# 2^8 - 1 = 255 subsets at most on the first search, each one simulation of a small cluster.
MAX_EXHAUSTIVE = 8


def consolidate(ctx: RoundContext, candidates: list[Candidate]) -> None:
    order = consolidatable(ctx, candidates)
    if len(order) <= MAX_EXHAUSTIVE and _budgets_allow_all(ctx, order):
        ctx.search_orders = True  # few candidates: small moves in other pod orders too
        exhaustive_pass(ctx, order)
    multi_node_pass(ctx, order)
    # Karpenter's order puts the dearest nodes first, so its prefixes always include them;
    # many small nodes whose pods one slightly larger node holds are found cheapest first;
    # a large node with room to spare and the small nodes that fill it, dearest first.
    multi_node_pass(ctx, sorted(order, key=lambda c: (c.node.price or 0.0, c.node.name)))
    multi_node_pass(ctx, sorted(order, key=lambda c: (-(c.node.price or 0.0), c.node.name)))
    # After an exhaustive pass the passes above and below find nothing it did not try (each
    # subset's failure is remembered): they still say why each node left is kept.
    single_node_pass(ctx, order)


def _budgets_allow_all(ctx: RoundContext, order: Sequence[Candidate]) -> bool:
    """Whether the pools' budgets would let one command take every candidate. When they let
    the round take only some, which go first is Karpenter's order's to say (price over
    disruption cost: a node whose pods are dear to move waits behind a cheaper one), and
    the nodes left go in later rounds; the exhaustive search, by saving alone, would put
    the dearest node first whatever moving its pods costs."""
    per_pool: dict[str, int] = {}
    for c in order:
        per_pool[c.node.pool] = per_pool.get(c.node.pool, 0) + 1
    return all(ctx.budgets.remaining(p, UNDERUTILIZED) >= n for p, n in per_pool.items())


def exhaustive_pass(ctx: RoundContext, order: list[Candidate]) -> int:
    """Take, while one saves anything, the subset of the free candidates whose command saves
    the most; returns how many commands. Ties go to the fewest pods disrupted, then to the
    subset first in Karpenter's order (``order``), so the round stays deterministic. A
    subset the command's last checks refuse (Balanced, the round's spreads) is passed over
    for the next best."""
    found = 0
    while True:
        free = [c for c in order if ctx.free(c) and ctx.refusal([c], UNDERUTILIZED) is None]
        refused: set[tuple[int, ...]] = set()
        while True:
            picked = _best(ctx, free, refused)
            if picked is None:
                return found
            if attempt(ctx, [free[i] for i in picked], order) is None:
                found += 1
                break
            refused.add(picked)


def _best(
    ctx: RoundContext, free: Sequence[Candidate], refused: set[tuple[int, ...]]
) -> tuple[int, ...] | None:
    """The subset of ``free`` (as positions) whose command would save the most, or None.

    Subsets are simulated dearest first: a subset saves at most what its nodes cost, so once
    they cost less than the best saving found, no later one can win and the search stops
    (on small clusters this leaves out most of them)."""
    price = [c.node.price or 0.0 for c in free]
    subsets = [
        picked
        for k in range(1, len(free) + 1)
        for picked in itertools.combinations(range(len(free)), k)
        if picked not in refused
    ]
    subsets.sort(key=lambda picked: -sum(price[i] for i in picked))
    best: tuple[float, int, tuple[int, ...]] | None = None
    for picked in subsets:
        total = sum(price[i] for i in picked)
        if best is not None and total < -best[0] - 1e-9:
            break
        cands = [free[i] for i in picked]
        if ctx.refusal(cands, UNDERUTILIZED) is not None:
            continue  # budgets and PDBs are cheaper to ask than a simulation
        out = outcome_of(ctx, cands)
        if isinstance(out, str):
            continue
        saved = total - sum(r.price for r in out[1])
        if saved <= 1e-9:
            continue
        key = (-round(saved, 9), sum(len(c.pods) for c in cands), picked)
        if best is None or key < best:
            best = key
    return None if best is None else best[2]
