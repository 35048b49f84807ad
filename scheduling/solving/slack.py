"""Slack filling: moving unconstrained pods into the room claims pay for anyway, so fewer
or cheaper claims remain.
"""

from __future__ import annotations

from operator import le

from models.instancetype import InstanceType
from models.requirements import Requirements
from scheduling.pods import Pod
from scheduling.solving.claims import Claims
from scheduling.solving.limits import PoolLimits
from scheduling.solving.podclass import PodClass
from scheduling.solving.pricing import Pricing
from scheduling.solving.view import ProblemView
from scheduling.taints import untolerated
from scheduling.targets import (
    ClaimTarget,
    vec_add,
)


class SlackFilling:
    """Filling the slack of the open claims with unconstrained pods, once every pod is
    placed: it moves pods between ``Claims.open`` and reads the rest."""

    def __init__(
        self, view: ProblemView, claims: Claims, limits: PoolLimits, pricing: Pricing
    ) -> None:
        self.view = view
        self.claims = claims
        self.limits = limits
        self._price_order = pricing.price_order
        self._rooms: dict[
            tuple[int, int, tuple[int, ...]],
            tuple[list[InstanceType], Requirements, list[int] | None],
        ] = {}

    def _cheapest_room(self, c: ClaimTarget) -> list[int] | None:
        """Allocatable of the cheapest type that holds the claim's pods (what it will cost).

        Memoised per (type list, requirements, usage): every donor asks every claim, and
        most claims have not changed since the last donor asked."""
        types, reqs = c.types, c.requirements
        key = (id(types), id(reqs), tuple(c.used))
        hit = self._rooms.get(key)
        if hit is not None and hit[0] is types and hit[1] is reqs:
            return hit[2]
        room = None
        for _, _, alloc in self._price_order(types, reqs):
            if all(map(le, c.used, alloc)):
                room = alloc
                break
        self._rooms[key] = (types, reqs, room)
        return room

    def _size(self, vec: list[int]) -> float:
        return vec[0] * self.view.memory_per_cpu + vec[1]

    @staticmethod
    def _flexible(cls: PodClass) -> bool:
        """Pods no topology rule mentions and with no host ports: moving them changes no count."""
        return not (cls.own or cls.matching or cls.owned_anti or cls.inverse or cls.host_ports)

    def fill(self) -> None:
        """Move unconstrained pods into the room claims pay for anyway.

        A claim costs its cheapest type that holds its pods, which is usually a little more
        than they need (most of all on claims that hostname rules keep small). Pods no
        topology rule mentions move from the claims holding them into that room when the
        receiving claim accepts them without narrowing; the receiver's price is unchanged
        and the giver's can only drop, so the plan never gets dearer. In a pool with limits
        the giver's type list grows again only by types the limits still allow (not at all
        once the limits bind).
        """
        claims = [c for c in self.claims.open if c.pool is not None]
        donors: list[tuple[ClaimTarget, dict[int, tuple[PodClass, list[Pod]]]]] = []
        for c in claims:
            groups: dict[int, tuple[PodClass, list[Pod]]] = {}
            for p in c.pods:
                cls = self.claims.placed_class.get(id(p))
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
        targets = sorted(claims, key=lambda c: c.index)
        # Whether a claim accepts a class: its pool and requirements, which slack filling
        # never changes, decide it; every donor asks again of every claim.
        accepts: dict[tuple[int, int], bool] = {}
        # Each claim's room as last read, with what it was read for (parts replaced, never
        # changed in place): most claims do not change between two donors.
        rooms: dict[int, tuple[object, object, object, list[int] | None]] = {}
        for donor, groups in donors:
            # One donor at a time, kept or put back before the next: a claim whose own pods
            # were put back must never also hold pods that came into its room meanwhile.
            before = self._full_price(donor)
            log: list[tuple[ClaimTarget, Pod, PodClass]] = []
            for target in targets:
                if target is donor:
                    continue
                seen = rooms.get(id(target))
                if (
                    seen is not None
                    and seen[0] is target.used
                    and seen[1] is target.types
                    and seen[2] is target.requirements
                ):
                    room = seen[3]
                else:
                    room = self._cheapest_room(target)
                    rooms[id(target)] = (target.used, target.types, target.requirements, room)
                if room is None:
                    continue
                free = [r - u for r, u in zip(room, target.used, strict=True)]
                for cls, pods in groups.values():
                    if not pods or not all(map(le, cls.vec, free)):
                        continue  # no room for one (the cheaper test first)
                    ok = accepts.get((id(target), id(cls)))
                    if ok is None:
                        ok = accepts[(id(target), id(cls))] = self._accepts(target, cls)
                    if not ok:
                        continue
                    while pods and all(map(le, cls.vec, free)):
                        free = [f - v for f, v in zip(free, cls.vec, strict=True)]
                        pod = pods.pop()
                        donor.pods.remove(pod)
                        donor.used = [a - b for a, b in zip(donor.used, cls.vec, strict=True)]
                        target.used = vec_add(target.used, cls.vec)
                        target.pods.append(pod)
                        log.append((target, pod, cls))
            if not log:
                continue
            if self._full_price(donor) < before - 1e-9:
                # Fewer pods: types dropped earlier may hold them again; list them all.
                assert donor.pool is not None
                types = self.claims.types_for(donor.pool, donor.requirements)
                types = sorted(
                    self.claims.fit(types, donor.used), key=self.view.size_key, reverse=True
                )
                if donor.pool.remaining is None:
                    donor.types = types
                elif not donor.pool.tight:  # a tight pool's claims keep their trimmed lists
                    donor.types = self.claims.widened(donor, types)
                    self.limits.reserve(donor)
                continue
            for target, pod, cls in reversed(log):  # no cheaper: put everything back
                target.pods.remove(pod)
                target.used = [a - b for a, b in zip(target.used, cls.vec, strict=True)]
                donor.pods.append(pod)
                donor.used = vec_add(donor.used, cls.vec)

    def _full_price(self, c: ClaimTarget) -> float:
        """What the claim would cost if every type of its pool that holds its pods were listed."""
        assert c.pool is not None
        types = self.claims.types_for(c.pool, c.requirements)
        for price, _, alloc in self._price_order(types, c.requirements):
            if all(map(le, c.used, alloc)):
                return price
        return float("inf")

    def _accepts(self, c: ClaimTarget, cls: PodClass) -> bool:
        assert c.pool is not None
        if c.pool.min_values or untolerated(c.pool.taints, cls.tolerations) is not None:
            return False
        return self.claims.merge(c.requirements, cls.reqs) is c.requirements
