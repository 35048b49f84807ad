"""EC2NodeClasses as a worker last read or watched them, so a launch need not ask the API.

Every launch needs its claim's EC2NodeClass; reading it from the API server each time was a
Kubernetes call per launch, during a burst one of the calls the launches queue for
(docs/performance.md). Karpenter reads it from its informer cache; this is the same idea in
small: an object read here serves launches for ``ttl_seconds`` (10 s), and the worker's
EC2NodeClass watcher (``worker/running/watchers.py``) hands every change and deletion to
:meth:`NodeClassStore.observe`, so an edit reaches the next launch as soon as the watch
delivers it. Without a watcher (or with its watch broken), an edit or a deletion reaches
launches at most ``ttl_seconds`` late: for that long a launch may still use the spec before
an edit (its resolution is then keyed by that spec's generation and digest) or a NodeClass
that was just deleted, as a launch already under way when the edit landed would.

Concurrent misses for one name wait for a single read. A NodeClass that does not exist is not
remembered: every launch asks again, so a newly created one is seen at once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from activities.kubernetes import nodeclasses, raw
from activities.kubernetes.client import Kube
from activities.kubernetes.resources import EC2NODECLASS, CustomResource

Obj = dict[str, Any]


@dataclass
class _Entry:
    obj: Obj
    at: float


@dataclass
class NodeClassStore:
    kube: Kube
    ttl_seconds: float = 10.0
    # the provider's node class kind (EC2NodeClass, AKSNodeClass)
    resource: CustomResource = EC2NODECLASS
    clock: Callable[[], float] = time.monotonic
    _entries: dict[str, _Entry] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _reading: dict[str, threading.Lock] = field(default_factory=dict)

    def get(self, name: str) -> Obj:
        """The EC2NodeClass ``name``; raises ``NotFound`` as ``nodeclasses.get`` does."""
        fresh = self._fresh(name)
        if fresh is not None:
            return fresh
        with self._lock:
            reading = self._reading.setdefault(name, threading.Lock())
        with reading:  # one read per name in flight; the others use its answer
            fresh = self._fresh(name)
            if fresh is not None:
                return fresh
            obj = nodeclasses.get(self.kube, name, self.resource)
            with self._lock:
                self._entries[name] = _Entry(obj, self.clock())
            return obj

    def observe(self, kind: str, obj: Obj) -> None:
        """A watch event (or a re-list's item): the store holds what the API server holds."""
        name = str((obj.get("metadata") or {}).get("name") or "")
        if not name:
            return
        with self._lock:
            if kind == raw.DELETED:
                self._entries.pop(name, None)
            else:
                self._entries[name] = _Entry(obj, self.clock())

    def _fresh(self, name: str) -> Obj | None:
        with self._lock:
            entry = self._entries.get(name)
            if entry is None or self.clock() - entry.at >= self.ttl_seconds:
                return None
            return entry.obj
