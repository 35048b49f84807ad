"""Topology domains: which zones / hostnames a pod class may use, and how spread,
affinity and anti-affinity narrow a target's requirements when a pod is placed on it.
"""

from __future__ import annotations

from models import labels as L
from models.instancetype import InstanceType
from models.requirements import Requirement, Requirements
from scheduling.pods import Pod, SpreadConstraint
from scheduling.solving.podclass import PodClass
from scheduling.solving.tallies import counts_once
from scheduling.solving.view import ProblemView
from scheduling.taints import Toleration, untolerated
from scheduling.targets import (
    ClaimTarget,
    ExistingTarget,
    Failure,
    Target,
    instance_type_compatible,
    undefined_allowed,
    vec_fits,
)
from scheduling.topology import AFFINITY, ANTI, SPREAD, Topology, TopologyGroup


class TopologyDomains:
    """The run's topology groups (``Topology``: their counts and the domains anti-affinity
    owners hold) and what they allow: which domains a pod class may use on a target, and
    how placing it narrows the target's requirements."""

    def __init__(self, view: ProblemView) -> None:
        self.view = view
        self.catalog = view.catalog
        self.pools = view.pools
        self.allow_undefined = view.allow_undefined
        self.instance_keys = view.instance_keys
        self.offers = view.offers
        self.label_values = view.label_values
        self._sig = view.sig
        self.nodes = view.schedulable  # the existing nodes, whose labels and taints never change
        self.topology = Topology(view.namespace_labels)
        self._eligible: dict[tuple[object, ...], set[str]] = {}
        self._offered_doms: dict[
            tuple[int, int, str], tuple[list[InstanceType], Requirements, list[str]]
        ] = {}
        self._pinning: dict[int, tuple[PodClass, tuple[str, ...]]] = {}
        self._stays: dict[
            tuple[int, int, int], tuple[list[InstanceType], Requirements, InstanceType, bool]
        ] = {}
        self._narrowings: dict[
            tuple[int, tuple[object, ...]], tuple[Requirements, Requirements]
        ] = {}
        self._domains_of: dict[str, set[str]] = {}

    def declare_groups(self) -> None:
        """Create every group the pending pods can use, before anything is counted."""
        topology = self.topology
        for p in self.view.problem.pending:
            for s in p.spreads:
                topology.spread_group(p, s)
            for t in p.affinity:
                topology.affinity_group(p, t, anti=False)
            for _, t in p.preferred_affinity:
                topology.affinity_group(p, t, anti=False)
            for t in p.anti_affinity:
                topology.affinity_group(p, t, anti=True)
            for _, t in p.preferred_anti_affinity:
                topology.affinity_group(p, t, anti=True)

    def count_bound_pods(self) -> None:
        """Count pods already running, and let their anti-affinity block domains."""
        facts = self.view.facts()
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

    def eligible_domains(
        self,
        reqs: Requirements,
        tolerations: tuple[Toleration, ...],
        key: str,
        honor_affinity: bool,
        honor_taints: bool,
    ) -> set[str]:
        """Domains a spread counts: those a compatible pool or node can provide to a pod
        whose node selector and one required node-affinity term are ``reqs``."""
        ck = (self._sig(reqs), tolerations, key, honor_affinity, honor_taints)
        hit = self._eligible.get(ck)
        if hit is None:
            hit = self._compute_eligible(reqs, tolerations, key, honor_affinity, honor_taints)
            self._eligible[ck] = hit
        return hit

    def _pool_domains(
        self,
        reqs: Requirements,
        tolerations: tuple[Toleration, ...],
        key: str,
        honor_affinity: bool,
        honor_taints: bool,
    ) -> frozenset[str]:
        """The domains the pools can provide to the class (see ``_compute_eligible``): they
        depend on the catalog and pools alone, so they are kept across solves."""
        pools = tuple((p.name, self._sig(p.requirements), p.taints) for p in self.pools)
        ck = (self._sig(reqs), tolerations, key, honor_affinity, honor_taints, pools)
        return self.catalog.pool_domains(
            ck,
            [p.instance_types for p in self.pools],
            lambda: self._compute_pool_domains(
                reqs, tolerations, key, honor_affinity, honor_taints
            ),
        )

    def _compute_pool_domains(
        self,
        reqs: Requirements,
        tolerations: tuple[Toleration, ...],
        key: str,
        honor_affinity: bool,
        honor_taints: bool,
    ) -> frozenset[str]:
        out: set[str] = set()
        for pool in self.pools:
            if honor_taints and untolerated(pool.taints, tolerations) is not None:
                continue
            if honor_affinity and pool.requirements.compatible(reqs, self.allow_undefined):
                continue
            merged = (
                pool.requirements.with_requirements(reqs) if honor_affinity else pool.requirements
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
        return frozenset(out)

    def _compute_eligible(
        self,
        reqs: Requirements,
        tolerations: tuple[Toleration, ...],
        key: str,
        honor_affinity: bool,
        honor_taints: bool,
    ) -> set[str]:
        """Domains a spread counts. nodeTaintsPolicy Ignore (the default) counts domains of
        pools whose taints the pod does not tolerate; Honor leaves them out.

        Every node of the problem defines domains, not only those pods may land on: the
        kube-scheduler counts a full, cordoned or otherwise untargeted node's domain (with
        its count, perhaps 0) all the same, and a consolidation simulation passes the nodes
        with no room as counts only."""
        out = set(self._pool_domains(reqs, tolerations, key, honor_affinity, honor_taints))
        for t in self.view.problem.nodes:
            v = t.labels.get(key)
            if v is None or v in out:  # nothing to learn from this node
                continue
            undefined = undefined_allowed(t, self.allow_undefined)
            if honor_affinity and t.requirements.compatible(reqs, undefined):
                continue
            if honor_taints and untolerated(t.taints, tolerations) is not None:
                continue
            out.add(v)
        return out

    def claim_domains(self, t: Target, key: str, reqs: Requirements) -> list[str] | None:
        if key == L.HOSTNAME:
            return [t.hostname]
        if isinstance(t, ExistingTarget):
            v = t.labels.get(key)
            return None if v is None else [v]
        assert isinstance(t, ClaimTarget)
        if key in (L.ZONE, L.CAPACITY_TYPE):
            return self._offered_domains(t.types, reqs, key)
        r = reqs.get(key)
        if r is None:
            return None
        if not r.complement:
            return sorted(r.values)
        return sorted(v for v in self.label_values(key) if r.has(v))

    def _offered_domains(
        self, types: list[InstanceType], reqs: Requirements, key: str
    ) -> list[str]:
        """The zones (or capacity types) ``types`` are offered in under ``reqs``, sorted;
        memoised per (type list, requirements, key), as a claim is asked again by every pod
        that tries it while neither changes."""
        ck = (id(types), id(reqs), key)
        hit = self._offered_doms.get(ck)
        if hit is not None and hit[0] is types and hit[1] is reqs:
            return hit[2]
        universe = (
            len(self.label_values(L.ZONE)),
            len(self.label_values(L.CAPACITY_TYPE)),
        )
        zones, cts = self.offers.zones_and_types(types, reqs, universe)
        out = sorted(zones if key == L.ZONE else cts)
        self._offered_doms[ck] = (types, reqs, out)
        return out

    def full_whatever_pinned(
        self, cls: PodClass, c: ClaimTarget, reqs: Requirements, need: list[int]
    ) -> bool:
        """Whether ``Claims.try_claim`` is sure to fail here, and not for good, whatever domains the
        class's topology picks: a shortcut that skips working them out. Exact, because:

        * the claim's target cannot hold ``need`` and survives any narrowing of ``reqs`` to
          zones / capacity types the claim's types offer (it has an available offering in
          every such pair), so the claim stays full;
        * every rule of the class's own is a spread or affinity over zone or capacity type,
          and one of them pins a key ``reqs`` does not already pin to one value: the
          topology then either fails for now (spread and affinity failures over those keys
          are not monotone) or narrows ``reqs`` (so "claim is full" is not monotone either);
        * no anti-affinity of a placed pod can reject it (the inverse rules hold no domain).

        It holds for pools with limits or minValues too: the full path fails at "claim is
        full" (or in the topology) before it looks at either, and the claim's target and
        ``cap`` are what that path would compare. (A claim grown past its pool's limits has
        its target cleared while it is tried, so the shortcut stays out of the way there.)"""
        target = c.target
        if target is None or vec_fits(need, c.cap) or c.pool is None:
            return False
        keys = self._pinning_keys(cls)
        if not keys:
            return False
        for g in cls.inverse:
            if g.owner_domains:
                return False
        for key in keys:
            r = reqs.get(key)
            if r is None or r.complement or len(r.values) != 1:
                break
        else:
            return False
        return self._target_stays(c.types, reqs, target)

    def _pinning_keys(self, cls: PodClass) -> tuple[str, ...]:
        """The keys of the class's own rules when all are spreads or affinities over zone or
        capacity type (empty otherwise): see ``full_whatever_pinned``."""
        hit = self._pinning.get(id(cls))
        if hit is None or hit[0] is not cls:
            keys: tuple[str, ...] = ()
            if cls.own and all(
                g.kind in (SPREAD, AFFINITY) and g.key in (L.ZONE, L.CAPACITY_TYPE)
                for g, _ in cls.own
            ):
                keys = tuple(dict.fromkeys(g.key for g, _ in cls.own))
            hit = self._pinning[id(cls)] = (cls, keys)
        return hit[1]

    def _target_stays(
        self, types: list[InstanceType], reqs: Requirements, target: InstanceType
    ) -> bool:
        """``target`` is among ``types`` narrowed to ``reqs`` with zone and capacity type
        narrowed further to any of those the types offer under ``reqs``."""
        key = (id(types), id(reqs), id(target))
        hit = self._stays.get(key)
        if hit is not None and hit[0] is types and hit[1] is reqs and hit[2] is target:
            return hit[3]
        zones = self._offered_domains(types, reqs, L.ZONE)
        cts = self._offered_domains(types, reqs, L.CAPACITY_TYPE)
        stays = (
            bool(zones and cts)
            and target in types
            and instance_type_compatible(target, reqs, self.instance_keys, self.offers)
            and self.offers.offered_in_all(target, zones, cts)
        )
        self._stays[key] = (types, reqs, target, stays)
        return stays

    def _cheapest_domain(
        self,
        t: Target,
        key: str,
        reqs: Requirements,
        doms: list[str],
        need: list[int] | None = None,
    ) -> str:
        """Of ``doms``, the one whose cheapest offering is cheapest (ties by name), or the
        problem's zone hint when it is one of them. Given ``need`` (what the claim holds with
        the pod), only the types that hold it count, and a domain none of them is offered in
        is taken only if all are so: Karpenter keeps every domain the rules allow and the
        types that hold the pods decide the zone."""
        if not isinstance(t, ClaimTarget) or key not in (L.ZONE, L.CAPACITY_TYPE):
            return min(doms)
        hint = self.view.problem.zone_hint
        if need is None:
            if key == L.ZONE and hint in doms:
                return hint
            zones, cts = self.offers.offered(t.types, reqs)
        else:
            alloc = self.view.alloc_vec
            holding = [it for it in t.types if vec_fits(need, alloc(it))]
            zones, cts = self.offers.offered_once(holding, reqs)
            held = [d for d in doms if d in (zones if key == L.ZONE else cts)]
            if not held:
                return self._cheapest_domain(t, key, reqs, doms)
            if key == L.ZONE and hint in held:
                return hint
            doms = held
        prices = zones if key == L.ZONE else cts
        inf = float("inf")
        return min(doms, key=lambda d: (prices.get(d, inf), d))

    def _own_allowed(
        self,
        cls: PodClass,
        g: TopologyGroup,
        spread: SpreadConstraint | None,
        doms: list[str],
    ) -> list[str] | Failure:
        """The domains among ``doms`` one of the class's own rules allows now (for a spread,
        the least filled of them), or why none."""
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
                host = g.key == L.HOSTNAME
                return Failure(f"{g.describe()} would be violated", host, local=host)
            least = min(counts.get(d, 0) for d in ok)
            hint = self.view.problem.zone_hint
            if hint is None or g.key != L.ZONE:
                ok = [d for d in ok if counts.get(d, 0) == least]  # as Karpenter pins
            else:  # and the zone a consolidation asks for, within the skew
                ok = [d for d in ok if counts.get(d, 0) == least or d == hint]
        elif g.kind == AFFINITY:
            if any(c > 0 for c in counts.values()):
                ok = [d for d in doms if counts.get(d, 0) > 0]
            elif cls.self_selecting[id(g)]:
                ok = list(doms)
            else:
                return Failure(f"{g.describe()}: no matching pod is running or planned", False)
            if not ok:
                return Failure(f"{g.describe()}: not in a domain with a matching pod", False)
        else:  # ANTI
            ok = [d for d in doms if counts.get(d, 0) == 0]
            if not ok:
                host = g.key == L.HOSTNAME
                return Failure(f"{g.describe()} would be violated", True, local=host)
        return ok

    def closed_domains(self, cls: PodClass) -> list[tuple[str, set[str | None]]] | None:
        """Per topology key of the class's own rules over domains wider than a node (zone
        spread, zonal affinity and anti-affinity), the existing nodes' domains those rules rule
        out now (``None`` standing for a node without the label, unless only anti-affinity
        reads the key): ``topology_of`` fails on any node there. Valid until the next placement
        changes the counts, so the solver asks once per pod. Without it, every pod of a zonal
        class tries, one by one, every node of the zones its spread has closed."""
        wide = [(g, s) for g, s in cls.own if g.key != L.HOSTNAME]
        if not wide:
            return None
        closed: dict[str, set[str | None]] = {}
        for g, s in wide:
            out = closed.setdefault(g.key, set())
            if g.kind != ANTI:  # a node without the key takes no spread or affinity
                out.add(None)
            for v in self._existing_domains(g.key):
                if v not in out and isinstance(self._own_allowed(cls, g, s, [v]), Failure):
                    out.add(v)
        return list(closed.items())

    def _without_key(self, t: Target, key: str) -> bool:
        """Whether ``t``'s node will not carry the label ``key`` (``_claim_domains`` found no
        domain for it): an existing node lacks it; a claim's node lacks a key that is not
        well known and that no instance type defines (its pool's would be in its
        requirements). The kube-scheduler admits a pod's required anti-affinity on such a
        node, and Karpenter's anti-affinity domains start from DoesNotExist on the key."""
        return isinstance(t, ExistingTarget) or key not in self.allow_undefined

    def _existing_domains(self, key: str) -> set[str]:
        """The values the existing nodes carry for a label key."""
        hit = self._domains_of.get(key)
        if hit is None:
            hit = self._domains_of[key] = {
                v for t in self.nodes if (v := t.labels.get(key)) is not None
            }
        return hit

    def topology_of(
        self, cls: PodClass, t: Target, reqs: Requirements, need: list[int] | None = None
    ) -> Requirements | Failure:
        """``reqs`` narrowed to the domains the class's rules allow on ``t`` (a pinned key to
        one domain, ``_cheapest_domain``; ``need``: what a claim must then hold), or why
        none."""
        if not cls.own and not cls.inverse:
            return reqs
        allowed: dict[str, list[str]] = {}
        pin: set[str] = set()
        for g, spread in cls.own:
            doms = allowed.get(g.key)
            if doms is None:
                doms = self.claim_domains(t, g.key, reqs)
                if doms is None:
                    if g.kind == ANTI and self._without_key(t, g.key):
                        continue  # no domain, so none shared with a pod it must avoid
                    return Failure(
                        f"nodes here carry no {g.key} label for {g.describe()}", True, local=True
                    )
            ok = self._own_allowed(cls, g, spread, doms)
            if isinstance(ok, Failure):
                return ok
            pin.add(g.key)
            allowed[g.key] = ok
        for g in cls.inverse:
            if not g.owner_domains:
                continue
            doms = allowed.get(g.key)
            if doms is None:
                doms = self.claim_domains(t, g.key, reqs)
                if doms is None:
                    continue
            ok = [d for d in doms if d not in g.owner_domains]
            if not ok:
                return Failure(
                    f"anti-affinity of a pod already placed ({g.describe()})",
                    True,
                    local=g.key == L.HOSTNAME,
                )
            allowed[g.key] = ok
        extra: list[Requirement] = []
        for key, doms in allowed.items():
            if key == L.HOSTNAME:
                continue
            if key in pin and len(doms) > 1:
                doms = [self._cheapest_domain(t, key, reqs, doms, need)]
            current = reqs.get(key)
            wanted = frozenset(doms)
            if current is not None and not current.complement and current.values == wanted:
                continue
            extra.append(Requirement(key, False, wanted))
        if not extra:
            return reqs
        return self._narrowed_by(reqs, tuple(extra))

    def _narrowed_by(self, reqs: Requirements, extra: tuple[Requirement, ...]) -> Requirements:
        """``reqs`` narrowed by ``extra``, one object per distinct pair: the same narrowing
        then hits every cache keyed by identity (``_sig``, ``_narrow_types``, the offer
        index) instead of building and sorting a new Requirements for each try."""
        key = (id(reqs), extra)
        hit = self._narrowings.get(key)
        if hit is not None and hit[0] is reqs:
            return hit[1]
        narrowed = reqs.with_requirements(extra)
        self._narrowings[key] = (reqs, narrowed)
        return narrowed

    def record(self, cls: PodClass, pod: Pod, t: Target) -> None:
        """Count a pod placed on ``t`` in the groups that select it or that it owns."""
        if not cls.matching and not cls.owned_anti:
            return
        domains: dict[str, list[str]] = {}
        for g in cls.matching + cls.owned_anti:
            if g.key not in domains:
                d = self.claim_domains(t, g.key, t.requirements)
                domains[g.key] = d or []
        self.topology.record(pod, cls.matching, cls.owned_anti, domains)
