"""A solver cache kept from one provisioning round to the next.

While a burst's NodeClaims launch, its pods stay pending, and every round re-plans them all
onto the claims in flight and makes nothing. Each of those rounds used to derive the same
things afresh: the catalog's offering index, each pool's compatible types, each in-flight
claim's facts, each pod's relaxed constraints. ``CatalogCache`` already keeps them, keyed by
the objects they come from (and holding them, so an identity is never reused while it is
remembered), for a disruption round's many simulations; this keeps one for the next round.

Plans do not change: every entry answers for the very objects it was made from, and a
round still simulates every pending pod against every node and claim. What a round no
longer holds (a claim that changed or went away, a pod bound or gone) is forgotten after
it (``CatalogCache.retain``), and a cache grown past ``MAX_ENTRIES`` or made for other
catalogs is dropped, so the memory it holds stays bounded.

A round's catalogs are the pools' own (``Problem.catalogs``: one list per distinct
NodeClass view, shared by the pools that see alike); the cache is kept for a round with
the very same lists, in the same order, which is what the provider hands out while
neither the catalog nor the NodeClasses change.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from models.instancetype import InstanceType
from scheduling.pods import Pod
from scheduling.problem import Problem
from scheduling.solving.catalog import CatalogCache

# A 1,000-pod round keeps about 2,000 entries (one per claim's facts and per pod's steps,
# a few hundred for the catalog); churn beyond a hundred such rounds' worth starts afresh.
MAX_ENTRIES = 200_000


class KeptCatalog:
    """The ``CatalogCache`` of the last round, for the next round on the same catalogs.

    One round uses it at a time; a round that finds it in use (a retry overlapping the
    round it retries) solves with a cache of its own, as every round did before."""

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self._max_entries = max_entries
        self._lock = threading.Lock()
        self._kept: tuple[tuple[list[InstanceType], ...], CatalogCache] | None = None

    @contextmanager
    def solving(self, problem: Problem) -> Iterator[CatalogCache]:
        """The cache to solve ``problem`` with; kept for the next round only if the solve
        finished (a solve that raised may have left it half-filled)."""
        if not self._lock.acquire(blocking=False):
            yield CatalogCache()
            return
        try:
            kept, self._kept = self._kept, None
            catalogs = problem.catalogs()
            cache = kept[1] if kept is not None and _same(kept[0], catalogs) else CatalogCache()
            yield cache
            cache.retain(problem.nodes, _pods(problem))
            if cache.size() <= self._max_entries:
                self._kept = (catalogs, cache)
        finally:
            self._lock.release()

    def size(self) -> int:
        """Entries the kept cache holds (0: none kept)."""
        kept = self._kept
        return 0 if kept is None else kept[1].size()


def _same(a: tuple[list[InstanceType], ...], b: tuple[list[InstanceType], ...]) -> bool:
    """The same lists (by identity) in the same order."""
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


def _pods(problem: Problem) -> Iterator[Pod]:
    yield from problem.pending
    for node in problem.nodes:
        yield from node.pods
