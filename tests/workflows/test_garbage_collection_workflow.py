"""GarbageCollectionWorkflow's choreography on the time-skipping server: every step once per
round in order, a slow timer between rounds, a failing step left for the next round without
stopping the others, and totals carried across continue-as-new (``garbage_fakes``)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from itertools import pairwise

import pytest
from temporalio.client import WorkflowHandle
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from models import contract
from models.contract import GarbageCollectionActivity as names
from tests.support.garbage_fakes import STEPS, FakeGarbage
from tests.support.waiting import until_skipped
from workflows.garbage.state import ATTEMPTS, PERIOD_SECONDS, GarbageCollectionInput
from workflows.garbage.workflow import GarbageCollectionWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")


@asynccontextmanager
async def collecting(
    env: WorkflowEnvironment, fake: FakeGarbage, task_queue: str, **inp: int
) -> AsyncIterator[WorkflowHandle[GarbageCollectionWorkflow, None]]:
    cluster = f"c-{uuid.uuid4().hex[:6]}"
    async with Worker(
        env.client,
        task_queue=task_queue,
        workflows=[GarbageCollectionWorkflow],
        activities=fake.activities(),
    ):
        handle = await env.client.start_workflow(
            GarbageCollectionWorkflow.run,
            GarbageCollectionInput(cluster, **inp),  # type: ignore[arg-type]
            id=contract.garbage_collection_id(cluster),
            task_queue=task_queue,
        )
        try:
            yield handle
        finally:
            await handle.terminate("test over")


async def test_each_round_runs_every_step_in_order_on_a_slow_timer(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    fake = FakeGarbage(
        removals={
            names.ORPHAN_INSTANCES: [["i-0orphan"]],
            names.LAUNCH_TEMPLATES: [[], ["joinery-lt-old"]],
        }
    )
    async with collecting(time_env, fake, task_queue) as handle:
        await until_skipped(
            time_env, lambda: len(fake.calls) >= 3 * len(STEPS), "three rounds", step=5
        )
        status = await handle.query(GarbageCollectionWorkflow.status)
    assert fake.names()[: 3 * len(STEPS)] == list(STEPS) * 3
    # the grace is Karpenter's 30 s, passed to every step
    assert {c[1].grace_seconds for c in fake.calls} == {30.0}
    starts = fake.times(names.ORPHAN_INSTANCES)
    assert all(b - a >= timedelta(seconds=PERIOD_SECONDS) for a, b in pairwise(starts))
    assert status.rounds >= 3
    assert status.removed == {names.ORPHAN_INSTANCES: 1, names.LAUNCH_TEMPLATES: 1}
    assert status.failed == {}


async def test_a_failing_step_waits_for_the_next_round_and_the_others_still_run(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    fake = FakeGarbage(
        removals={names.CLAIMS_WITHOUT_NODEPOOL: [["pool-a-x1"]]},
        failing={names.ORPHAN_INSTANCES: ATTEMPTS},
    )
    async with collecting(time_env, fake, task_queue) as handle:
        await until_skipped(
            time_env, lambda: names.LAUNCH_TEMPLATES in fake.names(), "first round", step=5
        )
        first = await handle.query(GarbageCollectionWorkflow.status)
        await until_skipped(
            time_env,
            lambda: fake.names().count(names.LAUNCH_TEMPLATES) >= 2,
            "second round",
            step=5,
        )
        second = await handle.query(GarbageCollectionWorkflow.status)
    # tried ATTEMPTS times in round 1, then the round went on
    assert fake.names()[: ATTEMPTS + 3] == [names.ORPHAN_INSTANCES] * ATTEMPTS + list(STEPS[1:])
    assert list(first.failed) == [names.ORPHAN_INSTANCES]
    assert "EC2 unreachable" in first.failed[names.ORPHAN_INSTANCES]
    assert "failed: gc.orphan_instances" in first.last_summary
    assert "1 claims without a NodePool deleted (pool-a-x1)" in first.last_summary
    # round 2: the step ran again and succeeded
    assert second.failed == {} and second.rounds == 2
    assert fake.names().count(names.ORPHAN_INSTANCES) == ATTEMPTS + 1


async def test_totals_survive_continue_as_new(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    fake = FakeGarbage(
        removals={names.CLAIMS_WITHOUT_INSTANCE: [["a"], ["b"], ["c"], ["d"], ["e"]]}
    )
    async with collecting(time_env, fake, task_queue, history_limit=30) as handle:
        first_run = (await handle.describe()).run_id
        await until_skipped(
            time_env,
            lambda: fake.names().count(names.CLAIMS_WITHOUT_INSTANCE) >= 5,
            "five rounds",
            step=5,
        )
        latest = time_env.client.get_workflow_handle(handle.id)
        status = await latest.query(GarbageCollectionWorkflow.status)
        assert (await latest.describe()).run_id != first_run
    assert status.rounds >= 5
    assert status.removed[names.CLAIMS_WITHOUT_INSTANCE] == 5
