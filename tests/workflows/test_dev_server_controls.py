"""On the dev server: search attributes through a whole lifecycle, and the operator CLI
(``joinery status|disrupt|pause|resume``) talking to running workflows."""

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
from tests.support.workflow_fakes import FakeCloud, blocked, spec
from worker.cli import main
from worker.running.watchers import Watchers
from workflows.nodeclaim.state import NodeClaimInput
from workflows.nodeclaim.workflow import NodeClaimWorkflow
from workflows.provisioner import ProvisionerInput, ProvisionerWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def joinery(
    capsys: pytest.CaptureFixture[str],
    env: WorkflowEnvironment,
    *argv: str,
    extra: tuple[str, ...] = (),
) -> tuple[int, str, str]:
    address = env.client.service_client.config.target_host
    code = await asyncio.to_thread(main, [*argv, "--address", address, *extra])
    out, err = capsys.readouterr()
    return code, out, err


async def test_search_attributes_and_cli(
    dev_env: WorkflowEnvironment, task_queue: str, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = f"c-{uuid.uuid4().hex[:6]}"
    name = f"claim-{uuid.uuid4().hex[:6]}"
    where = ("--cluster", cluster, "--task-queue", task_queue)
    cloud = FakeCloud(claim=spec(name), drain_forever=blocked())
    planner = FakePlanner()
    client = dev_env.client
    async with Worker(
        client,
        task_queue=task_queue,
        workflows=[NodeClaimWorkflow, ProvisionerWorkflow],
        activities=[*cloud.activities(), *planner.activities()],
    ):
        await client.start_workflow(
            ProvisionerWorkflow.run,
            ProvisionerInput(cluster, search_attributes=True),
            id=contract.provisioner_id(cluster),
            task_queue=task_queue,
        )
        handle = await client.start_workflow(
            NodeClaimWorkflow.run,
            NodeClaimInput(name, search_attributes=True, shape=contract.NODECLAIM_SHAPE),
            id=contract.nodeclaim_id(cluster, name),
            task_queue=task_queue,
            static_summary="m5.large spot us-east-1a · pool default",
        )
        query = (
            f"NodeClaim = '{name}' AND NodePool = 'default' AND InstanceType = 'm5.large' "
            "AND CapacityType = 'spot' AND Zone = 'us-east-1a' AND Phase = 'Ready'"
        )
        for _ in range(100):
            found = [wf.id async for wf in client.list_workflows(query)]
            if found:
                break
            await asyncio.sleep(0.2)
        assert found == [contract.nodeclaim_id(cluster, name)]
        description = await handle.describe()
        assert await description.static_summary() == "m5.large spot us-east-1a · pool default"

        code, out, _ = await joinery(capsys, dev_env, "status", name, extra=where)
        assert code == 0 and f"NodeClaim {name}: Ready" in out and "m5.large spot" in out

        code, _, err = await joinery(
            capsys, dev_env, "disrupt", name, "--reason", "not ok!", extra=where
        )
        assert code == 2 and "must be a word" in err and err.count("\n") == 1
        code, _, err = await joinery(capsys, dev_env, "disrupt", "no-such-claim", extra=where)
        assert code == 2 and "no running workflow for NodeClaim no-such-claim" in err
        code, out, _ = await joinery(
            capsys, dev_env, "disrupt", name, "--reason", "Maintenance", extra=where
        )
        assert code == 0 and "will be drained" in out

        for _ in range(100):
            phases = [
                wf.id
                async for wf in client.list_workflows(
                    f"NodeClaim = '{name}' AND Phase = 'Draining'"
                )
            ]
            if phases:
                break
            await asyncio.sleep(0.2)
        assert phases == [contract.nodeclaim_id(cluster, name)]
        for _ in range(50):
            code, out, _ = await joinery(capsys, dev_env, "status", name, extra=where)
            if "blocked:" in out:
                break
            await asyncio.sleep(0.2)
        assert "blocked:   ns/web-0 (ns/web-pdb)" in out and "Maintenance" in out

        code, out, _ = await joinery(
            capsys, dev_env, "pause", "--cluster", cluster, "--nodepool", "gpu"
        )
        assert code == 0 and "gpu paused" in out
        code, _, err = await joinery(
            capsys, dev_env, "pause", "--cluster", cluster, "--nodepool", "gpu"
        )
        assert code == 2 and "already paused" in err
        code, _, err = await joinery(capsys, dev_env, "resume", "--cluster", cluster)
        assert code == 2 and "not paused" in err and "--nodepool" in err
        code, out, _ = await joinery(capsys, dev_env, "status", extra=where)
        assert code == 0 and "paused: gpu" in out and name in out
        assert "Disruption: no workflow" in out  # this test runs no disruption workflow
        assert "Garbage collection: no workflow" in out  # nor a garbage-collection one
        # what a NodeClaim's expiry asks before disrupting (activities/lifecycle/disruption)
        held = await disruption.hold(client, cluster, "gpu")
        assert held == "disruption is paused for NodePool gpu (`joinery resume --nodepool gpu`)"
        assert await disruption.hold(client, cluster, "default") == ""
        assert await disruption.hold(client, "no-such-cluster", "gpu") == ""
        code, _, err = await joinery(capsys, dev_env, "pause", "--cluster", "nope")
        assert code == 2 and "no provisioner for cluster nope" in err
        await handle.terminate("test over")


async def test_continue_as_new_keeps_the_phase(
    dev_env: WorkflowEnvironment, task_queue: str
) -> None:
    """A tiny history limit forces continue-as-new while the claim registers; the phase and
    the launched instance survive it (no second launch), and so does a deletion signal.

    This runs on the real server rather than the time-skipping one: the test server can lose
    a signal that races a continue-as-new (its CI run hung on exactly that), which the real
    server prevents by rejecting the continue-as-new completion until the signal is seen."""
    cluster, name = "c", f"claim-{uuid.uuid4().hex[:6]}"
    cloud = FakeCloud(register_after=3)
    client = dev_env.client
    async with Worker(
        client, task_queue=task_queue, workflows=[NodeClaimWorkflow], activities=cloud.activities()
    ):
        handle = await client.start_workflow(
            NodeClaimWorkflow.run,
            NodeClaimInput(name, history_limit=15, shape=contract.NODECLAIM_SHAPE),
            id=contract.nodeclaim_id(cluster, name),
            task_queue=task_queue,
        )
        first = handle.result_run_id
        for _ in range(150):
            status = await handle.query(NodeClaimWorkflow.status)
            if status.phase == "Ready":
                break
            await asyncio.sleep(0.2)
        assert status.phase == "Ready" and status.node_name
        await handle.signal(NodeClaimWorkflow.deleted, "NodeClaim")
        assert await asyncio.wait_for(handle.result(), timeout=120) == "Terminated"
        described = await handle.describe()
        assert described.run_id != first
    assert cloud.names().count(names.LAUNCH) == 1


async def test_a_completed_lifecycle_is_not_started_again(
    dev_env: WorkflowEnvironment, task_queue: str
) -> None:
    """Starting a claim's workflow again (a retried start, the watcher adopting what a
    re-list shows) is a no-op once its lifecycle ran to the end: no second run that would
    only find the claim gone and hide the real one in the UI."""
    cluster, name = "c", f"claim-{uuid.uuid4().hex[:6]}"
    cloud = FakeCloud(claim=None)
    client = dev_env.client
    async with Worker(
        client, task_queue=task_queue, workflows=[NodeClaimWorkflow], activities=cloud.activities()
    ):
        await start_lifecycle(client, cluster=cluster, task_queue=task_queue, name=name)
        assert (
            await client.get_workflow_handle(contract.nodeclaim_id(cluster, name)).result()
            == "Gone"
        )
        await start_lifecycle(client, cluster=cluster, task_queue=task_queue, name=name)
        await asyncio.sleep(1)  # a second run, had one started, would have prepared by now
        runs = [
            wf.run_id
            async for wf in client.list_workflows(
                f"WorkflowId = '{contract.nodeclaim_id(cluster, name)}'"
            )
        ]
    assert len(runs) == 1
    assert cloud.names() == [names.PREPARE]

    # the watcher: a claim being deleted is not adopted again; a live claim of the same name
    # (made anew after the first was gone) gets its own lifecycle
    watchers = Watchers(
        kube=None,  # type: ignore[arg-type]  # starting lifecycles reads nothing from it
        client=client,
        loop=asyncio.get_running_loop(),
        cluster=cluster,
        task_queue=task_queue,
    )
    async with Worker(
        client, task_queue=task_queue, workflows=[NodeClaimWorkflow], activities=cloud.activities()
    ):
        watchers.start_lifecycle(name, "", deleting=True)
        await asyncio.sleep(1.5)
        assert cloud.names() == [names.PREPARE]
        watchers.start_lifecycle(name, "")
        for _ in range(50):
            if len(cloud.names()) == 2:
                break
            await asyncio.sleep(0.1)
        assert cloud.names() == [names.PREPARE, names.PREPARE]
