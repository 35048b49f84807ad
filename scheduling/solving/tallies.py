"""How many running pods each topology group selects per domain, kept from one solve to the
next and brought up to date by the nodes that changed.

Before placing anything, a solve counts the pods already running on every node for each
topology group of the pods it places (spread, affinity, anti-affinity). A disruption round
solves hundreds of times over nearly the same nodes: each simulation leaves out one or a few
of them, and an accepted command changes the pods of a few more. Recounting every pod of
every node for every solve was a tenth of such a round. A ``Tally`` keeps a group's counts
with the nodes they were counted over; the next solve subtracts the nodes gone and adds the
nodes new, which gives exactly the counts a full recount would (counts are sums over nodes;
a domain whose count falls to zero is dropped, as a recount would never add it).

A node is the same node while its name, its pods list and its labels are the same objects
(a node whose pods or labels change is given new ones; ``NodeFacts`` rests on the same rule).
Groups are known by the number ``CatalogCache.group_number`` gives their identity, so a
group means the same selector, namespaces and topology key in every solve.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from models import labels as L
from scheduling.pods import Pod
from scheduling.solving.nodefacts import NodeFacts, NodeKey
from scheduling.topology import TopologyGroup

# Whether group number ``gid`` (the group itself given) selects pods of a shape number.
Selects = Callable[[int, int, TopologyGroup, Pod], bool]
Nodes = Mapping[NodeKey, NodeFacts]


@dataclass(eq=False)
class Tally:
    nodes: Nodes  # what the counts were counted over (never changed: a solve's own mapping)
    counts: dict[str, int]


def _domain(facts: NodeFacts, key: str) -> str | None:
    if key == L.HOSTNAME:
        return facts.labels.get(L.HOSTNAME, facts.node.name)
    return facts.labels.get(key)


def _count(
    nodes: Iterable[NodeFacts],
    groups: list[tuple[TopologyGroup, int, dict[str, int]]],
    selects: Selects,
    sign: int,
) -> None:
    """Add (``sign`` 1) or take away (-1) the pods of ``nodes`` that each group selects; a
    group's counts are the third item of its tuple."""
    matching: dict[int, list[tuple[TopologyGroup, dict[str, int]]]] = {}
    for f in nodes:
        for p, n, shape, _ in f.shapes:
            hit = matching.get(shape)
            if hit is None:
                hit = matching[shape] = [
                    (g, c) for g, gid, c in groups if selects(gid, shape, g, p)
                ]
            for g, c in hit:
                d = _domain(f, g.key)
                if d is None:
                    continue
                left = c.get(d, 0) + sign * n
                if left:
                    c[d] = left
                else:
                    del c[d]


class TopologyTallies:
    """Each group's running-pod counts from the last solve that used it (see the module
    docstring). A tally that would change in more than half its nodes is counted afresh."""

    def __init__(self) -> None:
        self._tallies: dict[int, Tally] = {}

    def size(self) -> int:
        """How many groups have a tally."""
        return len(self._tallies)

    def count(
        self,
        groups: list[tuple[TopologyGroup, int]],
        nodes: Nodes,
        selects: Selects,
    ) -> None:
        """Set every group's ``counts`` to the pods on ``nodes`` it selects, per domain."""
        fresh: list[tuple[TopologyGroup, int, dict[str, int]]] = []
        stale: dict[int, tuple[Nodes, list[tuple[TopologyGroup, int, dict[str, int]]]]] = {}
        for g, gid in groups:
            tally = self._tallies.get(gid)
            if tally is None:
                tally = self._tallies[gid] = Tally(nodes, {})
                fresh.append((g, gid, tally.counts))
            elif tally.nodes is not nodes:
                stale.setdefault(id(tally.nodes), (tally.nodes, []))[1].append(
                    (g, gid, tally.counts)
                )
        for before, members in stale.values():
            gone = [before[k] for k in before.keys() - nodes.keys()]
            new = [nodes[k] for k in nodes.keys() - before.keys()]
            if 2 * (len(gone) + len(new)) > len(nodes):
                for _, _gid, counts in members:
                    counts.clear()
                fresh += members
                continue
            _count(gone, members, selects, -1)
            _count(new, members, selects, 1)
        if fresh:
            _count(nodes.values(), fresh, selects, 1)
        for g, gid in groups:
            tally = self._tallies[gid]
            tally.nodes = nodes
            g.counts = dict(tally.counts)


def counts_once(
    groups: list[tuple[TopologyGroup, int]], nodes: Iterable[NodeFacts], selects: Selects
) -> None:
    """Count the pods on ``nodes`` into each group's ``counts`` without keeping a tally (for
    nodes a tally cannot tell apart)."""
    _count(nodes, [(g, gid, g.counts) for g, gid in groups], selects, 1)
