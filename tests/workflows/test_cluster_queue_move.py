"""A provisioner started on the lifecycles' queue (before the cluster workflows had a queue of
their own) moves to its own queue when a worker starts, keeping its ``joinery pause`` state."""

from __future__ import annotations

import uuid
from unittest.mock import MagicMock

import pytest
from temporalio.testing import WorkflowEnvironment

from activities.deps import Deps
from models import contract
from tests.support.waiting import until
from worker.running.app import build_cluster_worker, build_worker, ensure_cluster_workflows
from worker.running.settings import Settings, TemporalSettings
from workflows.provisioner import ProvisionerInput, ProvisionerWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_a_provisioner_on_the_lifecycles_queue_moves_to_its_own(
    dev_env: WorkflowEnvironment, task_queue: str
) -> None:
    client = dev_env.client
    cluster = f"move-{uuid.uuid4().hex[:6]}"
    workflow_id = contract.provisioner_id(cluster)
    own_queue = contract.cluster_workflows_queue(task_queue)
    deps = Deps(kube=MagicMock(), cluster=cluster, lifecycle_queue=task_queue)
    async with (
        build_worker(client, deps, task_queue),
        build_cluster_worker(client, deps, task_queue),
    ):
        # as an older worker started it: on the lifecycles' queue, with a pool paused
        await client.start_workflow(
            ProvisionerWorkflow.run,
            ProvisionerInput(cluster, paused_pools=["batch"]),
            id=workflow_id,
            task_queue=task_queue,
        )
        settings = Settings(
            TemporalSettings(task_queue=task_queue),
            cluster=cluster,
            disruption=False,
            garbage_collection=False,
        )
        await ensure_cluster_workflows(client, settings)
        handle = client.get_workflow_handle(workflow_id)

        async def moved() -> bool:
            return (await handle.describe()).task_queue == own_queue

        await until(moved, timeout=30, what="the provisioner on its own queue")
        status = await handle.query(ProvisionerWorkflow.status)
        assert status.paused_pools == ["batch"]
        # a worker starting again finds it in place: nothing moves twice
        first_run = (await handle.describe()).run_id
        await ensure_cluster_workflows(client, settings)
        assert (await handle.describe()).run_id == first_run
        await handle.terminate("test over")
