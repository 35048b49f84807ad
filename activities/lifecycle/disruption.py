"""May Joinery disrupt a pool's nodes on its own right now? (``joinery pause``)

The operator's pause lives in the cluster's provisioner workflow, so this asks it, through
the Temporal client, by names rather than imports (activities must not depend on
workflows). Only disruptions Joinery decides by itself wait for a resume (``expireAfter``
and the disruption workflow's consolidation, emptiness and drift); a deleted NodeClaim or
Node, a spot interruption and ``joinery disrupt`` are somebody's explicit request, and
proceed.
"""

from __future__ import annotations

from typing import Any

from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from models import contract


def hold_reason(status: dict[str, Any], nodepool: str) -> str:
    if status.get("paused_all"):
        return "disruption is paused for every NodePool (`joinery resume`)"
    if nodepool in (status.get("paused_pools") or []):
        return (
            f"disruption is paused for NodePool {nodepool} (`joinery resume --nodepool {nodepool}`)"
        )
    return ""


async def pause_state(client: Client, cluster: str) -> dict[str, Any]:
    """The provisioner's status (``paused_all``, ``paused_pools``); empty when there is no
    provisioner, so nothing was paused."""
    handle = client.get_workflow_handle(contract.provisioner_id(cluster))
    try:
        status: dict[str, Any] = await handle.query(contract.QUERY_STATUS, result_type=dict)
    except RPCError as exc:
        if exc.status == RPCStatusCode.NOT_FOUND:
            return {}
        raise
    return status


async def hold(client: Client, cluster: str, nodepool: str) -> str:
    """Why the pool's nodes must not be disrupted now, or "" when they may be."""
    return hold_reason(await pause_state(client, cluster), nodepool)
