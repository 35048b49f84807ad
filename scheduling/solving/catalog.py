"""What a solve derives from the catalog and pools alone, and from each node as it is, kept
across solves."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence, Sized
from typing import Any

from models import labels as L
from models.instancetype import InstanceType
from models.requirements import Requirement, Requirements
from models.resources import CPU, MEMORY
from scheduling.offers import OfferIndex
from scheduling.pods import AffinityTerm, Pod, SpreadConstraint
from scheduling.problem import NodeInfo
from scheduling.solving.nodefacts import NodeFacts, node_facts
from scheduling.solving.tallies import TopologyTallies
from scheduling.taints import Toleration
from scheduling.targets import label_compatible
from scheduling.topology import TopologyGroup

# A pod's constraints once relaxed: node requirements, tolerations, spreads, affinity and
# anti-affinity terms in force, its requests (sorted), and a number naming all but the requests.
ClassParts = tuple[
    Requirements,
    tuple[Toleration, ...],
    tuple[SpreadConstraint, ...],
    tuple[AffinityTerm, ...],
    tuple[AffinityTerm, ...],
    tuple[tuple[str, int], ...],
    int,
]


class CatalogCache:
    """What a solve derives from the catalog and the pools alone, kept for the next solve on
    the same catalog: the offering index, the label keys types define, each pool's
    compatible types and the label values they offer; and each node's ``NodeFacts`` (a
    disruption round solves hundreds of times over the same nodes). Entries are keyed by
    object identity (and hold the object), so a different catalog, pool or node never reads a
    stale entry."""

    def __init__(self) -> None:
        self._combined: tuple[tuple[list[InstanceType], ...], list[InstanceType]] | None = None
        self._offers: tuple[list[InstanceType], OfferIndex] | None = None
        self._keys: tuple[object, frozenset[str]] | None = None
        # By the pool's name and requirements (what its compatible types depend on), not the
        # pool object: a provisioning round reads each pool afresh, and its status changes.
        self._pool_types: dict[
            tuple[str, frozenset[Requirement]], tuple[object, list[InstanceType]]
        ] = {}
        self._labels: dict[int, tuple[object, dict[str, set[str]]]] = {}
        self._facts: dict[int, NodeFacts] = {}
        self._pool_domains: dict[tuple[object, ...], tuple[list[object], frozenset[str]]] = {}
        self._compatible: dict[tuple[object, ...], tuple[object, frozenset[InstanceType]]] = {}
        # Per requirement (one key), the catalog's types whose labels agree with it.
        self._key_passing: dict[Requirement, tuple[object, frozenset[InstanceType]]] = {}
        self._compatible_lists: dict[
            tuple[tuple[object, ...], int],
            tuple[Sequence[InstanceType], object, list[InstanceType]],
        ] = {}
        self._shape_names: dict[tuple[object, ...], int] = {}
        self._group_names: dict[tuple[object, ...], int] = {}
        self._selects: dict[tuple[int, int], bool] = {}
        self._class_parts: dict[tuple[int, object], tuple[object, object, ClassParts]] = {}
        self._chains: dict[int, tuple[Pod, Requirements | None, int]] = {}
        self._constraints: dict[tuple[object, ...], int] = {}
        self._per_cpu: tuple[object, float] | None = None
        self._type_vectors: dict[
            tuple[str, tuple[str, ...]], tuple[object, dict[InstanceType, list[int]]]
        ] = {}
        # The label keys a node need not define (``allow_undefined``), per instance keys.
        self._allow: tuple[frozenset[str], frozenset[str]] | None = None
        # (node requirements, pod class requirements) → why they conflict (None: they agree).
        self._label_answers: dict[
            tuple[int, int], tuple[Requirements, Requirements, frozenset[str], str | None]
        ] = {}
        # The running pods' topology counts per group, kept up to date from solve to solve.
        self.tallies = TopologyTallies()

    def size(self) -> int:
        """How many entries the cache keeps, all tables together (what bounds a cache kept
        from one provisioning round to the next, ``scheduling.solving.kept``)."""
        tables: list[Sized] = [
            self._pool_types,
            self._labels,
            self._facts,
            self._pool_domains,
            self._compatible,
            self._key_passing,
            self._compatible_lists,
            self._shape_names,
            self._group_names,
            self._selects,
            self._class_parts,
            self._chains,
            self._constraints,
            self._type_vectors,
            self._label_answers,
        ]
        return sum(len(t) for t in tables) + self.tallies.size()

    def allow_undefined(self, instance_keys: frozenset[str]) -> frozenset[str]:
        """The label keys a node's requirements need not define for a pod's to be compatible
        (the well-known ones and those the catalog's types define), the same set while the
        instance keys are (so ``label_conflict`` answers from one solve to the next)."""
        hit = self._allow
        if hit is None or hit[0] is not instance_keys:
            hit = self._allow = (instance_keys, L.WELL_KNOWN_LABELS | instance_keys)
        return hit[1]

    def label_conflict(
        self, node: Requirements, pod: Requirements, allow_undefined: frozenset[str]
    ) -> str | None:
        """``node.compatible(pod, allow_undefined)``, once per pair of requirements (both
        are never changed once made): an unchanged node and pod class meet again in the next
        simulation of a disruption round and in the next provisioning round."""
        key = (id(node), id(pod))
        hit = self._label_answers.get(key)
        if hit is None or hit[0] is not node or hit[1] is not pod or hit[2] is not allow_undefined:
            why = node.compatible(pod, allow_undefined)
            hit = self._label_answers[key] = (node, pod, allow_undefined, why)
        return hit[3]

    def retain(self, nodes: Iterable[NodeInfo], pods: Iterable[Pod]) -> None:
        """Forget what was kept for nodes and pods other than these (a provisioning round's:
        a claim or pod that changed or went away is never asked about again)."""
        node_list = list(nodes)
        node_ids = {id(n) for n in node_list}
        pod_list = list(pods)
        pod_ids = {id(p) for p in pod_list}
        sources = {id(p if p.spec_parts is None else p.spec_parts) for p in pod_list}
        self._facts = {k: v for k, v in self._facts.items() if k in node_ids}
        node_reqs = {id(n.requirements) for n in node_list}
        self._label_answers = {k: v for k, v in self._label_answers.items() if k[0] in node_reqs}
        self._chains = {k: v for k, v in self._chains.items() if k in pod_ids}
        self._class_parts = {k: v for k, v in self._class_parts.items() if k[0] in sources}

    def combined(self, catalogs: tuple[list[InstanceType], ...]) -> list[InstanceType]:
        """One list of every type of the pools' catalogs (``Problem.catalogs``), the same
        object while the catalogs are: what is kept per catalog (offers, vectors, compatible
        types) is then kept across solves. One catalog is its own list."""
        if len(catalogs) == 1:
            return catalogs[0]
        hit = self._combined
        if (
            hit is None
            or len(hit[0]) != len(catalogs)
            or any(a is not b for a, b in zip(hit[0], catalogs, strict=True))
        ):
            merged: list[InstanceType] = []
            seen: set[int] = set()
            for types in catalogs:
                for it in types:
                    if id(it) not in seen:
                        seen.add(id(it))
                        merged.append(it)
            hit = self._combined = (catalogs, merged)
        return hit[1]

    def offers(self, types: list[InstanceType]) -> OfferIndex:
        if self._offers is None or self._offers[0] is not types:
            self._offers = (types, OfferIndex(types))
        return self._offers[1]

    def memory_per_cpu(self, types: list[InstanceType]) -> float:
        """The catalog's memory per cpu (all types' allocatable summed): how pods are sized."""
        hit = self._per_cpu
        if hit is None or hit[0] is not types:
            cpu = sum(it.allocatable.get(CPU, 0) for it in types)
            mem = sum(it.allocatable.get(MEMORY, 0) for it in types)
            hit = self._per_cpu = (types, mem / cpu if cpu else 0.0)
        return hit[1]

    def type_vectors(
        self, kind: str, types: list[InstanceType], dims: tuple[str, ...]
    ) -> dict[InstanceType, list[int]]:
        """A table, by type, of the types' allocatable (or capacity: ``kind``) as vectors
        over ``dims``, kept for every solve with the same catalog and dimensions; the solver
        fills it as it asks. Callers never change a vector they read."""
        key = (kind, dims)
        hit = self._type_vectors.get(key)
        if hit is None or hit[0] is not types:
            hit = self._type_vectors[key] = (types, {})
        return hit[1]

    def instance_keys(self, types: list[InstanceType]) -> frozenset[str]:
        if self._keys is None or self._keys[0] is not types:
            keys: set[str] = set()
            for it in types:
                keys.update(it.requirements.keys())
            self._keys = (types, frozenset(keys))
        return self._keys[1]

    def pool_types(
        self,
        pool: str,
        reqs: Requirements,
        types: list[InstanceType],
        compute: Callable[[], list[InstanceType]],
    ) -> list[InstanceType]:
        """The catalog's types compatible with the requirements of the pool named ``pool``
        (``compute``), once per pool, requirements and catalog: the same list object each
        time, so what is kept per type list (offers, narrowing, labels) hits too."""
        key = (pool, frozenset(reqs.values()))
        hit = self._pool_types.get(key)
        if hit is None or hit[0] is not types:
            hit = self._pool_types[key] = (types, compute())
        return hit[1]

    def node_facts(
        self, node: NodeInfo, selector_keys: Callable[[Sequence[Pod]], frozenset[str]]
    ) -> NodeFacts:
        """What the node's pods and labels imply (``NodeFacts``), once per node as it is."""
        hit = self._facts.get(id(node))
        if hit is None or not hit.current(node):
            hit = self._facts[id(node)] = node_facts(node, selector_keys, self._shape_names)
        return hit

    def class_parts(
        self,
        pod: Pod,
        state: Hashable,
        vol: Requirements | None,
        compute: Callable[[Pod, Any, Requirements | None], ClassParts],
    ) -> ClassParts:
        """A pod's constraints relaxed to ``state`` (``ClassParts``), once per pod, state and
        volume requirements (a round moves the same pods in many simulations); once per spec
        for the pods whose spec parse is shared (``Pod.spec_parts``: the constraints are
        that parse's, so equal for all of them)."""
        source: object = pod if pod.spec_parts is None else pod.spec_parts
        key = (id(source), state)
        hit = self._class_parts.get(key)
        if hit is None or hit[0] is not source or hit[1] is not vol:
            hit = self._class_parts[key] = (source, vol, compute(pod, state, vol))
        return hit[2]

    def chain_number(
        self, pod: Pod, vol: Requirements | None, compute: Callable[[], tuple[object, ...]]
    ) -> int:
        """A number for the pod's relaxation steps as ``compute`` lists them (each step with
        its requests and constraints), once per pod and volume requirements: equal numbers,
        equal steps."""
        hit = self._chains.get(id(pod))
        if hit is None or hit[0] is not pod or hit[1] is not vol:
            hit = self._chains[id(pod)] = (pod, vol, self.constraints_number(("chain", compute())))
        return hit[2]

    def constraints_number(self, constraints: tuple[object, ...]) -> int:
        """A number per distinct constraints tuple: equal numbers, equal constraints."""
        found = self._constraints.get(constraints)
        if found is None:
            found = self._constraints[constraints] = len(self._constraints)
        return found

    def group_number(self, group: TopologyGroup) -> int:
        """A number for the group's identity, the same in every solve of this cache."""
        ident = group.identity()
        found = self._group_names.get(ident)
        if found is None:
            found = self._group_names[ident] = len(self._group_names)
        return found

    def selects(self, group_number: int, shape: int, group: TopologyGroup, pod: Pod) -> bool:
        """Whether the group numbered ``group_number`` selects pods of the shape numbered
        ``shape`` (``NodeFacts``), of which ``pod`` is one."""
        key = (group_number, shape)
        hit = self._selects.get(key)
        if hit is None:
            hit = self._selects[key] = group.selects(pod)
        return hit

    def pool_domains(
        self,
        key: tuple[object, ...],
        pool_types: Sequence[list[InstanceType]],
        compute: Callable[[], frozenset[str]],
    ) -> frozenset[str]:
        """Topology domains the pools offer a pod class, per ``key`` (the class's
        requirements and tolerations, the topology key, the pools' requirements and taints)
        and the pools' type lists (by identity)."""
        hit = self._pool_domains.get(key)
        if (
            hit is None
            or len(hit[0]) != len(pool_types)
            or any(a is not b for a, b in zip(hit[0], pool_types, strict=True))
        ):
            hit = self._pool_domains[key] = (list(pool_types), compute())
        return hit[1]

    def compatible(
        self,
        types: Sequence[InstanceType],
        sig: tuple[object, ...],
        reqs: Requirements,
        instance_keys: frozenset[str],
        offers: OfferIndex,
    ) -> list[InstanceType]:
        """The types compatible with ``reqs`` (whose signature is ``sig``) and offered under
        them, each type's answer kept per signature for the next solve on this catalog, and
        the list itself per input list. Callers never change the list they get."""
        listed = self._compatible_lists.get((sig, id(types)))
        if listed is not None and listed[0] is types and listed[1] is offers:
            # The same list as last time: caches keyed by a type list's identity (offers,
            # narrowing) then hit across solves too.
            return listed[2]
        hit = self._compatible.get(sig)
        if hit is None or hit[0] is not offers:
            hit = self._compatible[sig] = (offers, self._passing(reqs, instance_keys, offers))
        passing = hit[1]
        out = [it for it in types if it in passing]
        self._compatible_lists[(sig, id(types))] = (types, offers, out)
        return out

    def _passing(
        self, reqs: Requirements, instance_keys: frozenset[str], offers: OfferIndex
    ) -> frozenset[InstanceType]:
        """The catalog's types ``instance_type_compatible`` accepts under
        ``reqs``: those with an allowed offering, less those one of its requirements rejects.
        Each requirement's verdict on the whole catalog is worked out once (a solve meets a
        few dozen distinct ones, in hundreds of combinations)."""
        names: set[InstanceType] = set(offers.price_map(reqs))
        assert self._offers is not None and self._offers[1] is offers  # the catalog's index
        catalog = self._offers[0]
        for r in reqs.values():
            hit = self._key_passing.get(r)
            if hit is None or hit[0] is not offers:
                ok = frozenset(it for it in catalog if label_compatible(it, r, instance_keys))
                hit = self._key_passing[r] = (offers, ok)
            names &= hit[1]
            if not names:
                break
        return frozenset(names)

    def type_labels(self, types: list[InstanceType]) -> dict[str, set[str]]:
        """Label values a pool's types (``pool_types``) offer (zones and capacity types of
        available offerings included), once per type list; callers never change them."""
        hit = self._labels.get(id(types))
        if hit is None or hit[0] is not types:
            out: dict[str, set[str]] = {}
            for it in types:
                for key, r in it.requirements.items():
                    if not r.complement:
                        out.setdefault(key, set()).update(r.values)
                for o in it.offerings:
                    if o.available:
                        out.setdefault(L.ZONE, set()).add(o.zone)
                        out.setdefault(L.CAPACITY_TYPE, set()).add(o.capacity_type)
            hit = (types, out)
            self._labels[id(types)] = hit
        return hit[1]
