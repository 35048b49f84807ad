"""Pricing a claim: its instance types cheapest first, and the PlannedClaim it becomes."""

from __future__ import annotations

from dataclasses import replace
from operator import le

from models import labels as L
from models.instancetype import InstanceType
from models.requirements import Requirement, Requirements
from scheduling.solving.result import PlannedClaim
from scheduling.solving.view import ProblemView
from scheduling.targets import (
    ClaimTarget,
)

MAX_INSTANCE_TYPES = 600


class Pricing:
    """Claims' types in price order, and each claim as the PlannedClaim it becomes."""

    def __init__(self, view: ProblemView) -> None:
        self.view = view
        self.offers = view.offers
        self._alloc_vec = view.alloc_vec
        self._orders: dict[
            tuple[object, ...],
            tuple[list[InstanceType], list[tuple[float, InstanceType, list[int]]]],
        ] = {}
        # The whole catalog cheapest first, per allowed zones and capacity types.
        self._full_orders: (
            dict[tuple[object, ...], list[tuple[float, InstanceType, list[int]]]] | None
        ) = None
        self._listings: dict[
            tuple[int, tuple[int, ...]],
            tuple[
                list[tuple[float, InstanceType, list[int]]],
                list[InstanceType],
                float,
                frozenset[str],
            ],
        ] = {}

    def price_order(
        self, types: list[InstanceType], reqs: Requirements
    ) -> list[tuple[float, InstanceType, list[int]]]:
        """Types with an allowed offering, cheapest first (ties by name), memoised per list."""
        key = (id(types), reqs.get(L.ZONE), reqs.get(L.CAPACITY_TYPE))
        hit = self._orders.get(key)
        if hit is not None and hit[0] is types:
            return hit[1]
        prices = self.offers.price_map(reqs)
        full = self._catalog_order(key[1:], prices)
        members = {id(it) for it in types}
        out = [entry for entry in full if id(entry[1]) in members]
        if len(out) != sum(1 for it in types if it in prices):
            # Not all from the catalog (or a type twice): sort this list itself.
            order = sorted(
                ((prices[it], it.name, it) for it in types if it in prices),
                key=lambda x: (x[0], x[1]),
            )
            out = [(p, it, self._alloc_vec(it)) for p, _, it in order]
        self._orders[key] = (types, out)
        return out

    def _catalog_order(
        self, zr_cr: tuple[object, ...], prices: dict[InstanceType, float]
    ) -> list[tuple[float, InstanceType, list[int]]]:
        """The catalog's types with a price in ``prices``, cheapest first (ties by name), once
        per allowed zones and capacity types: a type list's order is then this one with the
        others left out (the same order when names are unique, which is checked), a pass
        instead of a sort per list. With a catalog per pool, a name may be in the list twice,
        once per catalog; a type list is drawn from one pool's catalog, so unique names
        within each catalog are what keep the orders equal."""
        orders = self._full_orders
        if orders is None:
            orders = self._full_orders = {}
        hit = orders.get(zr_cr)
        if hit is None:
            catalog = self.view.all_types
            unique = all(
                len({it.name for it in types}) == len(types)
                for types in self.view.problem.catalogs()
            )
            order = sorted(
                ((prices[it], it.name, it) for it in catalog if it in prices),
                key=lambda x: (x[0], x[1]),
            )
            hit = orders[zr_cr] = (
                [(p, it, self._alloc_vec(it)) for p, _, it in order] if unique else []
            )
        return hit

    def _listing(
        self, order: list[tuple[float, InstanceType, list[int]]], need: list[int]
    ) -> tuple[list[InstanceType], float, frozenset[str]]:
        """The types of ``order`` that hold ``need`` (at most MAX_INSTANCE_TYPES, cheapest
        first), the cheapest one's price and their names. Memoised per (order, need): claims
        of one shape (one pod each under hostname rules, say) share the answer, and the
        shared list then hits the offer index's caches too. Callers never change it."""
        key = (id(order), tuple(need))
        hit = self._listings.get(key)
        if hit is not None and hit[0] is order:
            return hit[1], hit[2], hit[3]
        listed: list[InstanceType] = []
        price = 0.0
        for p, it, alloc in order:
            if all(map(le, need, alloc)):
                if not listed:
                    price = p
                listed.append(it)
                if len(listed) == MAX_INSTANCE_TYPES:
                    break
        names = frozenset(it.name for it in listed)
        self._listings[key] = (order, listed, price, names)
        return listed, price, names

    def finalize(self, c: ClaimTarget) -> PlannedClaim:
        """The claim as planned: its types that hold its pods, cheapest first, and where
        they are offered."""
        assert c.pool is not None
        reqs = c.requirements
        listed, price, names = self._listing(self.price_order(c.types, reqs), c.used)
        universe = (
            len(self.view.label_values(L.ZONE)),
            len(self.view.label_values(L.CAPACITY_TYPE)),
        )
        zones, cts = self.offers.zones_and_types(listed, reqs, universe)
        out_reqs = Requirements(r for k, r in reqs.items() if k != L.HOSTNAME).with_requirements(
            [
                Requirement(L.INSTANCE_TYPE, False, names),
                Requirement(L.ZONE, False, zones),
                Requirement(L.CAPACITY_TYPE, False, cts),
            ]
        )
        relaxed = c.min_values is not None and c.min_values != c.pool.min_values
        if relaxed and c.min_values is not None:
            out_reqs = _with_min_values(out_reqs, c.min_values)
        requests = dict(zip(self.view.dims, c.used, strict=True))
        return PlannedClaim(
            nodepool=c.pool.name,
            instance_types=listed,
            requirements=out_reqs,
            zones=sorted(zones),
            capacity_types=sorted(cts),
            price=price,
            requests={k: v for k, v in requests.items() if v},
            pods=list(c.pods),
            min_values_relaxed=relaxed,
        )


def _with_min_values(reqs: Requirements, min_values: dict[str, int]) -> Requirements:
    """``reqs`` with the claim's own (lowered) minValues in place of its pool's: the
    intersection keeps the larger of two, so they are set, not intersected."""
    return Requirements(
        replace(r, min_values=min_values[k]) if k in min_values else r for k, r in reqs.items()
    )
