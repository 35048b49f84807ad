"""Which catalog instance types can serve a claim, remembered per (catalog, requirements, requests).

Matching a claim's requirements against every type of the catalog was the largest part of a
launch's CPU (more than the EC2 calls): in a burst, every claim of a provisioning round
carries the same requirements and requests, so the answer is the same for all of them.

The memo is keyed on the catalog list's identity. The catalog provider builds a new list
whenever anything that shapes it changes (a refetch, prices, the unavailable offerings), and
an entry keeps its list alive, so an identity is never reused while it is remembered: a new
catalog is always matched afresh. What the match looks at (a type's labels and allocatable)
does not depend on availability anyway; which offerings are usable is decided per launch,
after the match (``usable_offerings`` in activities/cloud/offering_choice.py).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping

from activities.cloud.offering_choice import compatible_types
from models.instancetype import InstanceType
from models.requirements import Requirement, Requirements

# A worker sees one catalog per (EC2NodeClass, subnet zones) at a time, and a burst a handful
# of distinct claim shapes per round; both bounds leave room for both.
MAX_CATALOGS = 4
MAX_SHAPES_PER_CATALOG = 64

ShapeKey = tuple[frozenset[Requirement], frozenset[tuple[str, int]]]


def shape_key(reqs: Requirements, requests: Mapping[str, int]) -> ShapeKey:
    """Equal for equal requirement sets and requests, however they were written."""
    # Requirements hold one (frozen, hashable) Requirement per key, so the set is canonical.
    return frozenset(reqs.values()), frozenset(requests.items())


class CompatibleTypes:
    """A bounded, thread-safe memo of :func:`compatible_types` (launches run in threads)."""

    def __init__(
        self, max_catalogs: int = MAX_CATALOGS, max_shapes: int = MAX_SHAPES_PER_CATALOG
    ) -> None:
        self._max_catalogs = max_catalogs
        self._max_shapes = max_shapes
        # id(catalog list) -> (the list itself, shape -> compatible types)
        self._by_catalog: OrderedDict[
            int, tuple[list[InstanceType], OrderedDict[ShapeKey, tuple[InstanceType, ...]]]
        ] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(
        self, types: list[InstanceType], reqs: Requirements, requests: Mapping[str, int]
    ) -> list[InstanceType]:
        key = shape_key(reqs, requests)
        with self._lock:
            entry = self._by_catalog.get(id(types))
            if entry is not None and entry[0] is types:
                self._by_catalog.move_to_end(id(types))
                hit = entry[1].get(key)
                if hit is not None:
                    entry[1].move_to_end(key)
                    return list(hit)
        # Matched outside the lock: two threads may both compute a new shape, never wrongly.
        found = tuple(compatible_types(types, reqs, requests))
        with self._lock:
            entry = self._by_catalog.get(id(types))
            if entry is None or entry[0] is not types:
                entry = (types, OrderedDict())
                self._by_catalog[id(types)] = entry
            self._by_catalog.move_to_end(id(types))
            while len(self._by_catalog) > self._max_catalogs:
                self._by_catalog.popitem(last=False)
            shapes = entry[1]
            shapes[key] = found
            while len(shapes) > self._max_shapes:
                shapes.popitem(last=False)
        return list(found)
