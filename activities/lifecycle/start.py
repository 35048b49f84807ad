"""Starting a NodeClaim's lifecycle workflow: the one way every caller does it.

The provisioner's and the disruption workflow's activities start the lifecycles of claims
they created; the NodeClaim watcher starts one for every claim it sees (a crash between
create and start, claims made by others). The id is ``nodeclaim-<name>@<cluster>`` with the
USE_EXISTING conflict policy, so starting one that runs is a no-op and all of them may race.

Reuse of a completed run's id (a failed or terminated run is always replaced):
- by default it is not run again: the claim was just created by the caller (so a completed
  run under its name was its own: a retried start must not run it twice), or it is being
  deleted (a re-list still shows it while its finalizer goes; a second run would only find
  it gone and hide the real one in the UI);
- ``rerun_completed``: the watcher saw a live claim, so a completed run under its name
  belonged to an earlier claim of that name, and this one gets its own lifecycle.

The input is the workflow's input as JSON (``{"name", "search_attributes", "shape"}``, the
fields of ``NodeClaimInput`` a fresh start needs): activities do not import workflows. A
fresh start asks for the current shape (``contract.NODECLAIM_SHAPE``).
"""

from __future__ import annotations

import contextlib

from temporalio.client import Client
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError

from models import contract


async def start_lifecycle(
    client: Client,
    *,
    cluster: str,
    task_queue: str,
    name: str,
    summary: str = "",
    search_attributes: bool = False,
    rerun_completed: bool = False,
) -> None:
    """Start (or find running) NodeClaim ``name``'s workflow."""
    with contextlib.suppress(WorkflowAlreadyStartedError):  # completed and not adopted
        await client.start_workflow(
            contract.NODECLAIM_WORKFLOW,
            {
                "name": name,
                "search_attributes": search_attributes,
                "shape": contract.NODECLAIM_SHAPE,
            },
            id=contract.nodeclaim_id(cluster, name),
            task_queue=task_queue,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            id_reuse_policy=(
                WorkflowIDReusePolicy.ALLOW_DUPLICATE
                if rerun_completed
                else WorkflowIDReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY
            ),
            static_summary=summary or None,
        )
