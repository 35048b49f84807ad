"""The solver with every memo and shortcut undone: the yardstick the property tests compare
the shipped solver against (tests/unit/scheduling/test_solve_caches.py for provisioning,
tests/unit/disruption/test_round_direct_solver.py for disruption rounds). Each override
computes directly what the shipped method remembers or skips; ``DirectSolver`` runs the
placement loop over these parts."""

from __future__ import annotations

from operator import le

from models import labels as L
from models.instancetype import InstanceType
from models.requirements import Requirement, Requirements
from scheduling.pods import Pod
from scheduling.solver import MAX_INSTANCE_TYPES, Solver
from scheduling.solving.claims import Claims
from scheduling.solving.domains import TopologyDomains
from scheduling.solving.existing import ExistingNodes
from scheduling.solving.limits import PoolLimits
from scheduling.solving.podclass import PodClass, RelaxState
from scheduling.solving.pricing import Pricing
from scheduling.solving.slack import SlackFilling
from scheduling.targets import (
    ClaimTarget,
    ExistingTarget,
    Failure,
    PoolView,
    instance_type_compatible,
)


class DirectDomains(TopologyDomains):
    """Topology without the narrowing and offered-domains memos, nor the full-claim shortcut."""

    def _narrowed_by(self, reqs: Requirements, extra: tuple[Requirement, ...]) -> Requirements:
        return reqs.with_requirements(extra)

    def _offered_domains(
        self, types: list[InstanceType], reqs: Requirements, key: str
    ) -> list[str]:
        universe = (len(self.label_values(L.ZONE)), len(self.label_values(L.CAPACITY_TYPE)))
        zones, cts = self.offers.zones_and_types(types, reqs, universe)
        return sorted(zones if key == L.ZONE else cts)

    def full_whatever_pinned(
        self, cls: PodClass, c: ClaimTarget, reqs: Requirements, need: list[int]
    ) -> bool:
        return False


class DirectLimits(PoolLimits):
    """Limits without the largest-capacity and no-larger-than memos."""

    def no_larger_than(
        self, types: list[InstanceType], target: InstanceType, pool: PoolView
    ) -> list[InstanceType]:
        top = self.capacity_of(target)
        return [it for it in types if all(self.capacity_of(it)[i] <= top[i] for i in pool.limited)]

    def _largest_capacity(self, types: list[InstanceType], pool: PoolView) -> list[int]:
        assert pool.remaining is not None
        held = [0] * len(pool.remaining)
        for i in pool.limited:
            held[i] = max((self.capacity_of(it)[i] for it in types), default=0)
        return held


class DirectClaims(Claims):
    """Claims without the widening and compatibility memos, nor a claim remembered full."""

    def widened(self, c: ClaimTarget, types: list[InstanceType]) -> list[InstanceType]:
        assert c.pool is not None and c.pool.remaining is not None and c.reserved is not None
        free = list(c.pool.remaining)
        for i in c.pool.limited:
            free[i] += c.reserved[i]
        return self._widen(c, types, free)

    def try_claim(self, cls: PodClass, pod: Pod, c: ClaimTarget) -> Failure | None:
        self._full_for = None  # no claim remembered full for a class
        return super().try_claim(cls, pod, c)

    def compatible(self, types: list[InstanceType], reqs: Requirements) -> list[InstanceType]:
        return [
            it
            for it in types
            if instance_type_compatible(it, reqs, self.instance_keys, self.offers)
        ]


class DirectPricing(Pricing):
    """Pricing that sorts every list afresh and lists the types that fit directly."""

    def price_order(
        self, types: list[InstanceType], reqs: Requirements
    ) -> list[tuple[float, InstanceType, list[int]]]:
        prices = self.offers.price_map(reqs)
        order = sorted(
            ((prices[it], it.name, it) for it in types if it in prices),
            key=lambda x: (x[0], x[1]),
        )
        return [(p, it, self._alloc_vec(it)) for p, _, it in order]

    def _listing(
        self, order: list[tuple[float, InstanceType, list[int]]], need: list[int]
    ) -> tuple[list[InstanceType], float, frozenset[str]]:
        fits = [(p, it) for p, it, alloc in order if all(map(le, need, alloc))]
        listed = [it for _, it in fits][:MAX_INSTANCE_TYPES]
        return listed, fits[0][0] if fits else 0.0, frozenset(it.name for it in listed)


class DirectSlack(SlackFilling):
    """Slack filling without the cheapest-room memo."""

    def _cheapest_room(self, c: ClaimTarget) -> list[int] | None:
        for _, _, alloc in self._price_order(c.types, c.requirements):
            if all(a <= b for a, b in zip(c.used, alloc, strict=True)):
                return alloc
        return None


class DirectExisting(ExistingNodes):
    """Existing nodes whose room is listed again for every class."""

    def with_room(self, cls: PodClass) -> list[ExistingTarget]:
        self._held = None
        return super().with_room(cls)


class DirectSolver(Solver):
    """The solver with its memos and the full-claim shortcut undone."""

    domains_part = DirectDomains
    existing_part = DirectExisting
    limits_part = DirectLimits
    claims_part = DirectClaims
    pricing_part = DirectPricing
    slack_part = DirectSlack

    def _place(self, pod: Pod, cls: PodClass) -> str | None:
        return self._try_targets(pod, cls)

    def _schedule(self, pod: Pod) -> str | None:
        return self._schedule_from(pod, self.states.get(id(pod), RelaxState()))

    def _fails_again(self, at: int) -> bool:
        return False
