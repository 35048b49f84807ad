"""The problem as one solve reads it: resource dimensions, every pool's view (compatible
instance types, daemonset overhead, limits), the label values pools and nodes offer, and the
per-type vectors and requirement signatures every other part of the solve asks for.

Everything here is fixed once the solve starts (the pools' ``remaining`` limits aside, which
``PoolLimits`` keeps); the parts that place pods read it and never write it. A consolidation
simulation changes the Problem it starts from, never this code.
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
from scheduling.taints import Taint, untolerated
from scheduling.targets import NODE, PoolView, instance_type_compatible


class ProblemView:
    """What a solve derives from its Problem before placing any pod (see the module doc)."""

    # Set by ``start`` before any pod is placed.
    demand: list[int]
    memory_per_cpu: float

    def __init__(self, problem: Problem, catalog: CatalogCache) -> None:
        self.catalog = catalog
        self._node_facts: list[NodeFacts] | None = None
        self.problem = problem
        # The nodes pods may join (``ExistingNodes`` makes them targets), in order.
        self.schedulable = [n for n in problem.nodes if n.schedulable]
        # Every pool's types in one list (the round's catalog itself when the pools share
        # it): the offering index and the per-type tables are over this list.
        self.all_types = catalog.combined(problem.catalogs())
        self.namespace_labels = self._namespace_labels()
        self.dims = self._dimensions()
        self.dim_index = {d: i for i, d in enumerate(self.dims)}
        self.instance_keys = catalog.instance_keys(self.all_types)
        self.allow_undefined = catalog.allow_undefined(self.instance_keys)
        # Label values per key that pools offer; existing nodes' values join a key when it is
        # first read (``label_values``): most solves read two or three keys of dozens.
        self.universe: dict[str, set[str]] = {}
        self._universe_done: set[str] = set()
        self.pools = self._pools()
        self.label_keys = self._selector_label_keys()
        self._req_sig: dict[int, tuple[object, ...]] = {}
        self._keep_alive: list[object] = []
        self.offers = catalog.offers(self.all_types)
        dims = tuple(self.dims)
        self.alloc_vectors = catalog.type_vectors("allocatable", self.all_types, dims)
        self.capacity_vectors = catalog.type_vectors("capacity", self.all_types, dims)

    def start(self) -> None:
        """Work out what sizing pods reads: the catalog's memory per cpu and the pending
        pods' total requests."""
        self.memory_per_cpu = self.catalog.memory_per_cpu(self.all_types)
        demand = [0] * len(self.dims)
        for p in self.problem.pending:
            for i, v in enumerate(self.vec(p.requests)):
                demand[i] += v
        self.demand = demand

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

    def alloc_vec(self, it: InstanceType) -> list[int]:
        """The type's allocatable as a vector (kept per catalog; callers never change it)."""
        v = self.alloc_vectors.get(it)
        if v is None:
            v = self.vec(it.allocatable)
            self.alloc_vectors[it] = v
        return v

    def size_key(self, it: InstanceType) -> tuple[int, ...]:
        return tuple(self.alloc_vec(it))

    def facts(self) -> list[NodeFacts]:
        """Each problem node's facts, in order, looked up once per solve."""
        if self._node_facts is None:
            self._node_facts = [
                self.catalog.node_facts(n, selector_keys) for n in self.problem.nodes
            ]
        return self._node_facts

    def _selector_label_keys(self) -> frozenset[str]:
        """Pod label keys any selector looks at: other labels cannot change a placement."""
        keys: set[str] = set(selector_keys(self.problem.pending))
        for facts in self.facts():
            keys.update(facts.selector_keys)
        return frozenset(keys)

    def _namespace_labels(self) -> dict[str, dict[str, str]]:
        """Every namespace this run knows (given as a Namespace, or holding a pod) with its
        labels; the API server labels each with ``kubernetes.io/metadata.name``."""
        problem = self.problem
        names = {p.namespace for p in problem.pending}
        for facts in self.facts():
            names.update(facts.namespaces)
        names.update(problem.namespace_labels)
        return {
            ns: {**problem.namespace_labels.get(ns, {}), "kubernetes.io/metadata.name": ns}
            for ns in names
        }

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

    def label_values(self, key: str) -> set[str]:
        """Every value of a label key the pools offer or an existing node carries."""
        values = self.universe.setdefault(key, set())
        if key not in self._universe_done:
            self._universe_done.add(key)
            values.update(v for n in self.schedulable if (v := n.labels.get(key)) is not None)
        return values

    def sig(self, reqs: Requirements) -> tuple[object, ...]:
        """A requirements' signature (equal signatures, equal requirements), once per object."""
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


def selector_keys(pods: Sequence[Pod]) -> frozenset[str]:
    """The pod label keys the pods' spread and (anti-)affinity selectors read."""
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
