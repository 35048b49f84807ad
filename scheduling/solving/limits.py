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
and can only fall, never beyond what the launched node can take.
"""

from __future__ import annotations

from models.instancetype import InstanceType
from scheduling.solving.classes import PodClasses
from scheduling.targets import NODE, ClaimTarget, PoolView


class PoolLimits(PodClasses):
    """Limit accounting over the pools' ``remaining`` vectors (see the module docstring)."""

    def _capacity_of(self, it: InstanceType) -> list[int]:
        """The type's capacity per dimension, plus one node, as limits count it."""
        v = self._capacity_cache.get(it.name)
        if v is None:
            v = [it.capacity.get(d, 0) for d in self.dims]
            v.append(NODE)
            self._capacity_cache[it.name] = v
        return v

    def _within_limits(self, pool: PoolView, it: InstanceType) -> bool:
        """Whether a new claim of ``pool`` may list ``it``: it fits in every limited resource."""
        remaining = pool.remaining
        if remaining is None:
            return True
        cap = self._capacity_of(it)
        return all(cap[i] <= remaining[i] for i in pool.limited)

    def _reserve(self, c: ClaimTarget) -> None:
        """Hold back from the claim's pool the largest capacity among the types it lists,
        in the limited resources only, replacing what it held before."""
        pool = c.pool
        assert pool is not None and pool.remaining is not None
        held = [0] * len(pool.remaining)
        for it in c.types:
            cap = self._capacity_of(it)
            for i in pool.limited:
                if cap[i] > held[i]:
                    held[i] = cap[i]
        remaining = pool.remaining
        before = c.reserved
        for i in pool.limited:
            remaining[i] += (before[i] if before is not None else 0) - held[i]
        c.reserved = held

    def _relist_within_limits(self, c: ClaimTarget, types: list[InstanceType]) -> None:
        """List for the claim (which gave pods away, so more types hold it) those of
        ``types`` the pool's limits allow once its own reservation is released, and reserve
        them. Its current types were reserved, so they stay listed."""
        pool = c.pool
        assert pool is not None and pool.remaining is not None and c.reserved is not None
        free = list(pool.remaining)
        for i in pool.limited:
            free[i] += c.reserved[i]
        kept = [
            it for it in types if all(self._capacity_of(it)[i] <= free[i] for i in pool.limited)
        ]
        c.types = kept
        self._reserve(c)
