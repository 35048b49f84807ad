"""Pods, Nodes and NodeClaims as the worker's watches last delivered them, for the
provisioning round.

A round read the whole cluster from the API server: every pod, Node and NodeClaim. At 1,000
nodes, in a burst, those lists took most of a 94-second round and then failed with the API
server's "request did not complete within the allotted timeout" (docs/performance.md), while
the worker's watchers held the same objects. Karpenter's provisioner reads its informer
cache; this is that cache in small.

An ``ObjectCache`` is trusted only while synced: a watcher's complete list has been handed
over (``set_synced(True)``) and its watch has not broken since. A re-list replaces the
contents, so an object deleted while the watch was down does not linger. :meth:`items`
answers in the API server's own list order (namespace/name, or name), so a round planned
from the cache sees the same documents, in the same order, as one planned from the lists.

The claims a round creates are added at once (:meth:`observe_created`): the next round must
count them as in flight even when the NodeClaim watch has not delivered them yet.

What a reader makes of an object (the provisioning round's parsed pods and NodeClaims) can
be kept beside it (:meth:`derived`): a round that finds most pending pods already covered by
in-flight claims otherwise validated hundreds of unchanged objects again. A derived value
lives while its object is held with the same uid and resourceVersion; it goes with the
object (a delete, a re-list without it), so the memo is never larger than the cache.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from activities.kubernetes.raw import DELETED, LISTED

Obj = dict[str, Any]
T = TypeVar("T")


def key_of(obj: Obj) -> str:
    """The object's place in a list answer: ``namespace/name``, or the name alone."""
    meta = obj.get("metadata") or {}
    name = str(meta.get("name") or "")
    namespace = meta.get("namespace")
    return f"{namespace}/{name}" if namespace else name


def _version(obj: Obj) -> int:
    """The resourceVersion as a number: etcd's revisions are, so one object's versions
    order; anything else counts as newest (the write's answer is then taken)."""
    text = str((obj.get("metadata") or {}).get("resourceVersion") or "")
    return int(text) if text.isdigit() else 1 << 62


@dataclass
class ObjectCache:
    _items: dict[str, Obj] = field(default_factory=dict)
    _listing: dict[str, Obj] = field(default_factory=dict)
    _synced: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)
    # key -> (uid, resourceVersion, what ``derived`` made of that version)
    _derived: dict[str, tuple[str, str, Any]] = field(default_factory=dict)

    @property
    def synced(self) -> bool:
        return self._synced

    def set_synced(self, synced: bool) -> None:
        """True once a list has been handed over whole; False when the watch broke."""
        with self._lock:
            if synced:
                self._items, self._listing = self._listing, {}
                self._derived = {k: v for k, v in self._derived.items() if k in self._items}
            else:
                self._listing = {}
            self._synced = synced

    def observe(self, kind: str, obj: Obj) -> None:
        """A list's item (``LISTED``) or a watch event for ``obj``."""
        key = key_of(obj)
        if not key:
            return
        with self._lock:
            if kind == LISTED:
                self._listing[key] = obj
            elif kind == DELETED:
                self._items.pop(key, None)
                self._derived.pop(key, None)
            else:
                self._items[key] = obj

    def observe_created(self, obj: Obj) -> None:
        """An object this worker just created; a newer version the watch brought wins."""
        key = key_of(obj)
        with self._lock:
            if key and self._synced:
                self._items.setdefault(key, obj)

    def derived(self, obj: Obj, make: Callable[[Obj], T]) -> T:
        """``make(obj)``, made once per version of an object this cache holds.

        One reader per cache: the value is known by the object alone, not by ``make``. An
        object the cache does not hold (a listed copy, a version replaced meanwhile) or one
        without a resourceVersion gets ``make(obj)`` afresh, never remembered.
        """
        key = key_of(obj)
        meta = obj.get("metadata") or {}
        uid, version = str(meta.get("uid") or ""), str(meta.get("resourceVersion") or "")
        if not key or not version:
            return make(obj)
        with self._lock:
            hit = self._derived.get(key)
        if hit is not None and hit[0] == uid and hit[1] == version:
            value: T = hit[2]
            return value
        made = make(obj)
        with self._lock:
            if self._items.get(key) is obj:
                self._derived[key] = (uid, version, made)
        return made

    def observe_written(self, obj: Obj) -> None:
        """An object as this worker's own write answered it: held unless the watch already
        brought a newer version. A reader then builds its next write on it instead of on
        the version before, which the watch, behind on a busy worker, may still hold (that
        write would be refused and read again)."""
        key = key_of(obj)
        with self._lock:
            if not key or not self._synced or key not in self._items:
                return
            if _version(obj) >= _version(self._items[key]):
                self._items[key] = obj

    def get(self, key: str) -> Obj | None:
        """The object under ``key`` (``namespace/name``, or the name) while synced; None
        when not synced or not held (the caller reads the API server instead)."""
        with self._lock:
            return self._items.get(key) if self._synced else None

    def items(self) -> list[Obj]:
        """Every object, in the API server's list order."""
        with self._lock:
            return [self._items[k] for k in sorted(self._items)]


@dataclass
class WatchedObjects:
    """The objects a provisioning round reads, each kept by one of the worker's watches."""

    pods: ObjectCache = field(default_factory=ObjectCache)
    nodes: ObjectCache = field(default_factory=ObjectCache)
    nodeclaims: ObjectCache = field(default_factory=ObjectCache)
