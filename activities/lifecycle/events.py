"""Kubernetes Events about NodeClaims and Nodes, best effort (an event is never worth a retry)."""

from __future__ import annotations

import logging
import uuid
from typing import Any

from activities.kubernetes import raw
from activities.kubernetes.client import Kube
from activities.kubernetes.errors import KubernetesError
from activities.lifecycle.common import iso, utc_now

log = logging.getLogger(__name__)
EVENT_NAMESPACE = "default"
COMPONENT = "joinery"


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
) -> None:
    now = iso(utc_now())
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{name}.{uuid.uuid4().hex[:12]}", "namespace": EVENT_NAMESPACE},
        "involvedObject": {"kind": kind, "name": name, "uid": uid, "apiVersion": api_version},
        "reason": reason,
        "message": message[:1024],
        "type": "Warning" if warning else "Normal",
        "source": {"component": COMPONENT},
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
        "reportingComponent": COMPONENT,
    }
    try:
        raw.call(kube.core.create_namespaced_event, EVENT_NAMESPACE, body)
    except KubernetesError as exc:
        log.debug("event %s on %s/%s not recorded: %s", reason, kind, name, exc)
