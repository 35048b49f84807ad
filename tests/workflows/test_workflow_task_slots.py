"""The worker takes few workflow tasks at once (``worker.running.tuning.WORKFLOW_TASK_SLOTS``)
beside those waiting on their launch (``worker/running/slots.py``), and its local activities
never wait for threads its regular activities hold.

The SDK builds a new run's sandbox on the worker's event loop, about 0.2 s of CPU each for a
NodeClaim run on this machine; with the SDK's default of 100 slots, a burst of 100 new
lifecycles held the loop long enough for the tasks behind it to pass the 10 s workflow task
timeout, and each timed-out task rebuilt its sandbox again. The behaviour is exercised by
``tests/workflows/production/test_prod_engine_faults.py`` (100 lifecycles and a server
SIGKILL); this pins the setting that bounds it.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from datetime import timedelta
from unittest.mock import MagicMock

import pytest
from temporalio import activity, workflow
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from activities.deps import Deps
from models import contract
from worker.running import tuning
from worker.running.app import build_cluster_worker, build_worker
from worker.running.slots import WorkflowTaskSlots
from worker.running.tuning import LAUNCH_ALLOWANCE, WORKFLOW_TASK_SLOTS

pytestmark = pytest.mark.asyncio(loop_scope="session")

# One slot's sandbox build (~0.2 s of CPU) times the slots must stay well inside the 10 s
# workflow task timeout even when the worker gets a fraction of a core.
SANDBOX_BUILD_SECONDS = 0.2
TASK_TIMEOUT_SECONDS = 10


async def test_the_worker_holds_few_workflow_tasks_at_once(
    dev_env: WorkflowEnvironment, task_queue: str
) -> None:
    worker = build_worker(dev_env.client, Deps(kube=MagicMock()), task_queue)
    slots = _workflow_slots(worker)
    assert (slots.budget.workflow_slots, slots.budget.launch_allowance) == (
        WORKFLOW_TASK_SLOTS,
        LAUNCH_ALLOWANCE,
    )
    # the cluster's own workflows take their tasks from a queue of their own, with their own
    # slots: lifecycles holding every slot above cannot delay a provisioning round
    cluster = build_cluster_worker(dev_env.client, Deps(kube=MagicMock()), task_queue)
    assert cluster.task_queue == contract.cluster_workflows_queue(task_queue) != task_queue
    assert _workflow_slots(cluster).budget.workflow_slots == WORKFLOW_TASK_SLOTS
    assert _workflow_slots(cluster).budget.launch_allowance == 0  # no launches run there
    # still inside the timeout with a quarter of a core
    assert WORKFLOW_TASK_SLOTS * SANDBOX_BUILD_SECONDS * 4 < TASK_TIMEOUT_SECONDS


def _workflow_slots(worker: Worker) -> WorkflowTaskSlots:
    tuner = worker.config()["tuner"]
    assert tuner is not None
    supplier = tuner._get_workflow_task_slot_supplier()
    assert isinstance(supplier, WorkflowTaskSlots)
    return supplier


HELD = threading.Event()


@activity.defn(name="slots.hold_a_thread")
def hold_a_thread() -> None:
    """A launch or a drain: holds its thread until told."""
    HELD.wait(60)


@activity.defn(name="slots.short_call")
def short_call() -> str:
    return "done"


@workflow.defn(name="SlotsLocalCallWhileThreadsAreHeld", sandboxed=False)
class LocalCallWhileThreadsAreHeld:
    """Holds every regular activity thread, then makes a local call (a lifecycle's read)."""

    @workflow.run
    async def run(self, threads: int) -> str:
        for _ in range(threads):
            workflow.start_activity(hold_a_thread, start_to_close_timeout=timedelta(seconds=90))
        await workflow.sleep(1)  # the held activities start first
        return await workflow.execute_local_activity(
            short_call, start_to_close_timeout=timedelta(seconds=30)
        )


async def test_a_local_call_does_not_wait_for_threads_that_activities_hold(
    dev_env: WorkflowEnvironment, task_queue: str
) -> None:
    threads = 2
    HELD.clear()
    async with Worker(
        dev_env.client,
        task_queue=task_queue,
        workflows=[LocalCallWhileThreadsAreHeld],
        activities=[hold_a_thread, short_call],
        **tuning.worker_options(threads=threads),
    ):
        try:
            result = await asyncio.wait_for(
                dev_env.client.execute_workflow(
                    LocalCallWhileThreadsAreHeld.run,
                    threads,
                    id=f"slots-{uuid.uuid4().hex[:8]}",
                    task_queue=task_queue,
                ),
                timeout=20,
            )
        finally:
            HELD.set()  # let the held activities end, so the worker can shut down
    assert result == "done"


LAUNCHES_HELD = threading.Event()


class _Running:
    """Launches running now, and the most at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = 0
        self.most = 0

    def enter(self) -> None:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)

    def leave(self) -> None:
        with self.lock:
            self.now -= 1


LAUNCHING = _Running()


@activity.defn(name=contract.NodeClaimActivity.LAUNCH)
def slow_launch() -> str:
    """A CreateFleet that takes its time (until the test lets it end)."""
    LAUNCHING.enter()
    try:
        LAUNCHES_HELD.wait(60)
        return "i-launched"
    finally:
        LAUNCHING.leave()


@workflow.defn(name="SlotsLaunchLocally", sandboxed=False)
class LaunchLocally:
    """A lifecycle's launch as a local activity (shape 3)."""

    @workflow.run
    async def run(self) -> str:
        return await workflow.execute_local_activity(
            slow_launch, start_to_close_timeout=timedelta(seconds=90)
        )


@workflow.defn(name="SlotsShortTask", sandboxed=False)
class ShortTask:
    """Another lifecycle's workflow task that runs Python."""

    @workflow.run
    async def run(self) -> str:
        return await workflow.execute_local_activity(
            short_call, start_to_close_timeout=timedelta(seconds=30)
        )


async def test_launches_do_not_hold_the_workflow_task_slots(
    dev_env: WorkflowEnvironment, task_queue: str
) -> None:
    """More launches than WORKFLOW_TASK_SLOTS run at once on one worker, and another
    workflow's task still gets a slot while they all run."""
    launches = WORKFLOW_TASK_SLOTS + 12
    LAUNCHES_HELD.clear()
    LAUNCHING.most = 0
    client = dev_env.client
    prefix = f"launch-{uuid.uuid4().hex[:6]}"
    async with Worker(
        client,
        task_queue=task_queue,
        workflows=[LaunchLocally, ShortTask],
        activities=[slow_launch, short_call],
        **tuning.worker_options(threads=4),
    ) as worker:
        try:
            handles = [
                await client.start_workflow(
                    LaunchLocally.run, id=f"{prefix}-{i}", task_queue=task_queue
                )
                for i in range(launches)
            ]
            for _ in range(200):
                if LAUNCHING.now == launches:
                    break
                await asyncio.sleep(0.1)
            assert LAUNCHING.now == launches > WORKFLOW_TASK_SLOTS
            budget = _workflow_slots(worker).budget
            assert budget.launches == launches
            result = await asyncio.wait_for(
                client.execute_workflow(ShortTask.run, id=f"{prefix}-short", task_queue=task_queue),
                timeout=20,
            )
            assert result == "done"
            assert LAUNCHING.now == launches  # all still running when it got its slot
        finally:
            LAUNCHES_HELD.set()
        assert [await h.result() for h in handles] == ["i-launched"] * launches
    assert LAUNCHING.most == launches
