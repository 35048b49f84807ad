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
from typing import Any

from activities.kubernetes import raw
from activities.kubernetes.client import Kube
from activities.kubernetes.conditions import now
from activities.kubernetes.errors import AlreadyExists, KubernetesError

log = logging.getLogger(__name__)
# Karpenter's objects are cluster-scoped; their events live in "default", as Karpenter's do.
EVENT_NAMESPACE = "default"
COMPONENT = "joinery"


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
