"""VolumeAttachments: a node is only safe to terminate once its volumes have detached."""

from __future__ import annotations

from activities.kubernetes import raw
from activities.kubernetes.client import Kube
from activities.kubernetes.raw import Obj


def attachments(kube: Kube, node_name: str | None = None) -> list[Obj]:
    """VolumeAttachments, only those to ``node_name`` when given (filtered client-side)."""
    items = raw.list_all(kube.storage.list_volume_attachment)
    if node_name is None:
        return items
    return [a for a in items if (a.get("spec") or {}).get("nodeName") == node_name]
