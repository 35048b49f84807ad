"""What of a Node a heartbeat leaves unchanged, so the Node watcher can skip heartbeats.

A kubelet (or kwok) renews each Node's status every few seconds: only the conditions'
``lastHeartbeatTime``, the resourceVersion and the managed fields' times move. At 1,000
Nodes those events are most of what the Node watch delivers during a burst, and each one
that reached the watcher's handler cost a metrics update and an index write for nothing.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]
_VOLATILE_META = frozenset({"resourceVersion", "managedFields"})


def essentials(node: Obj) -> Obj:
    """``node`` without what a heartbeat changes; equal before and after a heartbeat."""
    meta = {k: v for k, v in (node.get("metadata") or {}).items() if k not in _VOLATILE_META}
    status = dict(node.get("status") or {})
    if status.get("conditions"):
        status["conditions"] = [
            {k: v for k, v in c.items() if k != "lastHeartbeatTime"} for c in status["conditions"]
        ]
    return {"metadata": meta, "spec": node.get("spec") or {}, "status": status}
