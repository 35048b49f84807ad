"""May Joinery disrupt a pool's nodes on its own right now? (``joinery pause``)

The operator's pause lives in the cluster's provisioner workflow, so this asks it, through
the Temporal client, by names rather than imports (activities must not depend on
workflows). Only disruptions Joinery decides by itself wait for a resume (``expireAfter``
today, consolidation and drift when they come); a deleted NodeClaim or Node, a spot
interruption and ``joinery disrupt`` are somebody's explicit request, and proceed.
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


async def hold(client: Client, cluster: str, nodepool: str) -> str:
    """Why the pool's nodes must not be disrupted now, or "" when they may be."""
    handle = client.get_workflow_handle(contract.provisioner_id(cluster))
    try:
        status = await handle.query(contract.QUERY_STATUS, result_type=dict)
    except RPCError as exc:
        if exc.status == RPCStatusCode.NOT_FOUND:
            return ""  # no provisioner, so nothing was paused
        raise
    return hold_reason(status, nodepool)
