"""Offerings EC2 recently refused (insufficient capacity), remembered for a short while.

Karpenter keeps such pools out of scheduling for three minutes so the next launch goes to a
different pool instead of hitting the same wall. The clock is injectable so tests can move
time without sleeping.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from activities.ec2.errors import Pool

ANY = "*"


class UnavailableOfferings:
    """A TTL set of (capacity type, instance type, zone); ``*`` stands for every value."""

    def __init__(
        self, ttl_seconds: float = 180.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._ttl = ttl_seconds
        self._clock = clock
        self._expiry: dict[Pool, float] = {}
        self._lock = threading.Lock()
        self._seq = 0

    @property
    def seq_num(self) -> int:
        """Changes whenever the set changes, so derived caches (the catalog) know to rebuild."""
        with self._lock:
            self._expire()
            return self._seq

    def mark_unavailable(self, capacity_type: str, instance_type: str, zone: str) -> None:
        with self._lock:
            self._expiry[Pool(capacity_type, instance_type, zone)] = self._clock() + self._ttl
            self._seq += 1

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
