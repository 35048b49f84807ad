"""Offerings the cloud recently refused (insufficient capacity), remembered for a short while.

Karpenter keeps such pools out of scheduling for three minutes so the next launch goes to a
different pool instead of hitting the same wall. The clock is injectable so tests can move
time without sleeping. With a shared record (activities/cloud/shared_offerings.py), every
replica's refusals are merged in before each launch, so replicas never retry a pool another
replica found exhausted; the record failing degrades to the local cache, with a warning.

The record is read at most once per ``sync_seconds`` (1 s) per worker, by one thread while
the others wait for its answer: a burst's launches share one read instead of each paying a
Kubernetes call. What that gives up: a refusal another replica published less than a second
ago may be missed by a launch; that launch then meets the same refusal from CreateFleet
itself, which marks the pool here and publishes it again (docs/performance.md).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Protocol

from activities.cloud.errors import Pool

ANY = "*"
log = logging.getLogger(__name__)


class SharedRecord(Protocol):
    """Where replicas meet: publish an entry with its wall-clock expiry, read them all."""

    def publish(self, pool: Pool, expires_at: float) -> None: ...

    def read(self) -> dict[Pool, float]: ...


class UnavailableOfferings:
    """A TTL set of (capacity type, instance type, zone); ``*`` stands for every value."""

    def __init__(
        self,
        ttl_seconds: float = 180.0,
        clock: Callable[[], float] = time.monotonic,
        *,
        sync_seconds: float = 1.0,
    ) -> None:
        self._ttl = ttl_seconds
        self._clock = clock
        self._sync_seconds = sync_seconds
        self._sync_lock = threading.Lock()  # one read in flight; the others wait for it
        self._synced_at: float | None = None
        self._expiry: dict[Pool, float] = {}
        self._lock = threading.Lock()
        self._seq = 0
        self._record: SharedRecord | None = None
        self._wall: Callable[[], float] = time.time

    def share(self, record: SharedRecord, wall_clock: Callable[[], float] = time.time) -> None:
        """Publish to and merge from ``record`` from now on."""
        self._record = record
        self._wall = wall_clock
        self._synced_at = None  # a new record is read at the next launch

    def sync(self) -> None:
        """Merge the shared record into this cache (a no-op without one), unless it was read
        less than ``sync_seconds`` ago; concurrent callers share the one read in flight."""
        if self._record is None:
            return
        with self._sync_lock:
            if self._synced_at is not None and self._clock() - self._synced_at < self._sync_seconds:
                return
            self._synced_at = self._clock()  # a failing record is not retried per launch
            try:
                remote = self._record.read()
            except Exception as exc:
                log.warning(
                    "unavailable-offerings record unreadable, using the local cache: %s", exc
                )
                return
            self._merge(remote)

    def _merge(self, remote: dict[Pool, float]) -> None:
        wall, mono = self._wall(), self._clock()
        with self._lock:
            for pool, expires_at in remote.items():
                local = mono + (expires_at - wall)
                if local > self._expiry.get(pool, float("-inf")) + 1.0:
                    self._expiry[pool] = local
                    self._seq += 1

    @property
    def seq_num(self) -> int:
        """Changes whenever the set changes, so derived caches (the catalog) know to rebuild."""
        with self._lock:
            self._expire()
            return self._seq

    def mark_unavailable(self, capacity_type: str, instance_type: str, zone: str) -> None:
        pool = Pool(capacity_type, instance_type, zone)
        with self._lock:
            self._expiry[pool] = self._clock() + self._ttl
            self._seq += 1
        if self._record is not None:
            try:
                self._record.publish(pool, self._wall() + self._ttl)
            except Exception as exc:
                log.warning("could not share unavailable offering %s: %s", pool, exc)

    def mark_capacity_type_unavailable(self, capacity_type: str) -> None:
        self.mark_unavailable(capacity_type, ANY, ANY)

    def is_unavailable(self, capacity_type: str, instance_type: str, zone: str) -> bool:
        with self._lock:
            self._expire()
            if not self._expiry:
                return False
            return any(
                Pool(ct, it, z) in self._expiry
                for ct in (capacity_type, ANY)
                for it in (instance_type, ANY)
                for z in (zone, ANY)
            )

    def entries(self) -> list[Pool]:
        with self._lock:
            self._expire()
            return sorted(self._expiry, key=lambda p: (p.capacity_type, p.instance_type, p.zone))

    def _expire(self) -> None:
        now = self._clock()
        gone = [p for p, t in self._expiry.items() if t <= now]
        for p in gone:
            del self._expiry[p]
        if gone:
            self._seq += 1
