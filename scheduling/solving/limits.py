"""NodePool ``limits``: which instance types a new claim may use, and what each open claim
holds back from its pool, as Karpenter's scheduler accounts for them.

Karpenter starts from the pool's limits minus the capacity of the pool's existing and
in-flight nodes; a new claim may only list types whose capacity fits in what is left (for
every limited resource, and one node under a ``nodes`` limit); once opened, the claim holds
back the largest capacity among the types it lists, because the cloud provider may launch
any of them. Only the resources the pool limits are counted: a resource without a limit
has no budget to run out of (a finite stand-in for "unlimited" would be used up by the
claims of a catalog with 24 TiB types and refuse pods long before any real limit).

Here a claim's type list only shrinks as pods join it, so its reservation is recomputed
and can only fall, never below what the launched node can take.

Joinery fills a claim only toward its target type (solving/claims.py), so holding back its
largest type would waste the limit. Until the limits first narrow a new claim nothing
changes (the plan is the one made without limits); from then on the pool is *tight*: each
claim lists only the types no larger than its target in the limited resources and holds
back that much, which leaves room for more claims. When the limits leave no room for a new
claim at all, an open claim may still take the pod by listing larger types within what is
left plus what it holds back (claims.py, ``_grow_open_claim``).
"""

from __future__ import annotations

from collections.abc import Callable

from models.instancetype import InstanceType
from scheduling.solving.view import ProblemView
from scheduling.targets import NODE, ClaimTarget, PoolView


class PoolLimits:
    """Limit accounting over the pools' ``remaining`` vectors (see the module docstring):
    the pools' ``remaining`` and ``tight``, and each claim's ``reserved``, are written here
    only."""

    def __init__(self, view: ProblemView, changed: Callable[[], None]) -> None:
        """``changed``: told when a pool turns tight (a change placement attempts can see)."""
        self.dims = view.dims
        self._capacity_cache = view.capacity_vectors
        self._changed = changed
        self._largest: dict[
            tuple[int, tuple[int, ...], int], tuple[list[InstanceType], list[int]]
        ] = {}
        self._allowed_cache: dict[
            int, tuple[list[InstanceType], tuple[int, tuple[int, ...]], list[InstanceType]]
        ] = {}
        # (type list, target, limited resources) → (the list, its types no larger than the
        # target): ``no_larger_than`` after every pod a tight pool's claim takes.
        self._no_larger: dict[
            tuple[int, InstanceType, tuple[int, ...]], tuple[list[InstanceType], list[InstanceType]]
        ] = {}

    def capacity_of(self, it: InstanceType) -> list[int]:
        """The type's capacity per dimension, plus one node, as limits count it."""
        v = self._capacity_cache.get(it)
        if v is None:
            v = [it.capacity.get(d, 0) for d in self.dims]
            v.append(NODE)
            self._capacity_cache[it] = v
        return v

    def allowed(self, pool: PoolView, types: list[InstanceType]) -> list[InstanceType]:
        """The types a new claim of ``pool`` may list (``types`` itself when the limits
        exclude none). Memoised per list and what the limits leave: once a pool's limits are
        used up, every pod that tries it asks the same question."""
        remaining = pool.remaining
        assert remaining is not None
        left = tuple(remaining[i] for i in pool.limited)
        hit = self._allowed_cache.get(id(types))
        if hit is not None and hit[0] is types and hit[1] == (id(pool), left):
            return hit[2]
        largest = self._largest_capacity(types, pool)  # memoised per list
        if all(largest[i] <= remaining[i] for i in pool.limited):
            out = types
        else:
            out = [it for it in types if self._within_limits(pool, it)]
        self._allowed_cache[id(types)] = (types, (id(pool), left), out)
        return out

    def _within_limits(self, pool: PoolView, it: InstanceType) -> bool:
        """Whether a new claim of ``pool`` may list ``it``: it fits in every limited resource."""
        remaining = pool.remaining
        if remaining is None:
            return True
        cap = self.capacity_of(it)
        return all(cap[i] <= remaining[i] for i in pool.limited)

    def reserve(self, c: ClaimTarget) -> None:
        """Hold back from the claim's pool the largest capacity among the types it lists,
        in the limited resources only, replacing what it held before."""
        pool = c.pool
        assert pool is not None and pool.remaining is not None
        held = self._largest_capacity(c.types, pool)
        before = c.reserved
        if before is held:
            return  # the claim's types did not change: it holds back what it held
        remaining = pool.remaining
        for i in pool.limited:
            remaining[i] += (before[i] if before is not None else 0) - held[i]
        c.reserved = held

    def _largest_capacity(self, types: list[InstanceType], pool: PoolView) -> list[int]:
        """The largest capacity among ``types`` in each of the pool's limited resources (0
        elsewhere). Memoised per type list: a claim asks again after every pod it takes,
        while its list (of up to the whole catalog) seldom changes. The vector returned is
        never changed by its readers."""
        assert pool.remaining is not None
        key = (id(types), pool.limited, len(pool.remaining))
        hit = self._largest.get(key)
        if hit is not None and hit[0] is types:
            return hit[1]
        held = [0] * len(pool.remaining)
        known = self._capacity_cache  # read inline: a call per type costs more than the read
        caps = [known.get(it) or self.capacity_of(it) for it in types]
        for i in pool.limited:
            held[i] = max((cap[i] for cap in caps), default=0)
        self._largest[key] = (types, held)
        return held

    def no_larger_than(
        self, types: list[InstanceType], target: InstanceType, pool: PoolView
    ) -> list[InstanceType]:
        """The types no larger than ``target`` in any limited resource: a claim is filled
        only toward its target, so larger types would hold back room it never uses.
        Memoised per list and target: a tight pool's claims ask after every pod they take."""
        key = (id(types), target, pool.limited)
        hit = self._no_larger.get(key)
        if hit is not None and hit[0] is types:
            return hit[1]
        top = self.capacity_of(target)
        out = [it for it in types if all(self.capacity_of(it)[i] <= top[i] for i in pool.limited)]
        kept = types if len(out) == len(types) else out
        self._no_larger[key] = (types, kept)
        return kept

    def tighten(self, pool: PoolView, claims: list[ClaimTarget]) -> None:
        """The limits narrowed a new claim of the pool for the first time: from now on its
        claims list only types no larger than their targets, and the open ones give back
        what they held beyond that (see the module docstring)."""
        pool.tight = True
        self._changed()
        if pool.min_values:
            return  # fewer types could break minValues: keep Karpenter's reservation
        for c in claims:
            if c.pool is pool and c.target is not None:
                c.types = self.no_larger_than(c.types, c.target, pool)
                self.reserve(c)
