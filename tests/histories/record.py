"""Record workflow histories for the replay tests:
``.venv/bin/python -m tests.histories.record [NAME ...]`` from the repository root (all, or
only the names given).

Runs each scenario on the time-skipping server with the test doubles and writes its history
as JSON next to this file. Re-record only on purpose: a history recorded by the old code that
no longer replays means the change is not deterministic-compatible with running workflows
(version it with ``workflow.patched`` instead).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from temporalio.client import Client, WorkflowHandle
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from activities.disruption.types import Decision, Readiness
from activities.lifecycle.types import DrainStatus
from models import contract
from tests.support.disruption_fakes import EmptiedNode, FakeDisruption, command
from tests.support.garbage_fakes import FakeGarbage
from tests.support.provisioner_fakes import FakePlanner
from tests.support.temporal_servers import start_test_server
from tests.support.workflow_fakes import FakeCloud, blocked, spec
from workflows.disruption.state import DisruptionInput
from workflows.disruption.workflow import DisruptionWorkflow
from workflows.garbage.state import GarbageCollectionInput
from workflows.garbage.workflow import GarbageCollectionWorkflow
from workflows.nodeclaim.state import DisruptRequest, NodeClaimInput
from workflows.nodeclaim.workflow import NodeClaimWorkflow
from workflows.provisioner import PauseRequest, ProvisionerInput, ProvisionerWorkflow

HERE = Path(__file__).resolve().parent
Scenario = Callable[[WorkflowEnvironment, WorkflowHandle[Any, Any]], Awaitable[None]]


async def _until_phase(
    env: WorkflowEnvironment, handle: WorkflowHandle[Any, Any], phase: str
) -> None:
    for _ in range(300):
        if (await handle.query(NodeClaimWorkflow.status)).phase == phase:
            return
        await env.sleep(1)
    raise RuntimeError(f"never reached {phase}")


async def deleted_when_ready(env: WorkflowEnvironment, handle: WorkflowHandle[Any, Any]) -> None:
    await _until_phase(env, handle, "Ready")
    await handle.signal(NodeClaimWorkflow.deleted, "NodeClaim")


async def disrupted_through_pdb(env: WorkflowEnvironment, handle: WorkflowHandle[Any, Any]) -> None:
    await _until_phase(env, handle, "Ready")
    await handle.execute_update(NodeClaimWorkflow.disrupt, DisruptRequest("Maintenance"))


async def nothing(env: WorkflowEnvironment, handle: WorkflowHandle[Any, Any]) -> None:
    return


def _per_shape(shape: int) -> dict[str, tuple[FakeCloud, Scenario, int]]:
    """The three runs recorded for each shape from 1 on (fresh doubles each)."""
    prefix = f"nodeclaim_shape{shape}_"
    return {
        f"{prefix}happy_path": (
            FakeCloud(register_after=3, initialize_after=2, volumes_script=[1], instance_polls=1),
            deleted_when_ready,
            shape,
        ),
        f"{prefix}disrupted": (
            FakeCloud(drain_script=[blocked(), blocked()]),
            disrupted_through_pdb,
            shape,
        ),
        f"{prefix}expiry_held_by_pause": (
            FakeCloud(claim=spec(expire_after_seconds=3600), paused_checks=2),
            nothing,
            shape,
        ),
    }


# name -> the activities' doubles, what the test does to the run, the input's shape. The names
# without a shape in them are shape 0 and were recorded before shapes existed (most before
# the short calls became local activities): kept as they are, never re-recorded.
NODECLAIM_SCENARIOS: dict[str, tuple[FakeCloud, Scenario, int]] = {
    "nodeclaim_happy_path": (
        FakeCloud(register_after=3, initialize_after=2, volumes_script=[1], instance_polls=1),
        deleted_when_ready,
        0,
    ),
    "nodeclaim_registration_timeout": (FakeCloud(register_after=None), nothing, 0),
    "nodeclaim_insufficient_capacity": (
        FakeCloud(launch_error="InsufficientCapacity"),
        nothing,
        0,
    ),
    "nodeclaim_expired_pdb_and_grace_period": (
        FakeCloud(
            claim=spec(expire_after_seconds=3600, termination_grace_period_seconds=120),
            drain_script=[blocked(), blocked(), DrainStatus(False, held=["ns/keep"])],
            drain_forever=DrainStatus(False, held=["ns/keep"]),
        ),
        nothing,
        0,
    ),
    "nodeclaim_disrupted": (
        FakeCloud(drain_script=[blocked(), blocked()]),
        disrupted_through_pdb,
        0,
    ),
    "nodeclaim_expiry_held_by_pause": (
        FakeCloud(claim=spec(expire_after_seconds=3600), paused_checks=2),
        nothing,
        0,
    ),
    # Shape 1: no patch markers, the short calls and the drain passes local.
    **_per_shape(1),
    # Shape 2: registration and initialization in one call, termination in one pass as far
    # as it goes (here: to the volume wait, to the drain's PDB, to the end, to the instance).
    **_per_shape(2),
    "nodeclaim_shape2_instance_slow_to_go": (
        FakeCloud(instance_polls=2),
        deleted_when_ready,
        2,
    ),
    # Shape 3: the launch a local activity too.
    **_per_shape(3),
}


async def record_nodeclaim(env: WorkflowEnvironment, name: str) -> str:
    cloud, scenario, shape = NODECLAIM_SCENARIOS[name]
    queue = f"record-{name}"
    cloud.clock = env.get_current_time
    async with Worker(
        env.client, task_queue=queue, workflows=[NodeClaimWorkflow], activities=cloud.activities()
    ):
        handle = await env.client.start_workflow(
            NodeClaimWorkflow.run,
            NodeClaimInput(name, shape=shape),
            id=contract.nodeclaim_id("record", name),
            task_queue=queue,
        )
        await scenario(env, handle)
        await handle.result()
        return (await handle.fetch_history()).to_json()


async def record_provisioner(env: WorkflowEnvironment) -> str:
    fake = FakePlanner()
    queue = "record-provisioner"
    async with Worker(
        env.client, task_queue=queue, workflows=[ProvisionerWorkflow], activities=fake.activities()
    ):
        handle = await env.client.start_workflow(
            ProvisionerWorkflow.run,
            ProvisionerInput("record"),
            id=contract.provisioner_id("record"),
            task_queue=queue,
        )
        for _ in range(3):
            await handle.signal(ProvisionerWorkflow.pods_pending, 1)
            await env.sleep(0.4)
        await env.sleep(5)
        await handle.execute_update(ProvisionerWorkflow.pause, PauseRequest("gpu"))
        await handle.execute_update(ProvisionerWorkflow.pause, PauseRequest())
        await handle.signal(ProvisionerWorkflow.pods_pending, 1)
        await env.sleep(5)
        await handle.execute_update(ProvisionerWorkflow.resume, PauseRequest())
        await env.sleep(5)
        await handle.terminate("recorded")
        return (await handle.fetch_history()).to_json()


async def record_disruption(env: WorkflowEnvironment) -> str:
    """Two rounds: one command kept through validation and carried out (a replacement polled
    until Initialized), one whose replacement fails and is undone; then a quiet slow-timer
    round."""
    ok, bad = command(["a", "b"]), command(["c"])
    fake = FakeDisruption(
        decisions=[Decision(commands=[ok]), Decision(commands=[ok])],
        readiness=lambda claims, n: (
            Readiness(pending=list(claims)) if n < 1 else Readiness(initialized=list(claims))
        ),
    )
    queue = "record-disruption"
    async with Worker(
        env.client,
        task_queue=queue,
        workflows=[DisruptionWorkflow],
        activities=fake.activities(),
    ):
        handle = await env.client.start_workflow(
            DisruptionWorkflow.run,
            DisruptionInput("record"),
            id=contract.disruption_id("record"),
            task_queue=queue,
        )
        while contract.DisruptionActivity.DELETE_NODECLAIMS not in fake.names():
            await env.sleep(1)
        await env.sleep(30)
        fake.decisions = [Decision(commands=[bad]), Decision(commands=[bad])]
        fake.readiness = lambda claims, n: Readiness(failed={claims[0]: "launch failed"})
        await handle.signal(DisruptionWorkflow.cluster_changed)
        while contract.DisruptionActivity.UNMARK not in fake.names():
            await env.sleep(1)
        await env.sleep(200)
        await handle.terminate("recorded")
        return (await handle.fetch_history()).to_json()


async def record_disruption_due(env: WorkflowEnvironment) -> str:
    """A round due when a node's consolidateAfter ends: an emptied node held 30 s, removed
    by the round that ran then (validated, deleted); then quiet slow-timer rounds."""
    fake = FakeDisruption()
    fake.engine = EmptiedNode(lambda: fake.args(contract.DisruptionActivity.DELETE_NODECLAIMS))
    queue = "record-disruption-due"
    async with Worker(
        env.client,
        task_queue=queue,
        workflows=[DisruptionWorkflow],
        activities=fake.activities(),
    ):
        handle = await env.client.start_workflow(
            DisruptionWorkflow.run,
            DisruptionInput("record-due"),
            id=contract.disruption_id("record-due"),
            task_queue=queue,
        )
        while contract.DisruptionActivity.DELETE_NODECLAIMS not in fake.names():
            await env.sleep(1)
        await env.sleep(200)
        await handle.terminate("recorded")
        return (await handle.fetch_history()).to_json()


async def record_garbage_collection(env: WorkflowEnvironment) -> str:
    """Three rounds: an orphan terminated and a template deleted; a step failing all its
    attempts while the others run; a quiet round."""
    names = contract.GarbageCollectionActivity
    fake = FakeGarbage(
        removals={names.ORPHAN_INSTANCES: [["i-0orphan"]], names.LAUNCH_TEMPLATES: [["lt-a"]]},
    )
    queue = "record-garbage-collection"
    async with Worker(
        env.client,
        task_queue=queue,
        workflows=[GarbageCollectionWorkflow],
        activities=fake.activities(),
    ):
        handle = await env.client.start_workflow(
            GarbageCollectionWorkflow.run,
            GarbageCollectionInput("record"),
            id=contract.garbage_collection_id("record"),
            task_queue=queue,
        )
        while names.LAUNCH_TEMPLATES not in fake.names():
            await env.sleep(1)
        fake.failing[names.CLAIMS_WITHOUT_INSTANCE] = 3
        while fake.names().count(names.LAUNCH_TEMPLATES) < 3:
            await env.sleep(10)
        await handle.terminate("recorded")
        return (await handle.fetch_history()).to_json()


async def main(only: list[str]) -> None:
    """Histories recorded by older code are what replay guards: re-record only on purpose."""
    env = await start_test_server()
    try:
        for name in NODECLAIM_SCENARIOS:
            if only and name not in only:
                continue
            (HERE / f"{name}.json").write_text(await record_nodeclaim(env, name))
            print("recorded", name)
        # provisioner_rounds_pause_resume.json is the same scenario recorded before the
        # planning activity created the claims (PLAN_CREATES): kept, never re-recorded.
        if not only or "provisioner_plan_creates" in only:
            history = await record_provisioner(env)
            (HERE / "provisioner_plan_creates.json").write_text(history)
            print("recorded provisioner_plan_creates")
        if not only or "disruption_rounds" in only:
            (HERE / "disruption_rounds.json").write_text(await record_disruption(env))
            print("recorded disruption_rounds")
        if not only or "disruption_due_rounds" in only:
            (HERE / "disruption_due_rounds.json").write_text(await record_disruption_due(env))
            print("recorded disruption_due_rounds")
        if not only or "garbage_collection_rounds" in only:
            history = await record_garbage_collection(env)
            (HERE / "garbage_collection_rounds.json").write_text(history)
            print("recorded garbage_collection_rounds")
    finally:
        await env.shutdown()


if __name__ == "__main__":
    _ = Client  # re-exported for readers: histories come from Client.fetch_history
    asyncio.run(main(sys.argv[1:]))
