"""Two clusters in one Temporal namespace: ids and task queues carry the cluster name, so the
same NodeClaim name in both runs two lifecycles, each on its own cluster's workers, and
pausing one cluster holds nothing in the other."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from activities.lifecycle import disruption
from activities.lifecycle.start import start_lifecycle
from models import contract
from models.contract import NodeClaimActivity as names
from tests.support.provisioner_fakes import FakePlanner
from tests.support.workflow_fakes import FakeCloud, spec
from workflows.nodeclaim.workflow import NodeClaimWorkflow
from workflows.provisioner import PauseRequest, ProvisionerInput, ProvisionerWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_two_clusters_share_a_namespace(dev_env: WorkflowEnvironment) -> None:
    suffix = uuid.uuid4().hex[:6]
    clusters = (f"east-{suffix}", f"west-{suffix}")
    name = "default-abcde"  # the same claim name in both clusters
    client = dev_env.client
    clouds = {c: FakeCloud(claim=spec(name)) for c in clusters}
    workers = [
        Worker(
            client,
            task_queue=contract.task_queue(c),
            workflows=[NodeClaimWorkflow, ProvisionerWorkflow],
            activities=[*clouds[c].activities(), *FakePlanner().activities()],
        )
        for c in clusters
    ]
    async with workers[0], workers[1]:
        for c in clusters:
            await client.start_workflow(
                ProvisionerWorkflow.run,
                ProvisionerInput(c),
                id=contract.provisioner_id(c),
                task_queue=contract.task_queue(c),
            )
            await start_lifecycle(client, cluster=c, task_queue=contract.task_queue(c), name=name)
        ids = {contract.nodeclaim_id(c, name) for c in clusters}
        assert len(ids) == 2
        for c in clusters:
            handle = client.get_workflow_handle(contract.nodeclaim_id(c, name))
            for _ in range(100):
                status = await handle.query(NodeClaimWorkflow.status)
                if status.phase == "Ready":
                    break
                await asyncio.sleep(0.1)
            assert status.phase == "Ready"
            # each cluster's lifecycle ran on that cluster's workers only
            assert clouds[c].names().count(names.LAUNCH) == 1
            described = await handle.describe()
            assert described.task_queue == contract.task_queue(c)

        east, west = clusters
        await client.get_workflow_handle(contract.provisioner_id(east)).execute_update(
            ProvisionerWorkflow.pause, PauseRequest(None)
        )
        assert "paused for every NodePool" in await disruption.hold(client, east, "default")
        assert await disruption.hold(client, west, "default") == ""

        for c in clusters:
            for wid in (contract.nodeclaim_id(c, name), contract.provisioner_id(c)):
                await client.get_workflow_handle(wid).terminate("test over")
