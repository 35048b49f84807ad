"""Moves a round has made, kept so that a later command cannot undo their topology spread.

A round runs several commands, and on the cluster they run at once: a later command's
replacement may come up before an earlier command's pods are rescheduled. The kube-scheduler
counts every domain with a node, so a replacement in a topology domain no node had before (a
new zone, a new host) holding few of the pods a spread selects lowers the minimum an earlier
move was judged against: a pod moved to zone b beside two of its replicas was fine while
only zones b and c had nodes, and is refused once zone a has a node and none of them. Such
a command waits for the next round, which sees the moved pods where they landed.

The check compares the earlier moves' spreads before and after the command, domains counted
from every live node carrying the key: a skew the command does not make worse is left alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from scheduling.pods import Pod, SpreadConstraint

# A node as the check reads it: its labels and the pods on it.
NodeView = tuple[Mapping[str, str], Sequence[Pod]]


@dataclass(frozen=True, slots=True)
class _Move:
    pod: Pod
    node: str  # the round state's name for its destination (a node or a replacement)


@dataclass
class MovedPods:
    """The round's moves of pods that carry a required (``DoNotSchedule``) spread."""

    moves: list[_Move] = field(default_factory=list)

    def record(self, pods: Iterable[Pod], node: str) -> None:
        self.moves.extend(_Move(p, node) for p in pods if any(s.hard for s in p.spreads))

    def refusal(self, before: Mapping[str, NodeView], after: Mapping[str, NodeView]) -> str | None:
        """Why the cluster ``after`` a command (live nodes by name) breaks the spread of a pod
        this round moved, where ``before`` it held; None when it does not."""
        if not self.moves:
            return None
        counted: dict[tuple[int, str, str, str], dict[str, int]] = {}

        def counts(
            which: int, views: Mapping[str, NodeView], pod: Pod, s: SpreadConstraint
        ) -> dict[str, int]:
            key = (which, pod.namespace, s.key, repr(s.selector))
            hit = counted.get(key)
            if hit is None:
                hit = counted[key] = _counts(pod.namespace, s, views)
            return hit

        for move in self.moves:
            if move.node not in before or move.node not in after:
                continue
            for spread in move.pod.spreads:
                domain = after[move.node][0].get(spread.key)
                if not spread.hard or domain is None:
                    continue
                if _admits(move.pod, spread, domain, counts(0, before, move.pod, spread)) and (
                    not _admits(move.pod, spread, domain, counts(1, after, move.pod, spread))
                ):
                    return (
                        f"pod {move.pod.key}, moved to {spread.key}={domain} this round, would "
                        f"break its topology spread once this command's nodes come: next round"
                    )
        return None


def _counts(
    namespace: str, spread: SpreadConstraint, nodes: Mapping[str, NodeView]
) -> dict[str, int]:
    """Pods ``spread`` selects in ``namespace``, per domain of every node carrying its key."""
    out: dict[str, int] = {}
    for labels, pods in nodes.values():
        value = labels.get(spread.key)
        if value is not None:
            out[value] = out.get(value, 0) + sum(
                1 for q in pods if q.namespace == namespace and spread.selector.matches(q.labels)
            )
    return out


def _admits(pod: Pod, spread: SpreadConstraint, domain: str, counts: Mapping[str, int]) -> bool:
    """The kube-scheduler's skew test for ``pod`` in ``domain`` (where it is, so not counted)."""
    if domain not in counts:
        return True
    own = counts[domain] - (1 if spread.selector.matches(pod.labels) else 0)
    least = min(own if value == domain else n for value, n in counts.items())
    if spread.min_domains is not None and len(counts) < spread.min_domains:
        least = 0
    return own + 1 - least <= spread.max_skew
