"""Kubernetes Events about Joinery's objects (NodePools, NodeClasses, NodeClaims, Nodes).

Best effort: an event is never worth a retry, so failures are logged and dropped. Repeats
are aggregated the way client-go's recorder does it: the event's name is derived from the
object, reason and message, so telling the same thing again bumps ``count`` and
``lastTimestamp`` on one Event instead of flooding the namespace (a NodePool that stays
invalid is re-checked on every resync).
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable, Hashable
from typing import Any

from activities.kubernetes import raw
from activities.kubernetes.client import Kube
from activities.kubernetes.conditions import now
from activities.kubernetes.errors import AlreadyExists, KubernetesError

log = logging.getLogger(__name__)
# Karpenter's objects are cluster-scoped; their events live in "default", as Karpenter's do.
EVENT_NAMESPACE = "default"
COMPONENT = "joinery"


class Dedupe:
    """Drops an event told again within its window, as Karpenter's recorder does with its
    dedupe timeout: the key (object, reason, and whatever else distinguishes it) is
    remembered for ``window`` seconds. Aggregation by name (``record``) still bumps the
    count of what does get through. Kept in memory, per worker process: a restarted worker
    may tell a thing once more, never more often than its window."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, limit: int = 50_000) -> None:
        self._clock = clock
        self._limit = limit
        self._until: dict[Hashable, float] = {}
        self._lock = threading.Lock()

    def first(self, key: Hashable, window: float) -> bool:
        """True (and remembered) when ``key`` was not told within its window."""
        now = self._clock()
        with self._lock:
            if self._until.get(key, 0.0) > now:
                return False
            if len(self._until) >= self._limit:
                self._until = {k: t for k, t in self._until.items() if t > now}
            self._until[key] = now + window
            return True


def event_name(kind: str, name: str, reason: str, message: str) -> str:
    digest = hashlib.sha256(f"{kind}/{name}/{reason}/{message}".encode()).hexdigest()[:16]
    return f"{name[:200]}.{digest}"


def record(
    kube: Kube,
    *,
    kind: str,
    name: str,
    uid: str = "",
    reason: str,
    message: str,
    warning: bool = False,
    api_version: str = "karpenter.sh/v1",
    namespace: str = "",
) -> None:
    """``namespace`` is the object's (a Pod's); cluster-scoped objects' events go to default."""
    stamp = now()
    message = message[:1024]
    event = event_name(kind, name, reason, message)
    where = namespace or EVENT_NAMESPACE
    involved = {"kind": kind, "name": name, "uid": uid, "apiVersion": api_version}
    if namespace:
        involved["namespace"] = namespace
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": event, "namespace": where},
        "involvedObject": involved,
        "reason": reason,
        "message": message,
        "type": "Warning" if warning else "Normal",
        "source": {"component": COMPONENT},
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "count": 1,
        "reportingComponent": COMPONENT,
    }
    try:
        try:
            raw.call(kube.core.create_namespaced_event, where, body)
        except AlreadyExists:
            seen = raw.call(kube.core.read_namespaced_event, event, where)
            patch = {"count": int(seen.get("count") or 1) + 1, "lastTimestamp": stamp}
            raw.call(kube.core.patch_namespaced_event, event, where, patch)
    except KubernetesError as exc:
        log.debug("event %s on %s/%s not recorded: %s", reason, kind, name, exc)
