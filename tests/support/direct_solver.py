"""The solver with every memo and shortcut undone: the yardstick the property tests compare
the shipped solver against (tests/unit/scheduling/test_solve_caches.py for provisioning,
tests/unit/disruption/test_round_direct_solver.py for disruption rounds). Each override
computes directly what the shipped method remembers or skips."""

from __future__ import annotations

from operator import le

from models import labels as L
from models.instancetype import InstanceType
from models.requirements import Requirement, Requirements
from scheduling.pods import Pod
from scheduling.solver import MAX_INSTANCE_TYPES, Solver
from scheduling.solving.podclass import PodClass, RelaxState
from scheduling.targets import ClaimTarget, Failure, PoolView, Target, instance_type_compatible


class DirectSolver(Solver):
    """The solver with its memos and the full-claim shortcut undone."""

    def _narrowed_by(self, reqs: Requirements, extra: tuple[Requirement, ...]) -> Requirements:
        return reqs.with_requirements(extra)

    def _offered_domains(
        self, types: list[InstanceType], reqs: Requirements, key: str
    ) -> list[str]:
        universe = (len(self.label_values(L.ZONE)), len(self.label_values(L.CAPACITY_TYPE)))
        zones, cts = self.offers.zones_and_types(types, reqs, universe)
        return sorted(zones if key == L.ZONE else cts)

    def _no_larger_than(
        self, types: list[InstanceType], target: InstanceType, pool: PoolView
    ) -> list[InstanceType]:
        top = self._capacity_of(target)
        return [it for it in types if all(self._capacity_of(it)[i] <= top[i] for i in pool.limited)]

    def _widened(self, c: ClaimTarget, types: list[InstanceType]) -> list[InstanceType]:
        assert c.pool is not None and c.pool.remaining is not None and c.reserved is not None
        free = list(c.pool.remaining)
        for i in c.pool.limited:
            free[i] += c.reserved[i]
        return self._widen(c, types, free)

    def _cheapest_room(self, c: ClaimTarget) -> list[int] | None:
        for _, _, alloc in self._price_order(c.types, c.requirements):
            if all(a <= b for a, b in zip(c.used, alloc, strict=True)):
                return alloc
        return None

    def _full_whatever_pinned(
        self, cls: PodClass, c: ClaimTarget, reqs: Requirements, need: list[int]
    ) -> bool:
        return False

    def _try_claim(self, cls: PodClass, pod: Pod, c: ClaimTarget) -> Failure | None:
        self._full_for = None  # no claim remembered full for a class
        return super()._try_claim(cls, pod, c)

    def _compatible(self, types: list[InstanceType], reqs: Requirements) -> list[InstanceType]:
        return [
            it
            for it in types
            if instance_type_compatible(it, reqs, self.instance_keys, self.offers)
        ]

    def _price_order(
        self, types: list[InstanceType], reqs: Requirements
    ) -> list[tuple[float, InstanceType, list[int]]]:
        prices = self.offers.price_map(reqs)
        order = sorted(
            ((prices[it], it.name, it) for it in types if it in prices),
            key=lambda x: (x[0], x[1]),
        )
        return [(p, it, self._alloc_vec(it)) for p, _, it in order]

    def _place(self, pod: Pod, cls: PodClass) -> str | None:
        return self._try_targets(pod, cls)

    def _schedule(self, pod: Pod) -> str | None:
        return self._schedule_from(pod, self.states.get(id(pod), RelaxState()))

    def _fails_again(self, at: int) -> bool:
        return False

    def _fresh_targets(self, cls: PodClass) -> list[Target]:
        self._held = None  # the nodes with room listed again for every class
        return super()._fresh_targets(cls)

    def _largest_capacity(self, types: list[InstanceType], pool: PoolView) -> list[int]:
        assert pool.remaining is not None
        held = [0] * len(pool.remaining)
        for i in pool.limited:
            held[i] = max((self._capacity_of(it)[i] for it in types), default=0)
        return held

    def _listing(
        self, order: list[tuple[float, InstanceType, list[int]]], need: list[int]
    ) -> tuple[list[InstanceType], float, frozenset[str]]:
        fits = [(p, it) for p, it, alloc in order if all(map(le, need, alloc))]
        listed = [it for _, it in fits][:MAX_INSTANCE_TYPES]
        return listed, fits[0][0] if fits else 0.0, frozenset(it.name for it in listed)
