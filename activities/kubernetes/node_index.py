"""Node names by ``spec.providerID``, as the worker's Node watch delivered them.

A registration check looks for the Node of an instance. Nodes have no field selector on
providerID, so without this the check listed every Node of the pool on each poll until the
Node appeared: with 600 Nodes a list is megabytes the API server serialises and the worker
parses, and during a 1,000-pod burst those lists were most of the worker's CPU and held the
lifecycles' workflow task slots (docs/performance.md). Karpenter answers the same question
from its informer cache; this is that cache in small.

The worker's Node watcher (``worker/running/watchers.py``) hands every event to :meth:`observe` and
says when its list is complete (:meth:`set_synced`) or its watch broke. While synced, a
providerID the index does not hold has no Node yet (or one the watch is about to deliver, and
the watcher then signals the claim's workflow, which checks again at once). A name the index
does hold is still read from the API server and its providerID checked, so an entry left
stale by a missed deletion costs one read, never a wrong answer. Not synced (no watcher, a
broken watch): callers list, as before.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from activities.kubernetes.raw import DELETED


@dataclass
class NodeIndex:
    _by_provider: dict[str, str] = field(default_factory=dict)
    _provider_of: dict[str, str] = field(default_factory=dict)  # node name -> providerID
    _synced: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def synced(self) -> bool:
        """True while the watch that feeds this index has listed every Node and is live."""
        return self._synced

    def set_synced(self, synced: bool) -> None:
        self._synced = synced

    def observe(self, kind: str, node: dict[str, Any]) -> None:
        """A watch event (or a list's item) for ``node``."""
        name = str((node.get("metadata") or {}).get("name") or "")
        if not name:
            return
        provider_id = str((node.get("spec") or {}).get("providerID") or "")
        with self._lock:
            before = self._provider_of.pop(name, None)
            if before is not None and self._by_provider.get(before) == name:
                del self._by_provider[before]
            if kind == DELETED or not provider_id:
                return
            self._provider_of[name] = provider_id
            self._by_provider[provider_id] = name

    def name_of(self, provider_id: str) -> str | None:
        """The Node that carries ``provider_id``, as last watched; None if none does."""
        with self._lock:
            return self._by_provider.get(provider_id)
