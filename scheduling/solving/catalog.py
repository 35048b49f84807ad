"""What a solve derives from the catalog and pools alone, and from each node's pod list, kept
across solves."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar, cast

from models import labels as L
from models.instancetype import InstanceType
from scheduling.offers import OfferIndex
from scheduling.pods import Pod

T = TypeVar("T")
R = TypeVar("R")


class CatalogCache:
    """What a solve derives from the catalog and the pools alone, kept for the next solve on
    the same catalog: the offering index, the label keys types define, each pool's
    compatible types and the label values they offer; and, per node pod list, what its pods
    use and how they count for topology (a disruption round solves hundreds of times over the
    same nodes). Entries are keyed by object identity (and hold the object), so a different
    catalog, pool or pod list never reads a stale entry."""

    def __init__(self) -> None:
        self._offers: tuple[object, OfferIndex] | None = None
        self._keys: tuple[object, frozenset[str]] | None = None
        self._pool_types: dict[int, tuple[object, object, list[InstanceType]]] = {}
        self._labels: dict[int, tuple[object, dict[str, set[str]]]] = {}
        self._selector_keys: dict[int, tuple[list[Pod], frozenset[str]]] = {}
        self._per_list: dict[tuple[int, Hashable], tuple[object, object]] = {}

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

    def per_list(self, kind: Hashable, of: T, compute: Callable[[T], R]) -> R:
        """``compute(of)`` for a pod list or a resource map ``of``, once per object and
        ``kind`` (what is computed, with any input that changes it, e.g. the dimensions)."""
        key = (id(of), kind)
        hit = self._per_list.get(key)
        if hit is None or hit[0] is not of:
            hit = (of, compute(of))
            self._per_list[key] = hit
        return cast(R, hit[1])

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
