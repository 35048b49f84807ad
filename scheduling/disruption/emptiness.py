"""Emptiness: nodes holding only DaemonSet or mirror pods are removed, nothing replaces them.

Every empty candidate of every pool (whatever its consolidation policy) goes in one command,
most expensive first while its pool's budget allows, as Karpenter's emptiness method does.
A node inside its pool's ``consolidateAfter`` (a drifted one is still a candidate) is left to
the Drifted method.
"""

from __future__ import annotations

from scheduling.disruption.context import RoundContext
from scheduling.disruption.types import EMPTY, Candidate
from scheduling.solver import Plan


def empty_nodes(ctx: RoundContext, candidates: list[Candidate]) -> None:
    chosen: list[Candidate] = []
    order = sorted(
        (c for c in candidates if not c.pods and not c.consolidation_hold and ctx.free(c)),
        key=lambda c: (-(c.node.price or 0.0), c.node.name),
    )
    for c in order:
        why = ctx.refusal([*chosen, c], EMPTY)
        if why is None:
            chosen.append(c)
        else:
            ctx.held[c.node.name] = why
    if chosen:
        ctx.accept(EMPTY, chosen, Plan([], {}, {}, []), [])
