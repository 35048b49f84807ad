"""Placement on NodeClaims: opening a claim from a NodePool (within its limits) and adding a
pod to an open claim, narrowing its instance types to those that still hold its pods.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import le

from models import labels as L
from models.instancetype import InstanceType
from models.requirements import Requirements
from models.resources import Resources, render
from scheduling.pods import Pod
from scheduling.solving.domains import TopologyDomains
from scheduling.solving.limits import PoolLimits
from scheduling.solving.podclass import PodClass
from scheduling.solving.rejections import PLACEHOLDER_PREFIX
from scheduling.solving.view import ProblemView
from scheduling.taints import untolerated
from scheduling.targets import (
    ClaimTarget,
    Failure,
    PoolView,
    Target,
    min_values_shortfall,
    min_values_unmet,
    ports_conflict,
    vec_add,
    vec_fits,
)

# What ``try_claim`` answers when the claim's target is full whatever the topology picks.
_FULL_FOR_NOW = Failure("claim is full", False)


# Why a claim's types, narrowed by the pod's topology, hold none that fits it.
_NO_ROOM = "no instance type has room"

# Told of every pod placed (the class, the pod, the target it joined).
Placed = Callable[[PodClass, Pod, Target], None]


class Claims:
    """The NodeClaims opened in this run (``open``, in creation order), and everything
    remembered about fitting pods into them."""

    def __init__(
        self,
        view: ProblemView,
        domains: TopologyDomains,
        limits: PoolLimits,
        targets: list[Target],
        placed: Placed,
    ) -> None:
        """``targets``: the run's targets, to which a claim opened here is added;
        ``placed``: told of every pod a claim takes."""
        self.view = view
        self.catalog = view.catalog
        self.dims = view.dims
        self.allow_undefined = view.allow_undefined
        self.instance_keys = view.instance_keys
        self.offers = view.offers
        self._sig = view.sig
        self._alloc_cache = view.alloc_vectors
        self._alloc_vec = view.alloc_vec
        self._size_key = view.size_key
        self._limits = limits
        self._capacity_of = limits.capacity_of
        self._no_larger_than = limits.no_larger_than
        self._reserve = limits.reserve
        self._full_whatever_pinned = domains.full_whatever_pinned
        self._topology_of = domains.topology_of
        self._targets_list = targets
        self._placed = placed
        self.open: list[ClaimTarget] = []
        self._claim_seq = 0
        self._relax_min_values = view.problem.policies.relax_min_values
        # The class each pod a claim took was placed as (what slack filling moves by).
        self.placed_class: dict[int, PodClass] = {}
        self._pool_types: dict[tuple[int, tuple[object, ...]], list[InstanceType]] = {}
        self._merged: dict[tuple[int, int], tuple[Requirements, Requirements, object]] = {}
        self._narrowed: dict[
            tuple[int, tuple[object, ...]], tuple[list[InstanceType], list[InstanceType]]
        ] = {}
        self._targets: dict[tuple[object, ...], tuple[list[InstanceType], InstanceType]] = {}
        self._fitted: dict[
            tuple[int, tuple[int, ...]], tuple[list[InstanceType], list[InstanceType]]
        ] = {}
        # Per (class, claim): the claim's parts when ``try_claim`` last found it full for the
        # class whatever the topology picks (``full_whatever_pinned``).
        self._full_for: dict[tuple[int, int], tuple[object, ...]] | None = None
        # What a type is worth to ``_target`` (copies of the pending pods' mix it holds), by
        # type, for the demand it was worked out for.
        self._worths: tuple[list[tuple[int, int]], dict[InstanceType, float]] | None = None
        # (pod class, claim index) pairs where growing the claim cannot help, for good.
        self._ungrowable: set[tuple[int, int]] = set()
        # (pod class, pool) → placements when no open claim of the pool could grow for it.
        self._growth_failed: dict[tuple[int, int], int] = {}
        # (claim index, its pods' usage, what the limits leave it) → (the pool's type list,
        # the types the claim could grow to): once a pool's limits are used up, every pod
        # refused a new claim asks each open claim the same question.
        self._widenings: dict[
            tuple[int, tuple[int, ...], tuple[int, ...]],
            tuple[list[InstanceType], list[InstanceType]],
        ] = {}

    def types_for(self, pool: PoolView, reqs: Requirements) -> list[InstanceType]:
        key = (id(pool), self._sig(reqs))
        types = self._pool_types.get(key)
        if types is None:
            types = self.compatible(pool.instance_types, reqs)
            self._pool_types[key] = types
        return types

    def compatible(self, types: list[InstanceType], reqs: Requirements) -> list[InstanceType]:
        return self.catalog.compatible(
            types, self._sig(reqs), reqs, self.instance_keys, self.offers
        )

    def fit(self, types: list[InstanceType], need: list[int]) -> list[InstanceType]:
        known = self._alloc_cache  # read inline: a call per type costs more than the test
        vec = self._alloc_vec
        return [it for it in types if all(map(le, need, known.get(it) or vec(it)))]

    def try_claim(self, cls: PodClass, pod: Pod, c: ClaimTarget) -> Failure | None:
        pool = c.pool
        assert pool is not None
        full_for = self._full_for
        if full_for is None:
            full_for = self._full_for = {}
        seen = full_for.get((id(cls), c.index))
        if (
            seen is not None
            and seen[0] is c.requirements
            and seen[1] is c.used
            and seen[2] is c.types
            and seen[3] is c.target
            and seen[4] is c.cap
            and seen[5] is cls
            and (not cls.inverse or not any(g.owner_domains for g in cls.inverse))
        ):
            # Nothing the answer reads has changed (each is replaced, never changed in place;
            # a class with host ports is never noted): the claim is still full for it. The
            # zone-spread replicas of a Deployment ask this of every claim they filled.
            return _FULL_FOR_NOW
        hit = cls.pool_cache.get(id(pool))
        if hit is None:
            hit = cls.pool_cache[id(pool)] = self._pool_refusal(cls, pool)
        if isinstance(hit, Failure):
            return hit
        if cls.host_ports and ports_conflict(c.host_ports, cls.host_ports):
            return Failure("host port in use", True)
        reqs = self.merge(c.requirements, cls.reqs)
        if isinstance(reqs, Failure):
            return reqs
        need = vec_add(c.used, cls.vec)
        if self._full_whatever_pinned(cls, c, reqs, need):
            if not cls.host_ports:
                full_for[(id(cls), c.index)] = (
                    c.requirements,
                    c.used,
                    c.types,
                    c.target,
                    c.cap,
                    cls,
                )
            return _FULL_FOR_NOW
        topo = self._topology_of(cls, c, reqs)
        if isinstance(topo, Failure):
            return topo
        narrowed = self._room_under(c, topo, reqs, need)
        if isinstance(narrowed, Failure) and narrowed.reason == _NO_ROOM and topo is not reqs:
            # The topology pinned a domain (a zone cheapest for the claim's types) where no
            # type that holds the pods is offered; ask again with the room needed. Only on
            # this failure, so a claim that takes the pod pays nothing more.
            again = self._topology_of(cls, c, reqs, need)
            if not isinstance(again, Failure) and again is not topo:
                topo, narrowed = again, self._room_under(c, again, reqs, need)
        if isinstance(narrowed, Failure):
            return narrowed
        target, fitting = narrowed
        if target is None:
            target = self._target(fitting, topo, need)
        if pool.tight and not pool.min_values:  # fewer types could break minValues
            fitting = self._no_larger_than(fitting, target, pool)
        min_values = c.min_values
        if pool.min_values:
            fitting = self.fit(fitting, need)
            wanted = pool.min_values if min_values is None else min_values
            unmet = min_values_unmet(fitting, topo, wanted)
            if unmet:
                if not self._relax_min_values:
                    return Failure("minValues not met", topo is reqs)
                # Karpenter's BestEffort: the claim keeps what its types still give.
                min_values = {**wanted, **unmet}
        c.min_values = min_values
        c.requirements = topo
        c.types = fitting
        if target is not c.target:
            c.target = target
            c.cap = self._alloc_vec(target)
        c.used = need
        c.pods.append(pod)
        self.placed_class[id(pod)] = cls
        c.host_ports.update(cls.host_ports)
        if pool.remaining is not None:
            self._reserve(c)
        self._placed(cls, pod, c)
        return None

    def _room_under(
        self, c: ClaimTarget, topo: Requirements, reqs: Requirements, need: list[int]
    ) -> tuple[InstanceType | None, list[InstanceType]] | Failure:
        """The claim's target if still among its types under ``topo`` (else None), and those
        types that may hold ``need``; or why the claim has no room for it."""
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
            return Failure(_NO_ROOM, topo is reqs)
        return target, fitting

    def _pool_refusal(self, cls: PodClass, pool: PoolView) -> Failure | bool:
        """Why no claim of ``pool`` can take the class, whatever pods it holds (False: none).

        Besides taints: a label the class requires (``In``, ``Exists``, ``Gt``, ``Lt``) must
        be one the pool or its instance types define, as for a new claim. An open claim's
        requirements hold every key its pods named, ``NotIn`` and ``DoesNotExist`` included,
        but those do not make the label exist: a node launched for them will not carry it."""
        if untolerated(pool.taints, cls.tolerations) is not None:
            return Failure("taint not tolerated", True)
        why = pool.requirements.compatible(cls.reqs, self.allow_undefined)
        if why is not None:
            return Failure(f"requirements conflict: {why}", True)
        return False

    def merge(self, a: Requirements, b: Requirements) -> Requirements | Failure:
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
        out = self.compatible(types, reqs)
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
        demanded = [(i, d) for i, d in enumerate(self.view.demand) if d > 0]
        worths = self._worths
        if worths is None or worths[0] != demanded:
            worths = self._worths = (demanded, {})
        worth_of = worths[1]  # per type: it depends on the type and the demand alone
        scored: list[tuple[float, float, InstanceType]] = []
        known = self._alloc_cache
        for it in types:
            alloc = known.get(it) or self._alloc_vec(it)
            if not all(map(le, need, alloc)):
                continue
            price = prices.get(it)
            if price is None:
                continue
            worth = worth_of.get(it)
            if worth is None:
                worth = worth_of[it] = min([alloc[i] / d for i, d in demanded]) if demanded else 1.0
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

    def new_claim(self, cls: PodClass, pod: Pod, pool: PoolView, placements: int) -> str | None:
        """Open a claim of ``pool`` for the pod (or, at the pool's limits, grow an open one);
        None on success, else why not. ``placements``: pods placed so far in the run."""
        if untolerated(pool.taints, cls.tolerations) is not None:
            t = untolerated(pool.taints, cls.tolerations)
            assert t is not None
            return f"nodepool {pool.name}: taint {t.describe()} is not tolerated"
        why = pool.requirements.compatible(cls.reqs, self.allow_undefined)
        if why is not None:
            return f"nodepool {pool.name}: {why}"
        reqs = pool.requirements.with_requirements(cls.reqs)
        types = self.types_for(pool, reqs)
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
            fitting = sorted(self.fit(types, need), key=self._size_key, reverse=True)
            self._fitted[fit_key] = (types, fitting)
        if not fitting:
            overhead = dict(zip(self.dims, pool.daemon_overhead, strict=True))
            plus = f" plus daemonset overhead {_fmt(overhead)}" if any(overhead.values()) else ""
            return (
                f"nodepool {pool.name}: no instance type fits requests {_fmt(cls.requests)}{plus}"
            )

        if pool.remaining is not None:
            allowed = self._limits.allowed(pool, fitting)
            if len(allowed) < len(fitting) and not pool.tight:
                self._limits.tighten(pool, self.open)
                allowed = self._limits.allowed(pool, fitting)
            if not allowed:
                if self._grow_open_claim(cls, pod, pool, placements):
                    return None
                return f"nodepool {pool.name}: limits would be exceeded"
            if len(allowed) < len(fitting):
                fitting = allowed
        self._claim_seq += 1
        hostname = f"{PLACEHOLDER_PREFIX}{self._claim_seq:05d}"
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
        failure = self.try_claim(cls, pod, claim)
        if failure is not None:
            if failure.reason == "minValues not met":
                short = min_values_shortfall(self.fit(claim.types, need), reqs, pool.min_values)
                return f"nodepool {pool.name}: {short}"
            return f"nodepool {pool.name}: {failure.reason}"
        self.open.append(claim)
        self._targets_list.append(claim)
        return None

    def _grow_open_claim(self, cls: PodClass, pod: Pod, pool: PoolView, placements: int) -> bool:
        """Add the pod to an open claim of a pool whose limits leave no room for a new claim,
        by letting the claim list larger types within what the limits leave plus what it
        holds back itself (Karpenter's claims take pods up to their largest type). Claims
        are tried in creation order; one that cannot take the class is not tried for it
        again, nor is the pool before another pod is placed somewhere (same state, same
        answer)."""
        tried = (id(cls), id(pool))
        if self._growth_failed.get(tried) == placements:
            return False
        for c in self.open:
            if c.pool is not pool or not c.pods:
                continue
            key = (id(cls), c.index)
            if key in self._ungrowable:
                continue
            saved = (c.types, c.target, c.cap)
            c.types = self.widened(c, self.types_for(pool, c.requirements))
            c.target = None  # fill toward the best type it may now list
            failure = self.try_claim(cls, pod, c)
            if failure is None:
                return True
            c.types, c.target, c.cap = saved
            if failure.monotone:
                self._ungrowable.add(key)
        self._growth_failed[tried] = placements
        return False

    def widened(self, c: ClaimTarget, types: list[InstanceType]) -> list[InstanceType]:
        """Of ``types``, largest first, those that hold the claim's pods and fit in what the
        pool's limits leave once the claim's own reservation is released. The claim's
        current types were reserved, so they are among them. Memoised per claim, usage and
        what is left: a pool at its limits is asked this by every pod it refuses."""
        pool = c.pool
        assert pool is not None and pool.remaining is not None and c.reserved is not None
        free = list(pool.remaining)
        for i in pool.limited:
            free[i] += c.reserved[i]
        key = (c.index, tuple(c.used), tuple(free))
        hit = self._widenings.get(key)
        if hit is not None and hit[0] is types:
            return hit[1]
        widened = self._widen(c, types, free)
        self._widenings[key] = (types, widened)
        return widened

    def _widen(
        self, c: ClaimTarget, types: list[InstanceType], free: list[int]
    ) -> list[InstanceType]:
        limited = c.pool.limited if c.pool is not None else ()
        kept = [
            it
            for it in self.fit(types, c.used)
            if all(self._capacity_of(it)[i] <= free[i] for i in limited)
        ]
        return sorted(kept, key=self._size_key, reverse=True)


def _fmt(res: Resources) -> str:
    return "{" + ", ".join(f"{k}={v}" for k, v in render(res).items() if res.get(k)) + "}"


def _describe(reqs: Requirements) -> str:
    return ", ".join(r.describe() for k, r in sorted(reqs.items()) if k != L.HOSTNAME)
