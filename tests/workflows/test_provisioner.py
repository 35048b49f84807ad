"""ProvisionerWorkflow batching, pause/resume and rounds on the time-skipping server."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from temporalio.client import WorkflowHandle, WorkflowUpdateFailedError
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from models import contract
from tests.support.provisioner_fakes import FakePlanner
from workflows.provisioner import (
    Batching,
    PauseRequest,
    ProvisionerInput,
    ProvisionerWorkflow,
)

pytestmark = pytest.mark.asyncio(loop_scope="session")


@asynccontextmanager
async def provisioner(
    env: WorkflowEnvironment, fake: FakePlanner, task_queue: str, **kw: Any
) -> AsyncIterator[WorkflowHandle[ProvisionerWorkflow, None]]:
    async with Worker(
        env.client,
        task_queue=task_queue,
        workflows=[ProvisionerWorkflow],
        activities=fake.activities(),
    ):
        cluster = f"c-{uuid.uuid4().hex[:6]}"
        handle = await env.client.start_workflow(
            ProvisionerWorkflow.run,
            ProvisionerInput(cluster, **kw),
            id=contract.provisioner_id(cluster),
            task_queue=task_queue,
        )
        yield handle
        await handle.terminate("test over")


async def test_signals_are_batched_until_idle(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    fake = FakePlanner()
    async with provisioner(time_env, fake, task_queue) as handle:
        start = await time_env.get_current_time()
        for _ in range(4):
            await handle.signal(ProvisionerWorkflow.pods_pending, 1)
            await time_env.sleep(0.5)
        for _ in range(20):
            if fake.started:
                break
            await time_env.sleep(1)
        status = await handle.query(ProvisionerWorkflow.status)
    assert len(fake.plans) == 1
    waited = (fake.plans[0][1] - start).total_seconds()
    assert 2.4 <= waited <= 3.5  # last signal at ~1.5 s, then 1 s idle
    assert fake.created == fake.started == ["default-10"]
    assert status.rounds == 1 and status.created == 1


async def test_a_busy_stream_is_cut_at_ten_seconds(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    fake = FakePlanner()
    async with provisioner(time_env, fake, task_queue) as handle:
        start = await time_env.get_current_time()
        for _ in range(30):
            await handle.signal(ProvisionerWorkflow.pods_pending, 1)
            await time_env.sleep(0.5)
        for _ in range(10):
            await time_env.sleep(1)
    assert len(fake.plans) >= 2
    first = (fake.plans[0][1] - start).total_seconds()
    assert 9.5 <= first <= 11


async def test_the_batch_window_comes_from_the_input(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    """BATCH_IDLE_DURATION=3s, BATCH_MAX_DURATION=5s: signals 2 s apart never leave 3 s of
    quiet, so the round starts when the 5 s window closes, not 1 s after the last signal."""
    fake = FakePlanner()
    async with provisioner(
        time_env, fake, task_queue, batch_idle_seconds=3.0, batch_max_seconds=5.0
    ) as handle:
        start = await time_env.get_current_time()
        for _ in range(4):
            await handle.signal(ProvisionerWorkflow.pods_pending, 1)
            await time_env.sleep(2)
        for _ in range(10):
            if fake.plans:
                break
            await time_env.sleep(1)
    first = (fake.plans[0][1] - start).total_seconds()
    assert 4.5 <= first <= 6


async def test_a_running_provisioner_takes_a_new_batch_window_by_signal(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    """A worker restarted with another BATCH_IDLE_DURATION signals it (``batching``) to the
    run already going: the next round waits 4 s of quiet, where the input said 1 s."""
    fake = FakePlanner()
    async with provisioner(time_env, fake, task_queue) as handle:
        await handle.signal(ProvisionerWorkflow.batching, Batching(4.0, 30.0))
        start = await time_env.get_current_time()
        await handle.signal(ProvisionerWorkflow.pods_pending, 1)
        for _ in range(10):
            if fake.plans:
                break
            await time_env.sleep(1)
    waited = (fake.plans[0][1] - start).total_seconds()
    assert 3.5 <= waited <= 5.5


async def test_pause_and_resume(time_env: WorkflowEnvironment, task_queue: str) -> None:
    fake = FakePlanner()
    async with provisioner(time_env, fake, task_queue) as handle:
        assert "paused for every" in await handle.execute_update(
            ProvisionerWorkflow.pause, PauseRequest()
        )
        with pytest.raises(WorkflowUpdateFailedError) as again:
            await handle.execute_update(ProvisionerWorkflow.pause, PauseRequest())
        assert "already paused" in str(again.value.cause)
        with pytest.raises(WorkflowUpdateFailedError) as bad:
            await handle.execute_update(ProvisionerWorkflow.pause, PauseRequest("Not_A_Pool!"))
        assert "not a valid NodePool name" in str(bad.value.cause)
        await handle.execute_update(ProvisionerWorkflow.pause, PauseRequest("gpu"))
        await handle.signal(ProvisionerWorkflow.pods_pending, 1)
        await time_env.sleep(15)
        assert fake.plans == []
        message = await handle.execute_update(ProvisionerWorkflow.resume, PauseRequest())
        assert "still paused: gpu" in message
        for _ in range(15):
            if fake.plans:
                break
            await time_env.sleep(1)
        assert fake.plans[0][0].paused_pools == ["gpu"]
        with pytest.raises(WorkflowUpdateFailedError) as not_paused:
            await handle.execute_update(ProvisionerWorkflow.resume, PauseRequest("web"))
        assert "NodePool web is not paused" in str(not_paused.value.cause)
        status = await handle.query(ProvisionerWorkflow.status)
        assert not status.paused_all and status.paused_pools == ["gpu"]


async def test_pause_survives_continue_as_new(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    fake = FakePlanner()
    async with provisioner(time_env, fake, task_queue, history_limit=30) as handle:
        await handle.execute_update(ProvisionerWorkflow.pause, PauseRequest("gpu"))
        first_run = (await handle.describe()).run_id
        for _ in range(4):
            await handle.signal(ProvisionerWorkflow.pods_pending, 1)
            await time_env.sleep(3)
        latest = time_env.client.get_workflow_handle(handle.id)
        assert (await latest.describe()).run_id != first_run
        status = await latest.query(ProvisionerWorkflow.status)
        assert status.paused_pools == ["gpu"] and status.rounds >= 2


async def test_a_big_burst_keeps_the_history_small(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    """A round of 2,000 NodeClaims records their names, not their bodies: the planning
    activity creates the claims, the start activity gets the names."""
    fake = FakePlanner(claims_per_round=2_000)
    async with provisioner(time_env, fake, task_queue) as handle:
        await handle.signal(ProvisionerWorkflow.pods_pending, 1)
        for _ in range(30):
            if fake.started:
                break
            await time_env.sleep(1)
        history = await handle.fetch_history()
    assert len(fake.started) == 2_000 and fake.started == fake.created
    sizes = {}
    for event in history.events:
        if event.HasField("activity_task_scheduled_event_attributes"):
            attrs = event.activity_task_scheduled_event_attributes
            sizes[f"{attrs.activity_type.name} input"] = attrs.input.ByteSize()
        if event.HasField("activity_task_completed_event_attributes"):
            result = event.activity_task_completed_event_attributes.result
            sizes[f"event {event.event_id} result"] = result.ByteSize()
    # ~20 bytes a name, where one claim's body alone is about a kilobyte
    assert set(sizes) >= {
        "provisioning.plan_and_create input",
        "provisioning.start_lifecycles input",
    }
    assert max(sizes.values()) < 2_000 * 32, sizes
    assert sum(sizes.values()) < 2_000 * 64, sizes
