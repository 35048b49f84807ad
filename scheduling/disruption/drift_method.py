"""The Drifted method: nodes that no longer match their pool are replaced, whatever it costs.

Each drifted node is its own command (oldest drift reason first is unknown to the inputs, so
cheapest to disrupt first): deleted when its pods fit on the other nodes, else replaced by as
many new claims as its pods need, with no price condition, within the Drifted budget. The
other drifted nodes receive its pods only when they fit nowhere else: they are disrupted in
a later command or round, and the pods would move twice.
"""

from __future__ import annotations

from scheduling.disruption.context import RoundContext
from scheduling.disruption.types import DRIFTED, Candidate


def replace_drifted(ctx: RoundContext, candidates: list[Candidate]) -> None:
    order = sorted(
        (c for c in candidates if c.drifted and ctx.free(c)),
        key=lambda c: (len(c.pods) > 0, c.disruption_cost, c.node.name),
    )
    for c in order:
        if not ctx.free(c):
            continue
        why = ctx.refusal([c], DRIFTED)
        if why is not None:
            ctx.held[c.node.name] = why
            continue
        # Other drifted nodes will be replaced too: pods moved there would move twice. They
        # take pods only when the pods fit nowhere else (Karpenter does not avoid them).
        later = [d.node.name for d in order if d is not c and ctx.free(d)]
        plan = ctx.state.simulate([c.node.name], c.pods, avoid=later)
        if plan.unschedulable and later:
            plan = ctx.state.simulate([c.node.name], c.pods)
        if plan.unschedulable:
            key, reason = next(iter(sorted(plan.unschedulable.items())))
            ctx.kept[c.node.name] = f"drifted ({c.drifted}), but pod {key} fits nowhere: {reason}"
            continue
        why = ctx.spread_refusal([c], plan)
        if why is not None:
            ctx.kept[c.node.name] = f"drifted ({c.drifted}), but {why}"
            continue
        ctx.accept(DRIFTED, [c], plan, plan.claims)
