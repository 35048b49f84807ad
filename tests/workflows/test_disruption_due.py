"""A round is due when the earliest node held only by time becomes disruptable, not at the
slow timer (issue 33: an empty node with ``consolidateAfter: 1m`` went 2.5 min after the
scale-down). The rounds run the real engine on a cluster the test describes, at the
time-skipping server's time, so the engine, not the test, says when the node is a candidate."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from models import contract
from models.contract import DisruptionActivity as names
from tests.support.disruption_fakes import EmptiedNode, FakeDisruption
from tests.support.waiting import until_skipped
from workflows.disruption.state import DUE_FLOOR, SLOW_TIMER, DisruptionInput
from workflows.disruption.trigger import quiet_wait
from workflows.disruption.workflow import DisruptionWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")
AFTER = timedelta(seconds=30)


async def test_an_emptied_node_goes_when_its_consolidate_after_ends(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    fake = FakeDisruption()
    engine = EmptiedNode(lambda: fake.args(names.DELETE_NODECLAIMS))
    fake.engine = engine
    cluster = f"c-{uuid.uuid4().hex[:6]}"
    async with Worker(
        time_env.client,
        task_queue=task_queue,
        workflows=[DisruptionWorkflow],
        activities=fake.activities(),
    ):
        handle = await time_env.client.start_workflow(
            DisruptionWorkflow.run,
            DisruptionInput(cluster),
            id=contract.disruption_id(cluster),
            task_queue=task_queue,
        )
        try:
            await until_skipped(
                time_env, lambda: names.DELETE_NODECLAIMS in fake.names(), "node deleted"
            )
        finally:
            await handle.terminate("test over")
    assert engine.emptied is not None
    computes = fake.times(names.COMPUTE)
    deleted = fake.times(names.DELETE_NODECLAIMS)[0]
    # round 1 found the node held (nothing proposed); round 2 ran when the hold ended, not
    # at the 2-minute slow timer; it proposed deleting the node, validated 15 s later
    assert computes[0] == engine.emptied
    assert AFTER <= computes[1] - engine.emptied < AFTER + timedelta(seconds=3)
    assert fake.args(names.DELETE_NODECLAIMS) == [["a-claim"]]
    assert deleted - engine.emptied < AFTER + timedelta(seconds=15 + 5)
    assert deleted - engine.emptied < SLOW_TIMER


async def test_the_quiet_wait_is_bounded_by_the_floor_and_the_slow_timer() -> None:
    now = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)
    at = lambda seconds: (now + timedelta(seconds=seconds)).isoformat()  # noqa: E731
    assert quiet_wait("", now)[0] == SLOW_TIMER
    assert quiet_wait(at(30), now) == (timedelta(seconds=30), quiet_wait(at(30), now)[1])
    assert "time hold" in quiet_wait(at(30), now)[1]
    # a hold ending at once (or already past) waits the floor: no busy loop
    assert quiet_wait(at(2), now)[0] == DUE_FLOOR
    assert quiet_wait(at(-5), now)[0] == DUE_FLOOR
    assert quiet_wait(at(600), now)[0] == SLOW_TIMER
