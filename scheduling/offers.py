"""Fast answers about offerings: which zones and capacity types a set of types can be bought
in under given requirements, and at what cheapest price. Everything is memoised, because
the solver asks the same questions for every pod that joins a claim.

Types are known by the objects themselves, not their names: with a catalog per NodePool
(``Problem.pool_instance_types``) one name can stand for two types, each sold in its own
NodeClass's zones."""

from __future__ import annotations

from collections.abc import Sequence

from models import labels as L
from models.instancetype import InstanceType
from models.requirements import Requirement, Requirements

_ANY = Requirement("", True, frozenset())


class OfferIndex:
    def __init__(self, instance_types: Sequence[InstanceType]) -> None:
        self._pairs: dict[InstanceType, dict[tuple[str, str], float]] = {}
        for it in instance_types:
            pairs: dict[tuple[str, str], float] = {}
            for o in it.offerings:
                if o.available and o.price < pairs.get((o.zone, o.capacity_type), float("inf")):
                    pairs[(o.zone, o.capacity_type)] = o.price
            self._pairs[it] = pairs
        # Each type's set of (zone, capacity type) pairs, as a number: equal sets, equal numbers.
        numbers: dict[frozenset[tuple[str, str]], int] = {}
        self._sold = {
            it: numbers.setdefault(frozenset(pairs), len(numbers))
            for it, pairs in self._pairs.items()
        }
        # The same answers by the types in it, for a list equal to one asked about before
        # (a consolidation round builds equal lists in many solves).
        self._seen_named: dict[tuple[object, ...], tuple[frozenset[str], frozenset[str]]] = {}
        self._offered_named: dict[
            tuple[object, ...], tuple[dict[str, float], dict[str, float]]
        ] = {}
        self._seen: dict[
            tuple[int, Requirement, Requirement],
            tuple[Sequence[InstanceType], frozenset[str], frozenset[str]],
        ] = {}
        self._maps: dict[tuple[Requirement, Requirement], dict[InstanceType, float]] = {}
        self._cheapest: dict[tuple[InstanceType, Requirement, Requirement], float | None] = {}
        self._offered: dict[
            tuple[int, Requirement, Requirement],
            tuple[Sequence[InstanceType], dict[str, float], dict[str, float]],
        ] = {}

    @staticmethod
    def _zr(reqs: Requirements) -> tuple[Requirement, Requirement]:
        return reqs.get(L.ZONE) or _ANY, reqs.get(L.CAPACITY_TYPE) or _ANY

    def cheapest(self, it: InstanceType, reqs: Requirements) -> float | None:
        zr, cr = self._zr(reqs)
        key = (it, zr, cr)
        if key in self._cheapest:
            return self._cheapest[key]
        best: float | None = None
        for (zone, ct), price in self._pairs[it].items():
            if (best is None or price < best) and zr.has(zone) and cr.has(ct):
                best = price
        self._cheapest[key] = best
        return best

    def offered(
        self, types: Sequence[InstanceType], reqs: Requirements
    ) -> tuple[dict[str, float], dict[str, float]]:
        """Cheapest price per zone and per capacity type the types offer under reqs."""
        zr, cr = self._zr(reqs)
        key = (id(types), zr, cr)
        hit = self._offered.get(key)
        if hit is not None and hit[0] is types:
            return hit[1], hit[2]
        same = self._offered_named.get((_as_key(types), zr, cr))
        if same is not None:
            self._offered[key] = (types, same[0], same[1])
            return same
        zones, cts = self._priced(types, zr, cr)
        self._offered[key] = (types, zones, cts)
        self._offered_named[(_as_key(types), zr, cr)] = (zones, cts)
        return zones, cts

    def offered_once(
        self, types: Sequence[InstanceType], reqs: Requirements
    ) -> tuple[dict[str, float], dict[str, float]]:
        """``offered``, not memoised: for a list built for one question, which would
        otherwise stay in the memo for nothing."""
        return self._priced(types, *self._zr(reqs))

    def _priced(
        self, types: Sequence[InstanceType], zr: Requirement, cr: Requirement
    ) -> tuple[dict[str, float], dict[str, float]]:
        zones: dict[str, float] = {}
        cts: dict[str, float] = {}
        seen: set[tuple[str, str]] = set()
        for it in types:
            for pair, price in self._pairs[it].items():
                zone, ct = pair
                if pair in seen and price >= zones.get(zone, 0) and price >= cts.get(ct, 0):
                    continue
                if zr.has(zone) and cr.has(ct):
                    seen.add(pair)
                    if price < zones.get(zone, float("inf")):
                        zones[zone] = price
                    if price < cts.get(ct, float("inf")):
                        cts[ct] = price
        return zones, cts

    def zones_and_types(
        self, types: Sequence[InstanceType], reqs: Requirements, universe: tuple[int, int]
    ) -> tuple[frozenset[str], frozenset[str]]:
        """Zones and capacity types offered (no prices); stops once every one is seen."""
        zr, cr = self._zr(reqs)
        key = (id(types), zr, cr)
        hit = self._seen.get(key)
        if hit is not None and hit[0] is types:
            return hit[1], hit[2]
        named = (_as_key(types), zr, cr, universe)
        same = self._seen_named.get(named)
        if same is not None:
            self._seen[key] = (types, same[0], same[1])
            return same
        zones: set[str] = set()
        cts: set[str] = set()
        nz, nc = universe
        # Types that sell in the same zones and capacity types add nothing the first did not.
        sold = self._sold
        looked: set[int] = set()
        for it in types:
            where = sold[it]
            if where in looked:
                continue
            looked.add(where)
            for zone, ct in self._pairs[it]:
                if zr.has(zone) and cr.has(ct):
                    zones.add(zone)
                    cts.add(ct)
            if len(zones) >= nz and len(cts) >= nc:
                break
        out = (types, frozenset(zones), frozenset(cts))
        self._seen[key] = out
        self._seen_named[named] = (out[1], out[2])
        return out[1], out[2]

    def price_map(self, reqs: Requirements) -> dict[InstanceType, float]:
        """Cheapest allowed price per instance type (types with none are absent)."""
        zr, cr = self._zr(reqs)
        key = (zr, cr)
        hit = self._maps.get(key)
        if hit is None:
            hit = {}
            for it, pairs in self._pairs.items():
                best = None
                for (zone, ct), price in pairs.items():
                    if (best is None or price < best) and zr.has(zone) and cr.has(ct):
                        best = price
                if best is not None:
                    hit[it] = best
            self._maps[key] = hit
        return hit

    def offered_in_all(
        self, it: InstanceType, zones: Sequence[str], capacity_types: Sequence[str]
    ) -> bool:
        """Whether the type has an available offering in every (zone, capacity type) pair."""
        pairs = self._pairs[it]
        return all((z, ct) in pairs for z in zones for ct in capacity_types)

    def has_offering(self, it: InstanceType, reqs: Requirements) -> bool:
        return self.cheapest(it, reqs) is not None


def _as_key(types: Sequence[InstanceType]) -> tuple[InstanceType, ...]:
    """The list as a key: equal lists (the same types in the same order), equal keys."""
    return tuple(types)
