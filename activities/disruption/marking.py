"""Marking a command's candidates and undoing it.

Marked: each Node tainted ``karpenter.sh/disrupted:NoSchedule`` (nothing new lands there
while its replacements launch) and each NodeClaim's ``DisruptionReason`` condition set
(``kubectl get nodeclaims`` and ``joinery explain`` show why). Unmarking removes both. Both
are idempotent, so a retried or replayed activity does no harm; a node or claim already
gone is skipped. Marking is where a command starts, so it counts
``karpenter_voluntary_disruption_decisions_total``; unmarking is its undoing
(``..._queue_failures_total``).
"""

from __future__ import annotations

import contextlib

from activities.deps import Deps
from activities.disruption.types import MarkInput
from activities.kubernetes import conditions as cond
from activities.kubernetes import nodeclaims, nodes, status
from activities.kubernetes.errors import NotFound
from activities.kubernetes.resources import NODECLAIM
from activities.kubernetes.retries import retry_conflicts
from models import conditions
from models import labels as L

DISRUPTED_TAINT = {"key": L.DISRUPTED_TAINT_KEY, "effect": "NoSchedule"}


def mark(deps: Deps, inp: MarkInput) -> int:
    """Taint the nodes and set the claims' condition; returns how many nodes were marked."""
    message = inp.message or f"disrupting: {inp.reason}"
    marked = 0
    pools: set[str] = set()
    for node in inp.nodes:

        def taint(name: str = node) -> None:
            nodes.add_taint(deps.kube, nodes.get(deps.kube, name), DISRUPTED_TAINT)

        with contextlib.suppress(NotFound):
            retry_conflicts(taint)
            marked += 1
    for claim in inp.claims:

        def write(name: str = claim) -> None:
            current = nodeclaims.get(deps.kube, name)
            pool = (current["metadata"].get("labels") or {}).get(L.NODEPOOL)
            if pool:
                pools.add(str(pool))
            update = cond.Condition(conditions.DISRUPTION_REASON, "True", inp.reason, message)
            nodeclaims.set_conditions(deps.kube, current, [update])

        with contextlib.suppress(NotFound):
            retry_conflicts(write)
    decision, consolidation_type = inp.decision()
    deps.counters.disruption_decision(decision, inp.reason, consolidation_type, sorted(pools))
    return marked


def unmark(deps: Deps, inp: MarkInput) -> int:
    """Remove the taint and the condition; returns how many nodes were untainted."""
    cleared = 0
    for node in inp.nodes:

        def untaint(name: str = node) -> None:
            current = nodes.get(deps.kube, name)
            nodes.remove_taint(deps.kube, current, L.DISRUPTED_TAINT_KEY, "NoSchedule")

        with contextlib.suppress(NotFound):
            retry_conflicts(untaint)
            cleared += 1
    for claim in inp.claims:

        def clear(name: str = claim) -> None:
            current = nodeclaims.get(deps.kube, name)
            existing = (current.get("status") or {}).get("conditions") or []
            kept = [c for c in existing if c.get("type") != conditions.DISRUPTION_REASON]
            if len(kept) != len(existing):
                status.patch_status(deps.kube, NODECLAIM, current, {"conditions": kept})

        with contextlib.suppress(NotFound):
            retry_conflicts(clear)
    decision, consolidation_type = inp.decision()
    deps.counters.disruption_failed(decision, inp.reason, consolidation_type)
    return cleared
