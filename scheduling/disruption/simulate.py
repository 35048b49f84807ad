"""The cluster as a round leaves it, and "where would these pods go without these nodes".

A simulation is the provisioning solver run on the cluster minus some nodes, with their pods
pending: no code of its own decides placements, so consolidation honours every constraint
provisioning does (resources, labels, taints, host ports, spread, affinity, volume zones).
As a round accepts commands, ``RoundState`` removes their nodes and adds the moved pods to
their destinations, so each later command is simulated on the cluster the earlier ones
leave behind.

Destinations are the remaining nodes that pods may land on right now: initialized (a pod on a
node still booting is an error, as in Karpenter), schedulable, and not removed this round.
In-flight NodeClaims and the pending pods' planned claims are not destinations.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace

from models import labels as L
from scheduling.pods import Pod
from scheduling.problem import NodeInfo, Problem
from scheduling.solver import Plan, Solver


def _usable(node: NodeInfo) -> bool:
    if node.in_flight or not node.schedulable:
        return False
    return node.nodepool is None or node.labels.get(L.NODE_INITIALIZED) == "true"


@dataclass
class RoundState:
    """Nodes with the pods they hold after the commands accepted so far."""

    problem: Problem
    nodes: dict[str, NodeInfo]
    removed: set[str] = field(default_factory=set)
    destinations: set[str] = field(default_factory=set)
    simulations: int = 0

    @classmethod
    def after_plan(cls, problem: Problem, plan: Plan) -> RoundState:
        """The cluster once the pending pods' plan is applied to its existing nodes."""
        nodes: dict[str, NodeInfo] = {}
        for n in problem.nodes:
            placed = plan.existing.get(n.name)
            nodes[n.name] = replace(n, pods=[*n.pods, *placed]) if placed else n
        return cls(problem, nodes)

    def simulate(self, without: Collection[str], pods: Sequence[Pod]) -> Plan:
        """Solve ``pods`` onto the usable nodes other than ``without`` and the removed ones,
        opening new claims where they fit nowhere."""
        self.simulations += 1
        gone = set(without) | self.removed
        nodes = [n for name, n in self.nodes.items() if name not in gone and _usable(n)]
        sub = Problem(
            nodepools=self.problem.nodepools,
            instance_types=self.problem.instance_types,
            pending=list(pods),
            nodes=nodes,
            daemonsets=self.problem.daemonsets,
            volume_requirements=self.problem.volume_requirements,
        )
        return Solver(sub).solve()

    def apply(self, removed: Collection[str], plan: Plan) -> None:
        """Accept a command: its nodes go, its pods join their existing destinations."""
        self.removed.update(removed)
        for name, pods in plan.existing.items():
            node = self.nodes[name]
            self.nodes[name] = replace(node, pods=[*node.pods, *pods])
            self.destinations.add(name)

    def free_room(self, name: str) -> dict[str, int]:
        """Allocatable minus requests of a node's pods (a quick pre-check, not a placement)."""
        node = self.nodes[name]
        room = dict(node.allocatable)
        for p in node.pods:
            for k, v in p.requests.items():
                room[k] = room.get(k, 0) - v
        return room
