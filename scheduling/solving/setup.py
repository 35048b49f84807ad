"""The solver's state and what it derives before placing any pod: resource dimensions,
each NodePool's view (compatible instance types, daemonset overhead, limits), the
existing and in-flight nodes as targets, and the topology counts their bound pods make.

Every later layer (domains, classes, claims, placement, pricing, slack) reads this state;
a consolidation simulation changes the Problem it starts from, never this code.
"""

from __future__ import annotations

from collections.abc import Sequence

from models import labels as L
from models.instancetype import InstanceType
from models.nodepool import NodePool
from models.requirements import Requirements
from models.resources import CPU, MEMORY, PODS, Resources, add
from scheduling.pods import Pod
from scheduling.problem import Problem
from scheduling.solving.catalog import CatalogCache
from scheduling.solving.nodefacts import NodeFacts
from scheduling.solving.podclass import PodClass, RelaxState
from scheduling.solving.rejections import NodeRejections
from scheduling.solving.tallies import counts_once
from scheduling.taints import Taint, untolerated
from scheduling.targets import (
    NODE,
    ClaimTarget,
    ExistingTarget,
    PoolView,
    Target,
    instance_type_compatible,
)
from scheduling.topology import Topology, TopologyGroup
from scheduling.volumes import attach


class SolverSetup:
    """The solver's state and setup (see the module docstring)."""

    # Set by Solver.solve before any pod is placed.
    _demand: list[int]
    _memory_per_cpu: float

    def __init__(
        self,
        problem: Problem,
        order: str = "balanced",
        catalog: CatalogCache | None = None,
        rejections: NodeRejections | None = None,
    ) -> None:
        """``order`` is "balanced" (ours) or "cpu" (Karpenter's: cpu, then memory, descending;
        with first-fit claims this is the first-fit-decreasing baseline benchmarks compare to).

        ``catalog`` carries what depends only on the pools and the instance types from one
        solve to the next (disruption runs hundreds of simulations on one catalog);
        ``rejections``, the existing nodes known to reject a pod class (one round's)."""
        if order not in ("balanced", "cpu"):
            raise ValueError(f"unknown order {order!r}")
        self.catalog = catalog if catalog is not None else CatalogCache()
        self._node_facts: list[NodeFacts] | None = None
        self.rejections = rejections
        self.problem = problem
        # Every pool's types in one list (the round's catalog itself when the pools share
        # it): the offering index and the per-type tables are over this list.
        self.all_types = self.catalog.combined(problem.catalogs())
        self.order = order
        self.topology = Topology(self._namespace_labels())
        self.dims = self._dimensions()
        self.dim_index = {d: i for i, d in enumerate(self.dims)}
        self.instance_keys = self._instance_keys()
        self.allow_undefined = self.catalog.allow_undefined(self.instance_keys)
        # Label values per key that pools offer; existing nodes' values join a key when it is
        # first read (``label_values``): most solves read two or three keys of dozens.
        self.universe: dict[str, set[str]] = {}
        self._universe_done: set[str] = set()
        self.pools = self._pools()
        self.targets: list[Target] = []
        self.existing: list[ExistingTarget] = []
        self.claims: list[ClaimTarget] = []
        self.failed: dict[str, str] = {}
        self.states: dict[int, RelaxState] = {}
        self._classes: dict[tuple[object, ...], PodClass] = {}
        self._req_sig: dict[int, tuple[object, ...]] = {}
        self._label_keys = self._selector_label_keys()
        self._pool_types: dict[tuple[int, tuple[object, ...]], list[InstanceType]] = {}
        self._domain_cost: dict[tuple[int, str], dict[str, float]] = {}
        self._claim_seq = 0
        self.offers = self.catalog.offers(self.all_types)
        self._merged: dict[tuple[int, int], tuple[Requirements, Requirements, object]] = {}
        self._narrowed: dict[
            tuple[int, tuple[object, ...]], tuple[list[InstanceType], list[InstanceType]]
        ] = {}
        self._keep_alive: list[object] = []
        self._placed_class: dict[int, PodClass] = {}
        self._orders: dict[
            tuple[object, ...],
            tuple[list[InstanceType], list[tuple[float, InstanceType, list[int]]]],
        ] = {}
        self._targets: dict[tuple[object, ...], tuple[list[InstanceType], InstanceType]] = {}
        self._fitted: dict[
            tuple[int, tuple[int, ...]], tuple[list[InstanceType], list[InstanceType]]
        ] = {}
        self._eligible: dict[tuple[object, ...], set[str]] = {}
        self._narrowings: dict[
            tuple[int, tuple[object, ...]], tuple[Requirements, Requirements]
        ] = {}
        self._offered_doms: dict[
            tuple[int, int, str], tuple[list[InstanceType], Requirements, list[str]]
        ] = {}
        self._pinning: dict[int, tuple[PodClass, tuple[str, ...]]] = {}
        self._stays: dict[
            tuple[int, int, int], tuple[list[InstanceType], Requirements, InstanceType, bool]
        ] = {}
        self._listings: dict[
            tuple[int, tuple[int, ...]],
            tuple[
                list[tuple[float, InstanceType, list[int]]],
                list[InstanceType],
                float,
                frozenset[str],
            ],
        ] = {}
        self._rooms: dict[
            tuple[int, int, tuple[int, ...]],
            tuple[list[InstanceType], Requirements, list[int] | None],
        ] = {}
        dims = tuple(self.dims)
        self._alloc_cache = self.catalog.type_vectors("allocatable", self.all_types, dims)
        self._domains_of: dict[str, set[str]] = {}
        self._capacity_cache = self.catalog.type_vectors("capacity", self.all_types, dims)
        self._largest: dict[
            tuple[int, tuple[int, ...], int], tuple[list[InstanceType], list[int]]
        ] = {}
        self._allowed_cache: dict[
            int, tuple[list[InstanceType], tuple[int, tuple[int, ...]], list[InstanceType]]
        ] = {}
        self._placements = 0  # pods placed so far: the solver's state changes with each
        # Bumped by every change a placement attempt can see: a pod placed, a pool turned
        # tight (``_place`` remembers a class's failure until it moves).
        self._changes = 0
        # First class → (changes, relaxation chain → (reason, last step)) of pods that failed.
        self._chain_failures: dict[int, tuple[int, dict[int, tuple[str, RelaxState]]]] = {}
        # (pod class, claim index) pairs where growing the claim cannot help, for good.
        self._ungrowable: set[tuple[int, int]] = set()
        # (pod class, pool) → placements when no open claim of the pool could grow for it.
        self._growth_failed: dict[tuple[int, int], int] = {}
        # (claim index, its pods' usage, what the limits leave it) → (the pool's type list,
        # the types the claim could grow to): once a pool's limits are used up, every pod
        # refused a new claim asks each open claim the same question.
        # (type list, target, limited resources) → (the list, its types no larger than the
        # target): ``_no_larger_than`` after every pod a tight pool's claim takes.
        self._no_larger: dict[
            tuple[int, InstanceType, tuple[int, ...]], tuple[list[InstanceType], list[InstanceType]]
        ] = {}
        self._widenings: dict[
            tuple[int, tuple[int, ...], tuple[int, ...]],
            tuple[list[InstanceType], list[InstanceType]],
        ] = {}

    def _dimensions(self) -> list[str]:
        names = {CPU, MEMORY, PODS}
        for p in self.problem.pending:
            names.update(p.requests)
        for ds in self.problem.daemonsets:
            names.update(ds.requests)
        for np in self.problem.nodepools:
            names.update(k for k in np.spec.limits if k != "nodes")
        return [CPU, MEMORY, PODS, *sorted(names - {CPU, MEMORY, PODS})]

    def vec(self, res: Resources) -> list[int]:
        v = [0] * len(self.dims)
        for k, amount in res.items():
            i = self.dim_index.get(k)
            if i is not None:
                v[i] = amount
        return v

    def _instance_keys(self) -> frozenset[str]:
        return self.catalog.instance_keys(self.all_types)

    def _selector_label_keys(self) -> frozenset[str]:
        """Pod label keys any selector looks at: other labels cannot change a placement."""
        keys: set[str] = set(_selector_keys(self.problem.pending))
        for facts in self._facts():
            keys.update(facts.selector_keys)
        return frozenset(keys)

    def _facts(self) -> list[NodeFacts]:
        """Each problem node's facts, in order, looked up once per solve."""
        if self._node_facts is None:
            self._node_facts = [
                self.catalog.node_facts(n, _selector_keys) for n in self.problem.nodes
            ]
        return self._node_facts

    def _pools(self) -> list[PoolView]:
        pools = []
        for np in sorted(self.problem.nodepools, key=lambda n: (-(n.spec.weight or 0), n.name)):
            reqs = np.requirements()
            taints = tuple(_taint(t.key, t.value, t.effect) for t in np.spec.template.spec.taints)
            own = self.problem.catalog_of(np.name)
            types = self.catalog.pool_types(
                np.name,
                reqs,
                own,
                lambda reqs=reqs, own=own: [  # type: ignore[misc]
                    it for it in own if instance_type_compatible(it, reqs, self.instance_keys)
                ],
            )
            overhead = self._daemon_overhead(reqs, taints)
            remaining, limited = self._remaining_limits(np)
            min_values = {
                L.normalize(r.key): r.min_values
                for r in np.spec.template.spec.requirements
                if r.min_values
            }
            pv = PoolView(
                np.name,
                np.spec.weight or 0,
                reqs,
                taints,
                types,
                self.vec(overhead),
                remaining,
                min_values,
                limited=limited,
                daemon_ports=frozenset(
                    port for ds in self._daemons_on(reqs, taints) for port in ds.host_ports
                ),
            )
            pools.append(pv)
            for key, values in self.catalog.type_labels(types).items():
                self.universe.setdefault(key, set()).update(values)
            for key, r in reqs.items():
                if not r.complement:
                    self.universe.setdefault(key, set()).update(r.values)
        return pools

    def _remaining_limits(self, np: NodePool) -> tuple[list[int] | None, tuple[int, ...]]:
        """The pool's limits minus the capacity of its existing and in-flight nodes, per
        dimension and then nodes, and the positions that carry a limit (None: no limits).
        Positions without a limit hold 0 and are never read."""
        if not np.spec.limits:
            return None, ()
        used: Resources = {}
        for node in self.problem.nodes:
            if node.nodepool == np.name:
                used = add(used, node.capacity, {"nodes": NODE})
        remaining = [0] * (len(self.dims) + 1)
        limited = []
        for key, limit in np.limits_milli().items():
            i = len(self.dims) if key == "nodes" else self.dim_index[key]
            remaining[i] = limit - used.get(key, 0)
            limited.append(i)
        return remaining, tuple(sorted(limited))

    def _namespace_labels(self) -> dict[str, dict[str, str]]:
        """Every namespace this run knows (given as a Namespace, or holding a pod) with its
        labels; the API server labels each with ``kubernetes.io/metadata.name``."""
        problem = self.problem
        names = {p.namespace for p in problem.pending}
        for facts in self._facts():
            names.update(facts.namespaces)
        names.update(problem.namespace_labels)
        return {
            ns: {**problem.namespace_labels.get(ns, {}), "kubernetes.io/metadata.name": ns}
            for ns in names
        }

    def _daemons_on(self, reqs: Requirements, taints: Sequence[object]) -> list[Pod]:
        """The DaemonSet pods that will run on a new node with these requirements and taints."""
        out: list[Pod] = []
        for ds in self.problem.daemonsets:
            if untolerated(taints, ds.tolerations) is not None:  # type: ignore[arg-type]
                continue
            ds_reqs = ds.node_selector
            if ds.required_terms:
                if not any(
                    reqs.compatible(ds_reqs.with_requirements(t), self.allow_undefined) is None
                    for t in ds.required_terms
                ):
                    continue
            elif reqs.compatible(ds_reqs, self.allow_undefined) is not None:
                continue
            out.append(ds)
        return out

    def _daemon_overhead(self, reqs: Requirements, taints: Sequence[object]) -> Resources:
        total: Resources = {}
        for ds in self._daemons_on(reqs, taints):
            total = add(total, ds.requests)
        return total

    def _existing(self) -> None:
        dims = tuple(self.dims)
        for node, facts in zip(self.problem.nodes, self._facts(), strict=True):
            if not node.schedulable:
                continue
            used, alloc = facts.vectors(dims, self.vec)
            volumes: dict[str, set[str]] = {}
            if node.volume_limits:
                for p in node.pods:
                    if p.key in self.problem.volumes:
                        attach(volumes, self.problem.volumes[p.key])
            # A node's pod capacity: missing dims (e.g. pods) mean zero room, as the kubelet.
            t = ExistingTarget(
                hostname=node.labels.get(L.HOSTNAME, node.name),
                requirements=node.requirements,
                taints=node.taints,
                used=list(used),
                host_ports=set(facts.ports),
                pods=list(node.pods),
                base_used=list(used),
                name=node.name,
                allocatable=alloc,
                labels=node.labels,
                nodepool=node.nodepool,
                in_flight=node.in_flight,
                volume_limits=node.volume_limits,
                volumes=volumes,
            )
            self.existing.append(t)
            self.targets.append(t)

    def label_values(self, key: str) -> set[str]:
        """Every value of a label key the pools offer or an existing node carries."""
        values = self.universe.setdefault(key, set())
        if key not in self._universe_done:
            self._universe_done.add(key)
            values.update(v for t in self.existing if (v := t.labels.get(key)) is not None)
        return values

    def _bound_pods_topology(self) -> None:
        """Count pods already running, and let their anti-affinity block domains."""
        facts = self._facts()
        # Pods alike in namespace, labels and anti-affinity count alike: each node's pods are
        # taken as such shapes with how many of each (kept across solves per pod list).
        owned_by: dict[int, list[TopologyGroup]] = {}
        hostname = L.HOSTNAME
        for f in facts:
            if not f.owners:
                continue
            labels = f.labels
            host = labels.get(hostname, f.node.name)
            for p, _n, _shape, akey in f.owners:
                assert akey is not None
                owned = owned_by.get(akey)
                if owned is None:
                    owned = owned_by[akey] = [
                        self.topology.affinity_group(p, t, anti=True) for t in p.anti_affinity
                    ]
                for g in owned:
                    d = host if g.key == hostname else labels.get(g.key)
                    if d is not None:
                        g.owner_domains.add(d)
        # Groups are known across solves by numbers, and so is whether one selects a shape;
        # their counts are kept across solves and brought up to date by the nodes that
        # changed (``TopologyTallies``), unless two nodes look alike to them.
        numbered = [(g, self.catalog.group_number(g)) for g in self.topology.groups]
        nodes = {f.key: f for f in facts}
        if len(nodes) == len(facts):
            self.catalog.tallies.count(numbered, nodes, self.catalog.selects)
            return
        counts_once(numbered, facts, self.catalog.selects)

    def _declare_groups(self) -> None:
        """Create every group the pending pods can use, before anything is counted."""
        for p in self.problem.pending:
            for s in p.spreads:
                self.topology.spread_group(p, s)
            for t in p.affinity:
                self.topology.affinity_group(p, t, anti=False)
            for _, t in p.preferred_affinity:
                self.topology.affinity_group(p, t, anti=False)
            for t in p.anti_affinity:
                self.topology.affinity_group(p, t, anti=True)
            for _, t in p.preferred_anti_affinity:
                self.topology.affinity_group(p, t, anti=True)

    def _sig(self, reqs: Requirements) -> tuple[object, ...]:
        key = id(reqs)
        sig = self._req_sig.get(key)
        if sig is None:
            sig = tuple(
                (r.key, r.complement, tuple(sorted(r.values)), r.gt, r.lt, r.min_values)
                for r in sorted(reqs.values(), key=lambda r: r.key)
            )
            self._req_sig[key] = sig
            self._keep_alive.append(reqs)
        return sig


def _selector_keys(pods: Sequence[Pod]) -> frozenset[str]:
    keys: set[str] = set()
    for p in pods:
        sels = [s.selector for s in p.spreads]
        sels += [t.selector for t in p.affinity + p.anti_affinity]
        sels += [t.selector for _, t in p.preferred_affinity + p.preferred_anti_affinity]
        for s in sels:
            keys.update(c[0] for c in s.clauses)
    return frozenset(keys)


def _taint(key: str, value: str | None, effect: str) -> Taint:
    return Taint(key, value or "", effect)
