"""Moves a round has made, kept so that a later command cannot undo their topology spread.

A round runs several commands, and on the cluster they run at once: a later command's
replacement may come up before an earlier command's pods are rescheduled. The kube-scheduler
counts every domain with a node, so a later command that lowers a domain's count (a new zone
or host with few of the pods a spread selects, or pods leaving a zone) lowers the minimum an
earlier move was judged against: a pod moved to zone b beside two of its replicas was fine
while only zones b and c had nodes, and is refused once zone a has a node and none of them.
Such a command waits for the next round, which sees the moved pods where they landed. (The
solver already judges a later command's own pods against the earlier moves; what it does not
judge is what the later command does to the pods it does not move.)

Per spread of a moved pod, the pods it selects are tallied per domain once, from the round's
nodes, then kept up to date command by command; a command is judged on its changes alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from scheduling.pods import LabelSelector, Pod

# A node as the tally reads it: its labels and the pods on it.
NodeView = tuple[Mapping[str, str], Sequence[Pod]]
# What a command does to the round's nodes: the nodes it removes, the pods it adds to nodes
# that stay, and the nodes it adds (labels, pods).
Removed = Sequence[NodeView]
Added = Sequence[tuple[Mapping[str, str], Sequence[Pod]]]


@dataclass
class _Tally:
    """The pods one spread selects (its namespace, key and selector), per domain."""

    namespace: str
    key: str
    selector: LabelSelector
    pods: dict[str, int] = field(default_factory=dict)
    nodes: dict[str, int] = field(default_factory=dict)  # nodes per domain: which exist

    def selected(self, pods: Iterable[Pod]) -> int:
        return sum(
            1 for q in pods if q.namespace == self.namespace and self.selector.matches(q.labels)
        )

    def add(self, labels: Mapping[str, str], pods: Sequence[Pod], nodes: int) -> None:
        domain = labels.get(self.key)
        if domain is None:
            return
        self.pods[domain] = self.pods.get(domain, 0) + self.selected(pods)
        self.nodes[domain] = self.nodes.get(domain, 0) + nodes

    def remove(self, labels: Mapping[str, str], pods: Sequence[Pod]) -> None:
        domain = labels.get(self.key)
        if domain is None:
            return
        self.pods[domain] = self.pods.get(domain, 0) - self.selected(pods)
        self.nodes[domain] = self.nodes.get(domain, 0) - 1

    def changed(self, removed: Removed, existing: Added, added: Added) -> _Tally:
        out = _Tally(self.namespace, self.key, self.selector, dict(self.pods), dict(self.nodes))
        for labels, pods in removed:
            out.remove(labels, pods)
        for labels, pods in existing:
            out.add(labels, pods, 0)
        for labels, pods in added:
            out.add(labels, pods, 1)
        return out

    def admits(self, pod: Pod, domain: str, max_skew: int, min_domains: int | None) -> bool:
        """The kube-scheduler's skew test for ``pod`` in ``domain``, where it already is."""
        present = {d: n for d, n in self.pods.items() if self.nodes.get(d, 0) > 0}
        if domain not in present:
            return True
        mine = 1 if pod.namespace == self.namespace and self.selector.matches(pod.labels) else 0
        present[domain] -= mine
        least = min(present.values())
        if min_domains is not None and len(present) < min_domains:
            least = 0
        return present[domain] + 1 - least <= max_skew


@dataclass(frozen=True, slots=True)
class _Move:
    pod: Pod
    domains: dict[str, str]  # spread key -> the domain the pod was moved to


@dataclass
class MovedPods:
    """The round's moves of pods that carry a required (``DoNotSchedule``) spread, and the
    tallies their spreads read."""

    moves: list[_Move] = field(default_factory=list)
    tallies: dict[tuple[str, str, str], _Tally] = field(default_factory=dict)

    def applied(
        self, removed: Removed, existing: Added, added: Added, nodes: Iterable[NodeView]
    ) -> None:
        """A command was accepted (``removed``, ``existing``, ``added`` as ``refusal``'s);
        ``nodes`` are the round's nodes after it."""
        for key, tally in self.tallies.items():
            self.tallies[key] = tally.changed(removed, existing, added)
        moved = [(labels, p) for labels, pods in (*existing, *added) for p in pods]
        fresh = [(labels, p) for labels, p in moved if any(s.hard for s in p.spreads)]
        if not fresh:
            return
        views = list(nodes)
        for labels, p in fresh:
            domains = {}
            for s in p.spreads:
                if not s.hard or labels.get(s.key) is None:
                    continue
                domains[s.key] = labels[s.key]
                key = (p.namespace, s.key, repr(s.selector))
                if key not in self.tallies:
                    tally = _Tally(p.namespace, s.key, s.selector)
                    for node_labels, pods in views:
                        tally.add(node_labels, pods, 1)
                    self.tallies[key] = tally
            if domains:
                self.moves.append(_Move(p, domains))

    def refusal(self, removed: Removed, existing: Added, added: Added) -> str | None:
        """Why a command that removes the nodes ``removed``, puts pods on nodes that stay
        (``existing``: their labels, the pods added) and adds the nodes ``added`` would break
        the spread of a pod this round moved, where it held before; None when it does not."""
        if not self.moves:
            return None
        after: dict[tuple[str, str, str], _Tally] = {}
        for move in self.moves:
            for s in move.pod.spreads:
                domain = move.domains.get(s.key)
                if not s.hard or domain is None:
                    continue
                key = (move.pod.namespace, s.key, repr(s.selector))
                tally = self.tallies[key]
                if key not in after:
                    after[key] = tally.changed(removed, existing, added)
                if tally.admits(move.pod, domain, s.max_skew, s.min_domains) and not after[
                    key
                ].admits(move.pod, domain, s.max_skew, s.min_domains):
                    return (
                        f"pod {move.pod.key}, moved to {s.key}={domain} this round, would "
                        f"break its topology spread once this command's nodes come: next round"
                    )
        return None
