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

A simulation leaves out nodes that cannot matter, exactly: when no pod that moves has a
constraint that counts pods beyond its own node (its spread and anti-affinity terms are all
per hostname, it has no pod affinity, and no running pod's required anti-affinity across a
wider domain selects it), a node with no room for even one of the pods can change nothing,
so only the nodes with room are solved over. In a consolidated cluster that is a small part.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace

from models import labels as L
from models.nodepool import NodePool
from models.quantity import parse_limit
from models.resources import CPU, MEMORY, PODS
from scheduling.pods import AffinityTerm, Pod
from scheduling.problem import NodeInfo, Problem
from scheduling.solver import CatalogCache, NodeRejections, Plan, Solver
from scheduling.targets import NODE


def _usable(node: NodeInfo) -> bool:
    if node.in_flight or not node.schedulable:
        return False
    return node.nodepool is None or node.labels.get(L.NODE_INITIALIZED) == "true"


def _local_only(pod: Pod) -> bool:
    """The pod's own constraints look at no node but the one it lands on."""
    if pod.affinity or pod.preferred_affinity:
        return False
    terms = [*pod.anti_affinity, *(t for _, t in pod.preferred_anti_affinity)]
    return all(t.key == L.HOSTNAME for t in terms) and all(s.key == L.HOSTNAME for s in pod.spreads)


def _room(node: NodeInfo) -> tuple[int, int, int]:
    """Free cpu, memory and pod slots (milli-units, as Resources are)."""
    cpu = node.allocatable.get(CPU, 0) - sum(p.requests.get(CPU, 0) for p in node.pods)
    mem = node.allocatable.get(MEMORY, 0) - sum(p.requests.get(MEMORY, 0) for p in node.pods)
    slots = node.allocatable.get(PODS, 0) - 1000 * len(node.pods)
    return cpu, mem, slots


def _smallest(pods: Sequence[Pod]) -> tuple[int, int, int]:
    """The least cpu, memory and pod slots any of ``pods`` needs: a node with less room in
    any of them can take none of the pods."""
    return (
        min(p.requests.get(CPU, 0) for p in pods),
        min(p.requests.get(MEMORY, 0) for p in pods),
        1,
    )


def _has_room(room: tuple[int, int, int], need: tuple[int, int, int]) -> bool:
    return room[0] >= need[0] and room[1] >= need[1] and room[2] >= need[2]


@dataclass
class RoundState:
    """Nodes with the pods they hold after the commands accepted so far."""

    problem: Problem
    nodes: dict[str, NodeInfo]
    removed: set[str] = field(default_factory=set)
    destinations: set[str] = field(default_factory=set)
    simulations: int = 0
    version: int = 0  # bumped by every accepted command
    catalog: CatalogCache = field(default_factory=CatalogCache)
    rejections: NodeRejections | None = None
    _counted_only: dict[str, NodeInfo] = field(default_factory=dict)
    _rooms: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    _wide_anti: list[AffinityTerm] | None = None
    _price_order: list[tuple[float, int, int, int]] | None = None
    _zones: list[str] | None = None
    _listed: tuple[int, list[tuple[str, NodeInfo, tuple[int, int, int] | None]]] | None = None

    @classmethod
    def after_plan(cls, problem: Problem, plan: Plan) -> RoundState:
        """The cluster once the pending pods' plan is applied to its existing nodes."""
        nodes: dict[str, NodeInfo] = {}
        for n in problem.nodes:
            placed = plan.existing.get(n.name)
            nodes[n.name] = replace(n, pods=[*n.pods, *placed]) if placed else n
        hosts = ((n.name, n.labels.get(L.HOSTNAME, n.name)) for n in nodes.values())
        return cls(problem, nodes, rejections=NodeRejections(hosts))

    def simulate(
        self,
        without: Collection[str],
        pods: Sequence[Pod],
        *,
        new_nodes: bool = True,
        one_new_node: bool = False,
        avoid: Collection[str] = (),
        zone: str | None = None,
        given_order: bool = False,
        only_pool: str | None = None,
    ) -> Plan:
        """Solve ``pods`` onto the usable nodes other than ``without`` and the removed ones,
        opening new claims where they fit nowhere (unless ``new_nodes`` is False; at most
        one per pool with ``one_new_node``, which then takes pods up to its largest type).
        The nodes in ``avoid`` stay, their pods counted, but take none of ``pods``; with
        ``zone``, a new claim whose zone a pod's spread or affinity pins goes to that zone
        when the rule allows it (``Problem.zone_hint``). With ``given_order`` the solver takes
        ``pods`` in the order given, not its own (``pod_orders.py``); with ``only_pool``, new
        claims come from that pool only."""
        self.simulations += 1
        gone = set(without)
        need = _smallest(pods) if pods else (0, 0, 0)
        listing = self._listing()
        if self._prunable(pods):
            nodes = [
                n
                for name, n, room in listing
                if room is not None and name not in gone and _has_room(room, need)
            ]
            if avoid:  # still counted toward their pools' limits
                nodes = [self._counts_only(n.name) if n.name in avoid else n for n in nodes]
        else:
            # Every node's pods still count toward spread and affinity; a node that cannot
            # take any of the pods is there as counts only (not a target to try).
            nodes = []
            for name, n, room in listing:
                if name in gone:
                    continue
                if room is not None and name not in avoid and _has_room(room, need):
                    nodes.append(n)
                else:
                    nodes.append(self._counts_only(name))
        pools = self.problem.nodepools if new_nodes else []
        if only_pool is not None:
            pools = [np for np in pools if np.name == only_pool]
        if one_new_node:
            pools = [_one_more_node(np, nodes) for np in pools]
        sub = Problem(
            nodepools=pools,
            instance_types=self.problem.instance_types,
            pool_instance_types=self.problem.pool_instance_types,
            pending=list(pods),
            nodes=nodes,
            daemonsets=self.problem.daemonsets,
            volume_requirements=self.problem.volume_requirements,
            volumes=self.problem.volumes,
            namespace_labels=self.problem.namespace_labels,
            policies=self.problem.policies,
            zone_hint=zone,
        )
        order = "given" if given_order else "balanced"
        return Solver(sub, order, catalog=self.catalog, rejections=self.rejections).solve()

    def apply(self, removed: Collection[str], plan: Plan) -> None:
        """Accept a command: its nodes go, its pods join their existing destinations, and
        its replacements stay as nodes that only count: a later command must see the pods
        they hold in their zone and host (spread, anti-affinity), never add to them."""
        self.version += 1
        self.removed.update(removed)
        for name, pods in plan.existing.items():
            node = self.nodes[name]
            self.nodes[name] = replace(node, pods=[*node.pods, *pods])
            self.destinations.add(name)
            self._rooms.pop(name, None)
            if self._wide_anti is not None:
                self._wide_anti += _wide_terms(pods)
        for i, claim in enumerate(plan.claims):
            name = f"replacement-{self.version}-{i}"
            labels = {**claim.requirements.labels(), L.HOSTNAME: name}
            self.nodes[name] = NodeInfo(
                name, labels, claim.requirements, (), {}, {}, list(claim.pods), schedulable=False
            )
            if self._wide_anti is not None:
                self._wide_anti += _wide_terms(claim.pods)

    def cheapest_holding(
        self, pods: Sequence[Pod], without: Collection[str] | None = None
    ) -> float | None:
        """A lower bound on the price of one new node for ``pods``: the cheapest available
        offering of any type whose allocatable holds their summed cpu, memory and count
        (less, given ``without``, what the usable nodes other than those have free: some pods
        may land there; labels, taints and DaemonSet overhead ignored, so no real node is cheaper;
        every pool's catalog counts, so no pool's node is either)."""
        if self._price_order is None:
            order = []
            for types in self.problem.catalogs():
                for it in types:
                    prices = [o.price for o in it.offerings if o.available]
                    if prices:
                        a = it.allocatable
                        order.append((min(prices), a.get(CPU, 0), a.get(MEMORY, 0), a.get(PODS, 0)))
            self._price_order = sorted(order)
        free = (0, 0, 0) if without is None else self._free_room(without)
        cpu = sum(p.requests.get(CPU, 0) for p in pods) - free[0]
        mem = sum(p.requests.get(MEMORY, 0) for p in pods) - free[1]
        count = 1000 * len(pods) - free[2]
        for price, c, m, n in self._price_order:
            if c >= cpu and m >= mem and n >= count:
                return price
        return None

    def _free_room(self, without: Collection[str]) -> tuple[int, int, int]:
        """Free cpu, memory and pod slots summed over the usable nodes not in ``without``."""
        cpu = mem = slots = 0
        for name, _, room in self._listing():
            if room is not None and name not in without:
                cpu += max(0, room[0])
                mem += max(0, room[1])
                slots += max(0, room[2])
        return cpu, mem, slots

    def usable(self) -> list[str]:
        """The nodes pods may land on now, in order."""
        return [name for name, _, room in self._listing() if room is not None]

    def _listing(self) -> list[tuple[str, NodeInfo, tuple[int, int, int] | None]]:
        """The nodes not removed, in order, each with its room if pods may land on it (None
        if not); worked out once per accepted command, not once per simulation."""
        if self._listed is None or self._listed[0] != self.version:
            rows = [
                (name, n, self.room(name) if _usable(n) else None)
                for name, n in self.nodes.items()
                if name not in self.removed
            ]
            self._listed = (self.version, rows)
        return self._listed[1]

    def _counts_only(self, name: str) -> NodeInfo:
        node = self.nodes[name]
        twin = self._counted_only.get(name)
        if twin is None or twin.pods is not node.pods:
            twin = self._counted_only[name] = replace(node, schedulable=False)
        return twin

    def zones(self) -> list[str]:
        """Every zone an available offering of the round's catalogs is in."""
        if self._zones is None:
            self._zones = sorted(
                {
                    o.zone
                    for types in self.problem.catalogs()
                    for it in types
                    for o in it.offerings
                    if o.available
                }
            )
        return self._zones

    def room(self, name: str) -> tuple[int, int, int]:
        """Free cpu, memory and pod slots of a node now."""
        hit = self._rooms.get(name)
        if hit is None:
            hit = self._rooms[name] = _room(self.nodes[name])
        return hit

    def _prunable(self, pods: Sequence[Pod]) -> bool:
        if not all(_local_only(p) for p in pods):
            return False
        if self._wide_anti is None:
            self._wide_anti = _wide_terms(p for n in self.nodes.values() for p in n.pods)
        return not any(may_select(t, p) for t in self._wide_anti for p in pods)


def _one_more_node(pool: NodePool, nodes: Sequence[NodeInfo]) -> NodePool:
    """``pool`` with its ``nodes`` limit at one more than it has among ``nodes`` (or its own
    limit, if lower): the solver then grows that one claim to larger types for the pods that
    do not fit it, as Karpenter's claims take pods up to their largest type, where it would
    otherwise open a second claim of the size it judges the best price per pod."""
    count = sum(1 for n in nodes if n.nodepool == pool.name)
    limits = dict(pool.spec.limits)
    own = limits.get("nodes")
    if own is None or parse_limit(own) > (count + 1) * NODE:
        limits["nodes"] = count + 1
    spec = pool.spec.model_copy(update={"limits": limits})
    return pool.model_copy(update={"spec": spec})


def _wide_terms(pods: Iterable[Pod]) -> list[AffinityTerm]:
    """Required anti-affinity terms across more than one node (they bind other pods)."""
    return [t for p in pods for t in p.anti_affinity if t.key != L.HOSTNAME]


def may_select(term: AffinityTerm, pod: Pod) -> bool:
    """Whether ``term`` may select ``pod`` (namespace selectors count as yes)."""
    named = not term.all_namespaces and term.namespace_selector is None and term.namespaces
    if named and pod.namespace not in term.namespaces:
        return False
    return term.selector.matches(pod.labels)
