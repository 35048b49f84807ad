"""Starting NodeClaim workflows from an activity (the Temporal client is I/O too).

Id ``nodeclaim-<name>`` with the USE_EXISTING conflict policy: starting one that runs is a
no-op, so the provisioner, the NodeClaim watcher and a retried activity can all start it.
"""

from __future__ import annotations

import contextlib

from temporalio.client import Client
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError

from activities.planning.types import CreatedNodeClaim

# The NodeClaim workflow's registered name (workflows/nodeclaim/workflow.py); by name, not by
# import, because activities must not depend on workflows.
NODECLAIM_WORKFLOW = "NodeClaim"


def workflow_id(nodeclaim: str) -> str:
    return f"nodeclaim-{nodeclaim}"


async def start_lifecycle(
    client: Client,
    task_queue: str,
    claim: CreatedNodeClaim,
    *,
    search_attributes: bool,
) -> None:
    # A lifecycle that already ran to the end (the claim is gone or going) is not run again.
    with contextlib.suppress(WorkflowAlreadyStartedError):
        await client.start_workflow(
            NODECLAIM_WORKFLOW,
            {"name": claim.name, "search_attributes": search_attributes},
            id=workflow_id(claim.name),
            task_queue=task_queue,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
            static_summary=claim.summary or None,
        )
