"""The provisioning simulation: place pending pods on existing capacity or on new NodeClaims.

It follows Karpenter's scheduler (pods largest first; existing and in-flight nodes, then
claims opened in this run, then a new claim from each NodePool by weight; preferences
relaxed one step at a time) with two changes that matter at scale and for cost:

* Pods with identical constraints form a *class*. A target that rejects a class for a
  monotone reason (resources, labels, taints, ports, anti-affinity) is never tried again for
  that class, so a Deployment's replicas cost little more than one pod.
* Claims are tried first-fit in creation order, and a zonal decision always pins one zone
  (the cheapest among the equally good), so recorded topology counts are exact.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from operator import le

from models import labels as L
from models.instancetype import InstanceType
from models.requirements import Requirement, Requirements
from models.resources import CPU, MEMORY, PODS, Resources, add, render
from scheduling.offers import OfferIndex
from scheduling.pods import Pod, SpreadConstraint
from scheduling.problem import Problem
from scheduling.taints import TOLERATE_ALL_PREFER_NO_SCHEDULE, Taint, Toleration, untolerated
from scheduling.targets import (
    ClaimTarget,
    ExistingTarget,
    Failure,
    PoolView,
    Target,
    instance_type_compatible,
    min_values_shortfall,
    ports_conflict,
    vec_add,
    vec_fits,
)
from scheduling.topology import AFFINITY, SPREAD, Topology, TopologyGroup

MAX_INSTANCE_TYPES = 600


@dataclass(frozen=True)
class RelaxState:
    """How far a pod's preferences have been relaxed (Karpenter's order)."""

    term: int = 0  # index of the required node-affinity term in use
    pref_affinity_dropped: int = 0
    pref_anti_dropped: int = 0
    pref_node_dropped: int = 0
    schedule_anyway_dropped: bool = False
    tolerate_prefer_no_schedule: bool = False


@dataclass(eq=False)
class PodClass:
    """Pods that share every scheduling constraint (after relaxation) and so behave alike."""

    requests: Resources
    vec: list[int]
    reqs: Requirements
    tolerations: tuple[Toleration, ...]
    own: list[tuple[TopologyGroup, SpreadConstraint | None]]
    owned_anti: list[TopologyGroup]
    inverse: list[TopologyGroup]
    matching: list[TopologyGroup]
    host_ports: frozenset[tuple[str, int, str]]
    self_selecting: dict[int, int]
    invalid: str | None = None
    eligible: dict[str, set[str]] = field(default_factory=dict)
    candidates: list[Target] = field(default_factory=list)
    cursor: int = 0
    pool_cache: dict[int, object] = field(default_factory=dict)


@dataclass
class PlannedClaim:
    nodepool: str
    instance_types: list[InstanceType]
    requirements: Requirements
    zones: list[str]
    capacity_types: list[str]
    price: float
    requests: Resources
    pods: list[Pod]


@dataclass
class Plan:
    claims: list[PlannedClaim]
    existing: dict[str, list[Pod]]
    unschedulable: dict[str, str]
    scheduled: list[Pod]

    @property
    def cost(self) -> float:
        return sum(c.price for c in self.claims)


class CatalogCache:
    """What a solve derives from the catalog and the pools alone, kept for the next solve on
    the same catalog: the offering index, the label keys types define, each pool's
    compatible types and the label values they offer. Entries are keyed by object identity
    (and hold the object), so a different catalog or pool never reads a stale entry."""

    def __init__(self) -> None:
        self._offers: tuple[object, OfferIndex] | None = None
        self._keys: tuple[object, frozenset[str]] | None = None
        self._pool_types: dict[int, tuple[object, object, list[InstanceType]]] = {}
        self._labels: dict[int, tuple[object, dict[str, set[str]]]] = {}
        self._selector_keys: dict[int, tuple[list[Pod], frozenset[str]]] = {}

    def offers(self, types: list[InstanceType]) -> OfferIndex:
        if self._offers is None or self._offers[0] is not types:
            self._offers = (types, OfferIndex(types))
        return self._offers[1]

    def instance_keys(self, types: list[InstanceType]) -> frozenset[str]:
        if self._keys is None or self._keys[0] is not types:
            keys: set[str] = set()
            for it in types:
                keys.update(it.requirements.keys())
            self._keys = (types, frozenset(keys))
        return self._keys[1]

    def pool_types(
        self,
        pool: object,
        types: list[InstanceType],
        compute: Callable[[], list[InstanceType]],
    ) -> list[InstanceType]:
        hit = self._pool_types.get(id(pool))
        if hit is None or hit[0] is not pool or hit[1] is not types:
            hit = (pool, types, compute())
            self._pool_types[id(pool)] = hit
        return hit[2]

    def node_selector_keys(
        self, pods: list[Pod], compute: Callable[[list[Pod]], frozenset[str]]
    ) -> frozenset[str]:
        """Label keys the selectors of a node's pods look at, per pod list (a node whose
        pods change gets a new list)."""
        hit = self._selector_keys.get(id(pods))
        if hit is None or hit[0] is not pods:
            hit = (pods, compute(pods))
            self._selector_keys[id(pods)] = hit
        return hit[1]

    def type_labels(self, pool: object, types: list[InstanceType]) -> dict[str, set[str]]:
        """Label values the pool's types offer (zones and capacity types of available
        offerings included)."""
        hit = self._labels.get(id(pool))
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
            self._labels[id(pool)] = hit
        return hit[1]


class Solver:
    """One scheduling run over a Problem. Deterministic for a given input."""

    def __init__(
        self, problem: Problem, order: str = "balanced", catalog: CatalogCache | None = None
    ) -> None:
        """``order`` is "balanced" (ours) or "cpu" (Karpenter's: cpu, then memory, descending;
        with first-fit claims this is the first-fit-decreasing baseline benchmarks compare to).

        ``catalog`` carries what depends only on the pools and the instance types from one
        solve to the next (disruption runs hundreds of simulations on one catalog)."""
        if order not in ("balanced", "cpu"):
            raise ValueError(f"unknown order {order!r}")
        self.catalog = catalog if catalog is not None else CatalogCache()
        self.problem = problem
        self.order = order
        self.topology = Topology(self._namespace_labels())
        self.dims = self._dimensions()
        self.dim_index = {d: i for i, d in enumerate(self.dims)}
        self.instance_keys = self._instance_keys()
        self.allow_undefined = L.WELL_KNOWN_LABELS | self.instance_keys
        self.universe: dict[str, set[str]] = {}
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
        self.offers = self.catalog.offers(problem.instance_types)
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
        self._alloc_cache: dict[str, list[int]] = {}

    # ----------------------------------------------------------------- setup

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
        return self.catalog.instance_keys(self.problem.instance_types)

    def _selector_label_keys(self) -> frozenset[str]:
        """Pod label keys any selector looks at: other labels cannot change a placement."""
        keys: set[str] = set(_selector_keys(self.problem.pending))
        for n in self.problem.nodes:
            keys.update(self.catalog.node_selector_keys(n.pods, _selector_keys))
        return frozenset(keys)

    def _pools(self) -> list[PoolView]:
        pools = []
        for np in sorted(self.problem.nodepools, key=lambda n: (-(n.spec.weight or 0), n.name)):
            reqs = np.requirements()
            taints = tuple(_taint(t.key, t.value, t.effect) for t in np.spec.template.spec.taints)
            types = self.catalog.pool_types(
                np,
                self.problem.instance_types,
                lambda reqs=reqs: [  # type: ignore[misc]
                    it
                    for it in self.problem.instance_types
                    if instance_type_compatible(it, reqs, self.instance_keys)
                ],
            )
            overhead = self._daemon_overhead(reqs, taints)
            remaining = None
            if np.spec.limits:
                limits = np.limits_milli()
                used: Resources = {}
                for node in self.problem.nodes:
                    if node.nodepool == np.name:
                        used = add(used, node.capacity, {"nodes": 1000})
                remaining_res = {k: v - used.get(k, 0) for k, v in limits.items()}
                remaining = [remaining_res.get(d, 1 << 62) for d in self.dims]
                remaining.append(remaining_res.get("nodes", 1 << 62))
                other = {
                    k: v
                    for k, v in remaining_res.items()
                    if k not in self.dim_index and k != "nodes"
                }
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
                other if np.spec.limits else {},
                daemon_ports=frozenset(
                    port for ds in self._daemons_on(reqs, taints) for port in ds.host_ports
                ),
            )
            pools.append(pv)
            for key, values in self.catalog.type_labels(np, types).items():
                self.universe.setdefault(key, set()).update(values)
            for key, r in reqs.items():
                if not r.complement:
                    self.universe.setdefault(key, set()).update(r.values)
        return pools

    def _namespace_labels(self) -> dict[str, dict[str, str]]:
        """Every namespace this run knows (given as a Namespace, or holding a pod) with its
        labels; the API server labels each with ``kubernetes.io/metadata.name``."""
        problem = self.problem
        names = {p.namespace for p in problem.pending}
        names.update(p.namespace for n in problem.nodes for p in n.pods)
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
        for node in self.problem.nodes:
            if not node.schedulable:
                continue
            used: Resources = {}
            ports: set[tuple[str, int, str]] = set()
            for p in node.pods:
                used = add(used, p.requests)
                ports.update(p.host_ports)
            alloc = self.vec(node.allocatable)
            # A node's pod capacity: missing dims (e.g. pods) mean zero room, as the kubelet.
            t = ExistingTarget(
                hostname=node.labels.get(L.HOSTNAME, node.name),
                requirements=node.requirements,
                taints=node.taints,
                used=self.vec(used),
                host_ports=ports,
                pods=list(node.pods),
                base_used=self.vec(used),
                name=node.name,
                allocatable=alloc,
                labels=node.labels,
                nodepool=node.nodepool,
                in_flight=node.in_flight,
            )
            self.existing.append(t)
            self.targets.append(t)
            for key, value in node.labels.items():
                self.universe.setdefault(key, set()).add(value)

    def _bound_pods_topology(self) -> None:
        """Count pods already running, and let their anti-affinity block domains."""
        for node in self.problem.nodes:
            for p in node.pods:
                for term in p.anti_affinity:
                    self.topology.affinity_group(p, term, anti=True)
        groups = list(self.topology.groups)
        for node in self.problem.nodes:
            host = node.labels.get(L.HOSTNAME, node.name)
            for p in node.pods:
                owned = [self.topology.affinity_group(p, t, anti=True) for t in p.anti_affinity]
                matching = [g for g in groups if g.selects(p)]
                domains = {
                    g.key: ([host] if g.key == L.HOSTNAME else [node.labels[g.key]])
                    for g in matching + owned
                    if g.key == L.HOSTNAME or g.key in node.labels
                }
                self.topology.record(p, matching, owned, domains)

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

    # --------------------------------------------------------------- classes

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

    def _pod_class(self, pod: Pod, state: RelaxState) -> PodClass:
        reqs = pod.node_selector
        if pod.required_terms:
            reqs = reqs.with_requirements(pod.required_terms[state.term])
        prefs = pod.preferred_terms[state.pref_node_dropped :]
        if prefs:
            reqs = reqs.with_requirements(prefs[0][1])
        vol = self.problem.volume_requirements.get(pod.key)
        if vol is not None:
            reqs = reqs.with_requirements(vol)
        spreads = [s for s in pod.spreads if s.hard or not state.schedule_anyway_dropped]
        aff = list(pod.affinity) + [
            t for _, t in pod.preferred_affinity[state.pref_affinity_dropped :]
        ]
        anti = list(pod.anti_affinity) + [
            t for _, t in pod.preferred_anti_affinity[state.pref_anti_dropped :]
        ]
        tolerations = pod.tolerations
        if state.tolerate_prefer_no_schedule:
            tolerations = (*tolerations, TOLERATE_ALL_PREFER_NO_SCHEDULE)
        labels = tuple(sorted((k, v) for k, v in pod.labels.items() if k in self._label_keys))
        key = (
            pod.namespace,
            labels,
            tuple(sorted(pod.requests.items())),
            self._sig(reqs),
            tolerations,
            tuple(spreads),
            tuple(aff),
            tuple(anti),
            pod.host_ports,
        )
        cls = self._classes.get(key)
        if cls is not None:
            return cls
        own: list[tuple[TopologyGroup, SpreadConstraint | None]] = [
            (self.topology.spread_group(pod, s), s) for s in spreads
        ]
        own += [(self.topology.affinity_group(pod, t, anti=False), None) for t in aff]
        own += [(self.topology.affinity_group(pod, t, anti=True), None) for t in anti]
        # Only required anti-affinity binds other pods (Karpenter does not track the inverse
        # of preferences either): a preference is the owner's wish, not the others' rule.
        owned_anti = [self.topology.affinity_group(pod, t, anti=True) for t in pod.anti_affinity]
        matching = [g for g in self.topology.groups if g.selects(pod)]
        inverse = [g for g in self.topology.anti_groups if g.selects(pod)]
        cls = PodClass(
            requests=pod.requests,
            vec=self.vec(pod.requests),
            reqs=reqs,
            tolerations=tolerations,
            own=own,
            owned_anti=owned_anti,
            inverse=inverse,
            matching=matching,
            host_ports=pod.host_ports,
            self_selecting={id(g): int(g.selects(pod)) for g, _ in own},
        )
        for g, s in own:
            if s is not None and g.key not in cls.eligible:
                cls.eligible[g.key] = self._eligible_domains(
                    cls, g.key, s.honor_affinity, s.honor_taints
                )
        self._classes[key] = cls
        return cls

    def _eligible_domains(
        self, cls: PodClass, key: str, honor_affinity: bool, honor_taints: bool
    ) -> set[str]:
        """Domains a spread counts: those a compatible pool or node can provide to the pod."""
        ck = (self._sig(cls.reqs), cls.tolerations, key, honor_affinity, honor_taints)
        hit = self._eligible.get(ck)
        if hit is None:
            hit = self._compute_eligible(cls, key, honor_affinity, honor_taints)
            self._eligible[ck] = hit
        return hit

    def _compute_eligible(
        self, cls: PodClass, key: str, honor_affinity: bool, honor_taints: bool
    ) -> set[str]:
        """Domains a spread counts. nodeTaintsPolicy Ignore (the default) counts domains of
        pools whose taints the pod does not tolerate; Honor leaves them out."""
        out: set[str] = set()
        for pool in self.pools:
            if honor_taints and untolerated(pool.taints, cls.tolerations) is not None:
                continue
            if honor_affinity and pool.requirements.compatible(cls.reqs, self.allow_undefined):
                continue
            merged = (
                pool.requirements.with_requirements(cls.reqs)
                if honor_affinity
                else pool.requirements
            )
            for it in pool.instance_types:
                if key in (L.ZONE, L.CAPACITY_TYPE):
                    zr = merged.get_or_exists(L.ZONE)
                    cr = merged.get_or_exists(L.CAPACITY_TYPE)
                    if honor_affinity and not instance_type_compatible(
                        it, merged, self.instance_keys
                    ):
                        continue
                    for o in it.offerings:
                        if o.available and zr.has(o.zone) and cr.has(o.capacity_type):
                            out.add(o.zone if key == L.ZONE else o.capacity_type)
                else:
                    r = it.requirements.get(key) or merged.get(key)
                    if r is not None and not r.complement:
                        out.update(v for v in r.values if merged.get_or_exists(key).has(v))
        for t in self.existing:
            v = t.labels.get(key)
            if v is None:
                continue
            if honor_affinity and t.requirements.compatible(cls.reqs, self.allow_undefined):
                continue
            if honor_taints and untolerated(t.taints, cls.tolerations) is not None:
                continue
            out.add(v)
        return out

    # ------------------------------------------------------------- topology

    def _claim_domains(self, t: Target, key: str, reqs: Requirements) -> list[str] | None:
        if key == L.HOSTNAME:
            return [t.hostname]
        if isinstance(t, ExistingTarget):
            v = t.labels.get(key)
            return None if v is None else [v]
        assert isinstance(t, ClaimTarget)
        if key in (L.ZONE, L.CAPACITY_TYPE):
            universe = (
                len(self.universe.get(L.ZONE, ())),
                len(self.universe.get(L.CAPACITY_TYPE, ())),
            )
            zones, cts = self.offers.zones_and_types(t.types, reqs, universe)
            return sorted(zones if key == L.ZONE else cts)
        r = reqs.get(key)
        if r is None:
            return None
        if not r.complement:
            return sorted(r.values)
        return sorted(v for v in self.universe.get(key, ()) if r.has(v))

    def _domain_price(self, t: Target, key: str, reqs: Requirements, domain: str) -> float:
        if not isinstance(t, ClaimTarget) or key not in (L.ZONE, L.CAPACITY_TYPE):
            return 0.0
        zones, cts = self.offers.offered(t.types, reqs)
        return (zones if key == L.ZONE else cts).get(domain, float("inf"))

    def _topology(self, cls: PodClass, t: Target, reqs: Requirements) -> Requirements | Failure:
        if not cls.own and not cls.inverse:
            return reqs
        allowed: dict[str, list[str]] = {}
        pin: set[str] = set()
        for g, spread in cls.own:
            doms = allowed.get(g.key)
            if doms is None:
                doms = self._claim_domains(t, g.key, reqs)
                if doms is None:
                    return Failure(f"nodes here carry no {g.key} label for {g.describe()}", True)
            counts = g.counts
            if g.kind == SPREAD:
                assert spread is not None
                eligible = cls.eligible.get(g.key, set())
                if g.key == L.HOSTNAME or (
                    spread.min_domains is not None and len(eligible) < spread.min_domains
                ):
                    floor = 0
                else:
                    floor = min((counts.get(d, 0) for d in eligible), default=0)
                selfsel = cls.self_selecting[id(g)]
                ok = [d for d in doms if counts.get(d, 0) + selfsel - floor <= g.max_skew]
                if g.key != L.HOSTNAME and eligible:
                    ok = [d for d in ok if d in eligible]
                if not ok:
                    return Failure(f"{g.describe()} would be violated", g.key == L.HOSTNAME)
                least = min(counts.get(d, 0) for d in ok)
                ok = [d for d in ok if counts.get(d, 0) == least]
                pin.add(g.key)
            elif g.kind == AFFINITY:
                if any(c > 0 for c in counts.values()):
                    ok = [d for d in doms if counts.get(d, 0) > 0]
                elif cls.self_selecting[id(g)]:
                    ok = list(doms)
                else:
                    return Failure(f"{g.describe()}: no matching pod is running or planned", False)
                if not ok:
                    return Failure(f"{g.describe()}: not in a domain with a matching pod", False)
                pin.add(g.key)
            else:  # ANTI
                ok = [d for d in doms if counts.get(d, 0) == 0]
                if not ok:
                    return Failure(f"{g.describe()} would be violated", True)
                pin.add(g.key)
            allowed[g.key] = ok
        for g in cls.inverse:
            if not g.owner_domains:
                continue
            doms = allowed.get(g.key)
            if doms is None:
                doms = self._claim_domains(t, g.key, reqs)
                if doms is None:
                    continue
            ok = [d for d in doms if d not in g.owner_domains]
            if not ok:
                return Failure(f"anti-affinity of a pod already placed ({g.describe()})", True)
            allowed[g.key] = ok
        extra: list[Requirement] = []
        for key, doms in allowed.items():
            if key == L.HOSTNAME:
                continue
            if key in pin and len(doms) > 1:
                doms = [min(doms, key=lambda d: (self._domain_price(t, key, reqs, d), d))]
            current = reqs.get(key)
            wanted = frozenset(doms)
            if current is not None and not current.complement and current.values == wanted:
                continue
            extra.append(Requirement(key, False, wanted))
        if not extra:
            return reqs
        narrowed = reqs.with_requirements(extra)
        return narrowed

    def _record(self, cls: PodClass, pod: Pod, t: Target) -> None:
        if not cls.matching and not cls.owned_anti:
            return
        domains: dict[str, list[str]] = {}
        for g in cls.matching + cls.owned_anti:
            if g.key not in domains:
                d = self._claim_domains(t, g.key, t.requirements)
                domains[g.key] = d or []
        self.topology.record(pod, cls.matching, cls.owned_anti, domains)

    # --------------------------------------------------------------- adding

    def _try_existing(self, cls: PodClass, pod: Pod, t: ExistingTarget) -> Failure | None:
        if untolerated(t.taints, cls.tolerations) is not None:
            return Failure("taint not tolerated", True)
        if cls.host_ports and ports_conflict(t.host_ports, cls.host_ports):
            return Failure("host port in use", True)
        if t.requirements.compatible(cls.reqs, self.allow_undefined) is not None:
            return Failure("labels do not match", True)
        need = vec_add(t.used, cls.vec)
        if not vec_fits(need, t.allocatable):
            return Failure("not enough room", True)
        topo = self._topology(cls, t, t.requirements)
        if isinstance(topo, Failure):
            return topo
        t.used = need
        t.pods.append(pod)
        t.new_pods.append(pod)
        t.host_ports.update(cls.host_ports)
        self._record(cls, pod, t)
        return None

    def _types_for(self, pool: PoolView, reqs: Requirements) -> list[InstanceType]:
        key = (id(pool), self._sig(reqs))
        types = self._pool_types.get(key)
        if types is None:
            types = [
                it
                for it in pool.instance_types
                if instance_type_compatible(it, reqs, self.instance_keys, self.offers)
            ]
            self._pool_types[key] = types
        return types

    def _fit(self, types: list[InstanceType], need: list[int]) -> list[InstanceType]:
        vec = self._alloc_vec
        return [it for it in types if vec_fits(need, vec(it))]

    def _alloc_vec(self, it: InstanceType) -> list[int]:
        v = self._alloc_cache.get(it.name)
        if v is None:
            v = self.vec(it.allocatable)
            self._alloc_cache[it.name] = v
        return v

    def _try_claim(self, cls: PodClass, pod: Pod, c: ClaimTarget) -> Failure | None:
        pool = c.pool
        assert pool is not None
        tol = cls.pool_cache.get(id(pool))
        if tol is None:
            tol = untolerated(pool.taints, cls.tolerations) is None
            cls.pool_cache[id(pool)] = tol
        if not tol:
            return Failure("taint not tolerated", True)
        if cls.host_ports and ports_conflict(c.host_ports, cls.host_ports):
            return Failure("host port in use", True)
        reqs = self._merge(c.requirements, cls.reqs)
        if isinstance(reqs, Failure):
            return reqs
        topo = self._topology(cls, c, reqs)
        if isinstance(topo, Failure):
            return topo
        need = vec_add(c.used, cls.vec)
        types = c.types
        target = c.target
        if topo is not c.requirements:
            types = self._narrow_types(types, topo)
            if target is not None and target not in types:
                target = None
        if target is not None and not vec_fits(need, c.cap):
            return Failure("claim is full", topo is reqs)
        fitting = self._fit_lazy(types, need)
        if fitting is None:
            return Failure("no instance type has room", topo is reqs)
        if target is None:
            target = self._target(fitting, topo, need)
        if pool.min_values:
            fitting = self._fit(fitting, need)
            if min_values_shortfall(fitting, topo, pool.min_values):
                return Failure("minValues not met", topo is reqs)
        c.requirements = topo
        c.types = fitting
        if target is not c.target:
            c.target = target
            c.cap = self._alloc_vec(target)
        c.used = need
        c.pods.append(pod)
        self._placed_class[id(pod)] = cls
        c.host_ports.update(cls.host_ports)
        if pool.remaining is not None:
            self._rereserve(c)
        self._record(cls, pod, c)
        return None

    def _merge(self, a: Requirements, b: Requirements) -> Requirements | Failure:
        """a ∩ b, memoised; returns ``a`` itself when b adds nothing, so identity means equal."""
        key = (id(a), id(b))
        hit = self._merged.get(key)
        if hit is not None and hit[0] is a and hit[1] is b:
            return hit[2]  # type: ignore[return-value]
        why = a.compatible(b, self.allow_undefined)
        result: Requirements | Failure
        if why is not None:
            result = Failure(f"requirements conflict: {why}", True)
        else:
            merged = a.with_requirements(b)
            result = a if all(merged[k] == a.get(k) for k in merged) else merged
        self._merged[key] = (a, b, result)
        return result

    def _narrow_types(self, types: list[InstanceType], reqs: Requirements) -> list[InstanceType]:
        key = (id(types), self._sig(reqs))
        hit = self._narrowed.get(key)
        if hit is not None and hit[0] is types:
            return hit[1]
        out = [
            it
            for it in types
            if instance_type_compatible(it, reqs, self.instance_keys, self.offers)
        ]
        self._narrowed[key] = (types, out)
        return out

    def _target(
        self, types: list[InstanceType], reqs: Requirements, need: list[int]
    ) -> InstanceType:
        """The type a claim is filled toward: the best price per unit of the workload's mix.

        A type's worth is how many copies of the pending pods' aggregate request mix its
        allocatable holds (its binding resource decides); among types within 3% of the best
        price for that worth, the largest wins, so fewer nodes carry the same pods. Filling
        every claim to the largest type instead (what first-fit alone does) buys the few
        biggest sizes, whose prices are rarely the best.
        """
        key = (id(types), self._sig(reqs), tuple(need))
        hit = self._targets.get(key)
        if hit is not None and hit[0] is types:
            return hit[1]
        prices = self.offers.price_map(reqs)
        demand = self._demand
        scored: list[tuple[float, float, InstanceType]] = []
        for it in types:
            alloc = self._alloc_vec(it)
            if not vec_fits(need, alloc):
                continue
            price = prices.get(it.name)
            if price is None:
                continue
            worth = min(
                (alloc[i] / demand[i] for i in range(len(demand)) if demand[i] > 0),
                default=1.0,
            )
            if worth <= 0:
                continue
            scored.append((price / worth, worth, it))
        if not scored:
            best = types[0]
        else:
            floor = min(s[0] for s in scored)
            best = max(
                (s for s in scored if s[0] <= floor * 1.03), key=lambda s: (s[1], s[2].name)
            )[2]
        self._targets[key] = (types, best)
        return best

    def _fit_lazy(self, types: list[InstanceType], need: list[int]) -> list[InstanceType] | None:
        """Drop leading types that cannot hold ``need`` (they never will again); None if none can.

        Types are kept largest first, so the first type usually fits and nothing is scanned;
        types further down are checked when a claim is finalised.
        """
        vec = self._alloc_vec
        for i, it in enumerate(types):
            if vec_fits(need, vec(it)):
                return types if i == 0 else types[i:]
        return None

    def _rereserve(self, c: ClaimTarget) -> None:
        pool = c.pool
        assert pool is not None and pool.remaining is not None
        cap = self._capacity_vec(c.types)
        if c.reserved is not None:
            pool.remaining = [r + x for r, x in zip(pool.remaining, c.reserved, strict=True)]
        pool.remaining = [r - x for r, x in zip(pool.remaining, cap, strict=True)]
        c.reserved = cap

    def _capacity_vec(self, types: list[InstanceType]) -> list[int]:
        """The most a claim could take from its pool's limits: the max capacity of its types."""
        out = [0] * (len(self.dims) + 1)
        for it in types:
            for i, d in enumerate(self.dims):
                v = it.capacity.get(d, 0)
                if v > out[i]:
                    out[i] = v
        out[-1] = 1000  # one node
        return out

    def _within_limits(self, pool: PoolView, it: InstanceType) -> bool:
        if pool.remaining is None:
            return True
        for i, d in enumerate(self.dims):
            if it.capacity.get(d, 0) > pool.remaining[i]:
                return False
        for k, v in pool.other_limits.items():
            if it.capacity.get(k, 0) > v:
                return False
        return pool.remaining[-1] >= 1000

    def _new_claim(self, cls: PodClass, pod: Pod, pool: PoolView) -> str | None:
        if untolerated(pool.taints, cls.tolerations) is not None:
            t = untolerated(pool.taints, cls.tolerations)
            assert t is not None
            return f"nodepool {pool.name}: taint {t.describe()} is not tolerated"
        why = pool.requirements.compatible(cls.reqs, self.allow_undefined)
        if why is not None:
            return f"nodepool {pool.name}: {why}"
        reqs = pool.requirements.with_requirements(cls.reqs)
        types = self._types_for(pool, reqs)
        if not types:
            return (
                f"nodepool {pool.name}: no instance type has an available offering "
                f"matching {_describe(reqs)}"
            )
        need = vec_add(pool.daemon_overhead, cls.vec)
        fit_key = (id(types), tuple(need))
        hit = self._fitted.get(fit_key)
        if hit is not None and hit[0] is types:
            fitting = hit[1]
        else:
            fitting = sorted(self._fit(types, need), key=self._size_key, reverse=True)
            self._fitted[fit_key] = (types, fitting)
        if not fitting:
            overhead = dict(zip(self.dims, pool.daemon_overhead, strict=True))
            plus = f" plus daemonset overhead {_fmt(overhead)}" if any(overhead.values()) else ""
            return (
                f"nodepool {pool.name}: no instance type fits requests {_fmt(cls.requests)}{plus}"
            )

        if pool.remaining is not None:
            fitting = [it for it in fitting if self._within_limits(pool, it)]
            if not fitting:
                return f"nodepool {pool.name}: limits would be exceeded"
        self._claim_seq += 1
        hostname = f"hostname-placeholder-{self._claim_seq:05d}"
        claim = ClaimTarget(
            hostname=hostname,
            requirements=pool.requirements,
            taints=pool.taints,
            used=list(pool.daemon_overhead),
            host_ports=set(pool.daemon_ports),
            pool=pool,
            types=fitting,
            index=self._claim_seq,
        )
        failure = self._try_claim(cls, pod, claim)
        if failure is not None:
            if failure.reason == "minValues not met":
                short = min_values_shortfall(self._fit(claim.types, need), reqs, pool.min_values)
                return f"nodepool {pool.name}: {short}"
            return f"nodepool {pool.name}: {failure.reason}"
        self.claims.append(claim)
        self.targets.append(claim)
        return None

    def _size_key(self, it: InstanceType) -> tuple[int, ...]:
        return tuple(self._alloc_vec(it))

    # ------------------------------------------------------------ main loop

    def _place(self, pod: Pod, cls: PodClass) -> str | None:
        """Place a pod; returns None on success, else the reason it fits nowhere."""
        cands = cls.candidates
        if cls.cursor < len(self.targets):
            cands.extend(self.targets[cls.cursor :])
            cls.cursor = len(self.targets)
        i = 0
        while i < len(cands):
            t = cands[i]
            if isinstance(t, ClaimTarget):
                f = self._try_claim(cls, pod, t)
            else:
                assert isinstance(t, ExistingTarget)
                f = self._try_existing(cls, pod, t)
            if f is None:
                return None
            if f.monotone:
                del cands[i]
            else:
                i += 1
        reasons = []
        for pool in self.pools:
            why = self._new_claim(cls, pod, pool)
            if why is None:
                cls.cursor = len(self.targets)
                cands.append(self.targets[-1])
                return None
            reasons.append(why)
        if not self.pools:
            return "no NodePool exists and no existing node has room"
        return "; ".join(reasons)

    def _relax(self, pod: Pod, s: RelaxState) -> RelaxState | None:
        if s.term + 1 < len(pod.required_terms):
            return replace(s, term=s.term + 1)
        if s.pref_affinity_dropped < len(pod.preferred_affinity):
            return replace(s, pref_affinity_dropped=s.pref_affinity_dropped + 1)
        if s.pref_anti_dropped < len(pod.preferred_anti_affinity):
            return replace(s, pref_anti_dropped=s.pref_anti_dropped + 1)
        if s.pref_node_dropped < len(pod.preferred_terms):
            return replace(s, pref_node_dropped=s.pref_node_dropped + 1)
        if not s.schedule_anyway_dropped and any(not sp.hard for sp in pod.spreads):
            return replace(s, schedule_anyway_dropped=True)
        if not s.tolerate_prefer_no_schedule:
            return replace(s, tolerate_prefer_no_schedule=True)
        return None

    def _schedule(self, pod: Pod) -> str | None:
        state = self.states.get(id(pod), RelaxState())
        while True:
            cls = self._pod_class(pod, state)
            reason = self._place(pod, cls)
            if reason is None:
                self.states[id(pod)] = state
                return None
            nxt = self._relax(pod, state)
            if nxt is None:
                self.states[id(pod)] = state
                return reason
            state = nxt

    def solve(self) -> Plan:
        cpu = sum(it.allocatable.get(CPU, 0) for it in self.problem.instance_types)
        mem = sum(it.allocatable.get(MEMORY, 0) for it in self.problem.instance_types)
        self._memory_per_cpu = mem / cpu if cpu else 0.0
        demand = [0] * len(self.dims)
        for p in self.problem.pending:
            for i, v in enumerate(self.vec(p.requests)):
                demand[i] += v
        self._demand = demand
        self._existing()
        self._declare_groups()
        self._bound_pods_topology()
        pending = [p for p in self.problem.pending if p.key not in self.problem.rejected]
        unschedulable = dict(self.problem.rejected)
        queue = []
        for p in pending:
            if p.invalid:
                unschedulable[p.key] = p.invalid
            else:
                queue.append(p)
        if self.order == "balanced":
            queue = self._balanced_order(queue)
        else:
            queue.sort(key=lambda p: (-p.requests.get(CPU, 0), -p.requests.get(MEMORY, 0), p.key))
        failed: list[tuple[Pod, str]] = []
        for p in queue:
            why = self._schedule(p)
            if why is not None:
                failed.append((p, why))
        # Pods that failed may fit now that others placed (pod affinity); retry until stable.
        while failed:
            retry, failed = failed, []
            for p, _ in retry:
                self.states.pop(id(p), None)
                why = self._schedule(p)
                if why is not None:
                    failed.append((p, why))
            if len(failed) == len(retry):
                break
        for p, why in failed:
            unschedulable[p.key] = why
        scheduled = [p for p in queue if p.key not in unschedulable]
        if self.order == "balanced":
            self._fill_slack()
        claims = [self._finalize(c) for c in self.claims if c.pods]
        existing = {t.name: list(t.new_pods) for t in self.existing if t.new_pods}
        return Plan(claims, existing, unschedulable, scheduled)

    def _balanced_order(self, pods: list[Pod]) -> list[Pod]:
        """Largest first, zipped from cpu-heavy and memory-heavy pods to keep the mix even.

        Pods are sorted by size (cpu and memory weighed by how the catalog sells them), then
        split by which resource dominates; the queue takes the next pod from whichever side
        brings the running cpu:memory mix back toward the catalog's. Claims are filled in
        queue order, so each ends up with a mix its instance types can hold without paying for
        an idle resource. (Karpenter sorts by cpu, then memory, which puts the cpu-heavy pods
        on the first nodes and the memory-heavy ones on the last: both half-used.)
        """
        ordered = sorted(pods, key=self._order_key)
        k = self._memory_per_cpu
        cpu_heavy = [p for p in ordered if p.requests.get(CPU, 0) * k >= p.requests.get(MEMORY, 0)]
        mem_heavy = [p for p in ordered if p.requests.get(CPU, 0) * k < p.requests.get(MEMORY, 0)]
        out: list[Pod] = []
        i = j = 0
        balance = 0.0
        while i < len(cpu_heavy) or j < len(mem_heavy):
            take_cpu = j >= len(mem_heavy) or (i < len(cpu_heavy) and balance <= 0)
            p = cpu_heavy[i] if take_cpu else mem_heavy[j]
            if take_cpu:
                i += 1
            else:
                j += 1
            balance += p.requests.get(CPU, 0) * k - p.requests.get(MEMORY, 0)
            out.append(p)
        return out

    def _order_key(self, p: Pod) -> tuple[object, ...]:
        """Largest first, where size weighs cpu and memory by how the catalog sells them.

        Karpenter sorts by cpu, then memory; that puts cpu-heavy pods together on the first
        nodes and memory-heavy ones on the last, and both kinds of node end up half empty in
        the other resource. Weighing both keeps every node's mix close to the catalog's.
        """
        size = p.requests.get(CPU, 0) * self._memory_per_cpu + p.requests.get(MEMORY, 0)
        return (-size, -p.requests.get(CPU, 0), p.namespace, p.owner_name or "", p.name)

    # ------------------------------------------------------------- results

    def _cheapest_room(self, c: ClaimTarget) -> list[int] | None:
        """Allocatable of the cheapest type that holds the claim's pods (what it will cost)."""
        for _, _, alloc in self._price_order(c.types, c.requirements):
            if all(map(le, c.used, alloc)):
                return alloc
        return None

    def _size(self, vec: list[int]) -> float:
        return vec[0] * self._memory_per_cpu + vec[1]

    @staticmethod
    def _flexible(cls: PodClass) -> bool:
        """Pods no topology rule mentions and with no host ports: moving them changes no count."""
        return not (cls.own or cls.matching or cls.owned_anti or cls.inverse or cls.host_ports)

    def _fill_slack(self) -> None:
        """Move unconstrained pods into the room claims pay for anyway.

        A claim costs its cheapest type that holds its pods, which is usually a little more
        than they need (most of all on claims that hostname rules keep small). Pods no
        topology rule mentions move from the claims holding them into that room when the
        receiving claim accepts them without narrowing; the receiver's price is unchanged
        and the giver's can only drop, so the plan never gets dearer. Pools with limits are
        left alone: a giver's type list grows again, which would move its reservation.
        """
        claims = [c for c in self.claims if c.pool is not None and c.pool.remaining is None]
        donors: list[tuple[ClaimTarget, dict[int, tuple[PodClass, list[Pod]]]]] = []
        for c in claims:
            groups: dict[int, tuple[PodClass, list[Pod]]] = {}
            for p in c.pods:
                cls = self._placed_class.get(id(p))
                if cls is not None and self._flexible(cls):
                    groups.setdefault(id(cls), (cls, []))[1].append(p)
            if groups:
                donors.append((c, groups))
        if not donors:
            return
        donors.sort(key=lambda d: (-sum(len(v[1]) for v in d[1].values()), d[0].index))
        for i, (donor, groups) in enumerate(donors):  # largest pods first within each donor
            donors[i] = (
                donor,
                dict(sorted(groups.items(), key=lambda kv: -self._size(kv[1][0].vec))),
            )
        before = {id(d): self._full_price(d) for d, _ in donors}
        moves: dict[int, list[tuple[ClaimTarget, Pod, PodClass]]] = {}
        for target in sorted(claims, key=lambda c: c.index):
            room = self._cheapest_room(target)
            if room is None:
                continue
            for donor, groups in donors:
                if donor is target:
                    continue
                for cls, pods in groups.values():
                    if not pods or not self._accepts(target, cls):
                        continue
                    while pods and all(map(le, vec_add(target.used, cls.vec), room)):
                        pod = pods.pop()
                        donor.pods.remove(pod)
                        donor.used = [a - b for a, b in zip(donor.used, cls.vec, strict=True)]
                        target.used = vec_add(target.used, cls.vec)
                        target.pods.append(pod)
                        moves.setdefault(id(donor), []).append((target, pod, cls))
        for donor, _ in donors:
            log = moves.get(id(donor))
            if not log:
                continue
            if self._full_price(donor) < before[id(donor)] - 1e-9:
                # Fewer pods: types dropped earlier may hold them again; list them all.
                assert donor.pool is not None
                types = self._types_for(donor.pool, donor.requirements)
                donor.types = sorted(self._fit(types, donor.used), key=self._size_key, reverse=True)
                continue
            for target, pod, cls in reversed(log):  # no cheaper: put everything back
                target.pods.remove(pod)
                target.used = [a - b for a, b in zip(target.used, cls.vec, strict=True)]
                donor.pods.append(pod)
                donor.used = vec_add(donor.used, cls.vec)

    def _full_price(self, c: ClaimTarget) -> float:
        """What the claim would cost if every type of its pool that holds its pods were listed."""
        assert c.pool is not None
        types = self._types_for(c.pool, c.requirements)
        for price, _, alloc in self._price_order(types, c.requirements):
            if all(map(le, c.used, alloc)):
                return price
        return float("inf")

    def _accepts(self, c: ClaimTarget, cls: PodClass) -> bool:
        assert c.pool is not None
        if c.pool.min_values or untolerated(c.pool.taints, cls.tolerations) is not None:
            return False
        return self._merge(c.requirements, cls.reqs) is c.requirements

    def _price_order(
        self, types: list[InstanceType], reqs: Requirements
    ) -> list[tuple[float, InstanceType, list[int]]]:
        """Types with an allowed offering, cheapest first (ties by name), memoised per list."""
        key = (id(types), reqs.get(L.ZONE), reqs.get(L.CAPACITY_TYPE))
        hit = self._orders.get(key)
        if hit is not None and hit[0] is types:
            return hit[1]
        prices = self.offers.price_map(reqs)
        order = sorted(
            ((prices[it.name], it.name, it) for it in types if it.name in prices),
            key=lambda x: (x[0], x[1]),
        )
        out = [(p, it, self._alloc_vec(it)) for p, _, it in order]
        self._orders[key] = (types, out)
        return out

    def _finalize(self, c: ClaimTarget) -> PlannedClaim:
        assert c.pool is not None
        reqs = c.requirements
        need = c.used
        listed: list[InstanceType] = []
        price = 0.0
        for p, it, alloc in self._price_order(c.types, reqs):
            if all(map(le, need, alloc)):
                if not listed:
                    price = p
                listed.append(it)
                if len(listed) == MAX_INSTANCE_TYPES:
                    break
        universe = (len(self.universe.get(L.ZONE, ())), len(self.universe.get(L.CAPACITY_TYPE, ())))
        zones, cts = self.offers.zones_and_types(listed, reqs, universe)
        out_reqs = Requirements(r for k, r in reqs.items() if k != L.HOSTNAME).with_requirements(
            [
                Requirement(L.INSTANCE_TYPE, False, frozenset(it.name for it in listed)),
                Requirement(L.ZONE, False, zones),
                Requirement(L.CAPACITY_TYPE, False, cts),
            ]
        )
        requests = dict(zip(self.dims, c.used, strict=True))
        return PlannedClaim(
            nodepool=c.pool.name,
            instance_types=listed,
            requirements=out_reqs,
            zones=sorted(zones),
            capacity_types=sorted(cts),
            price=price,
            requests={k: v for k, v in requests.items() if v},
            pods=list(c.pods),
        )


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


def _fmt(res: Resources) -> str:
    return "{" + ", ".join(f"{k}={v}" for k, v in render(res).items() if res.get(k)) + "}"


def _describe(reqs: Requirements) -> str:
    return ", ".join(r.describe() for k, r in sorted(reqs.items()) if k != L.HOSTNAME)


def solve(problem: Problem, order: str = "balanced") -> Plan:
    return Solver(problem, order).solve()
