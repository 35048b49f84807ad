"""PREFERENCE_POLICY=Ignore: pods planned as if they stated no preferences.

Karpenter's Ignore policy drops a pod's preferred node affinity, preferred pod affinity and
anti-affinity and ScheduleAnyway topology spread before scheduling (its required terms and
DoNotSchedule spread stay), for the pods being placed and for the pods already on nodes
whose anti-affinity the new ones must respect. Doing it once, to the problem's pods, keeps
every later step (relaxation, topology counts, disruption simulations) unaware of it.
"""

from __future__ import annotations

from dataclasses import replace

from scheduling.pods import Pod
from scheduling.problem import Problem


def _has_preferences(pod: Pod) -> bool:
    return bool(
        pod.preferred_terms
        or pod.preferred_affinity
        or pod.preferred_anti_affinity
        or any(not s.hard for s in pod.spreads)
    )


def without_preferences(pod: Pod, memo: dict[int, object] | None = None) -> Pod:
    """``pod`` with its preferences gone (itself when it has none). Pods that shared one
    parse of their spec share one stripped parse (``memo``: original id → stripped), so the
    solver still works their constraints out once per spec."""
    if not _has_preferences(pod):
        return pod
    parts = pod.spec_parts
    stripped_parts: object = None
    if parts is not None:
        memo = {} if memo is None else memo
        hit = memo.get(id(parts))
        if hit is None:
            hit = memo[id(parts)] = replace(
                parts,  # type: ignore[type-var]
                preferred_terms=(),
                preferred_affinity=(),
                preferred_anti_affinity=(),
                spreads=tuple(s for s in pod.spreads if s.hard),
            )
        stripped_parts = hit
    return replace(
        pod,
        preferred_terms=[],
        preferred_affinity=(),
        preferred_anti_affinity=(),
        spreads=tuple(s for s in pod.spreads if s.hard),
        spec_parts=stripped_parts,
    )


def ignore_preferences(problem: Problem) -> None:
    """Strip the preferences of every pending pod and every pod bound to a node, in place."""
    memo: dict[int, object] = {}
    problem.pending = [without_preferences(p, memo) for p in problem.pending]
    for node in problem.nodes:
        if any(_has_preferences(p) for p in node.pods):
            node.pods = [without_preferences(p, memo) for p in node.pods]
