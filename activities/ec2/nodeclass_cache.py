"""A worker-wide cache of EC2NodeClass resolutions, so a burst of launches resolves once.

Resolving a NodeClass is four AWS reads (DescribeSubnets, DescribeSecurityGroups, SSM
GetParameters and DescribeImages for the AMIs) that give the same answer for every claim of a
burst. Done per launch they were two thirds of a launch's EC2 calls (docs/performance.md,
"The launch path"). Karpenter keeps the same answers in caches with short TTLs; so do we:

- an answer is reused for ``ttl_seconds`` at most, so subnets, security groups or AMIs
  changed in AWS are seen within that time, as Karpenter's own caches do;
- the key holds the NodeClass's identity (uid, generation) and a digest of its spec and the
  cluster's Kubernetes version (AMI aliases depend on it), so an edited, recreated NodeClass
  or an upgraded cluster never gets an old answer;
- only a ready answer is kept: a NodeClass that is not ready is resolved afresh on every
  launch, so fixing it in AWS takes effect at the next try;
- concurrent misses of one key resolve once (the others wait for that answer);
- callers drop an entry when AWS says an answer was wrong (``invalidate``).
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from activities.ec2.nodeclass import ResolvedNodeClass
from models.ec2nodeclass import EC2NodeClass

# Karpenter's subnet, security-group and AMI caches keep answers about this long.
DEFAULT_TTL_SECONDS = 60.0

Key = tuple[str, str, int, str, str]


def cache_key(nodeclass: EC2NodeClass, kubernetes_version: str) -> Key:
    """Everything a resolution depends on that Kubernetes tells us."""
    meta = nodeclass.metadata
    spec = nodeclass.spec.model_dump_json(by_alias=True, exclude_none=True)
    digest = hashlib.sha256(spec.encode()).hexdigest()[:32]
    return (nodeclass.name, meta.uid or "", meta.generation or 0, digest, kubernetes_version)


@dataclass
class _Entry:
    resolved: ResolvedNodeClass
    at: float


class ResolvedNodeClasses:
    """Ready resolutions by ``cache_key``, each kept ``ttl_seconds`` at most."""

    def __init__(
        self,
        resolve: Callable[[EC2NodeClass], ResolvedNodeClass],
        kubernetes_version: Callable[[], str],
        ttl_seconds: float = DEFAULT_TTL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._resolve = resolve
        self._version = kubernetes_version
        self._ttl = ttl_seconds
        self._clock = clock
        self._entries: dict[Key, _Entry] = {}
        self._lock = threading.Lock()
        self._key_locks: dict[Key, threading.Lock] = {}

    def get(self, nodeclass: EC2NodeClass) -> ResolvedNodeClass:
        """The cached ready answer for this NodeClass, else a fresh one.

        The answer is shared between threads: callers read it and never change it.
        """
        key = cache_key(nodeclass, self._version())
        hit = self._fresh(key)
        if hit is not None:
            return hit
        with self._lock:
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:  # one resolution per key at a time; the others take its answer
            hit = self._fresh(key)
            if hit is not None:
                return hit
            return self.refresh(nodeclass, key)

    def refresh(self, nodeclass: EC2NodeClass, key: Key | None = None) -> ResolvedNodeClass:
        """Resolve now, and keep the answer if it is ready (the NodeClass status controller
        resolves afresh on each pass; its answer serves the launches that follow)."""
        key = key or cache_key(nodeclass, self._version())
        resolved = self._resolve(nodeclass)
        with self._lock:
            # keys of an older generation or spec of this NodeClass are never asked again
            for old in [k for k in self._entries if k[0] == key[0] and k != key]:
                del self._entries[old]
                self._key_locks.pop(old, None)
            if resolved.ready:
                self._entries[key] = _Entry(resolved, self._clock())
            else:
                self._entries.pop(key, None)
        return resolved

    def invalidate(self, name: str) -> None:
        """Forget every answer for the NodeClass ``name`` (AWS refused what it named)."""
        with self._lock:
            for key in [k for k in self._entries if k[0] == name]:
                del self._entries[key]

    def _fresh(self, key: Key) -> ResolvedNodeClass | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            if self._clock() - entry.at >= self._ttl:
                del self._entries[key]
                return None
            return entry.resolved
