"""Issue 33's scale-down pacing: once every node the last round's commands deleted is gone
(the watchers' ``cluster_changed`` names their claims), the next round starts at once,
without the 5 s debounce, and not before; any other change is still debounced. Karpenter's
budget counts a node being deleted until its instance terminates, so the next batch of a
scale-down waits for those nodes either way; the debounce after them was Joinery's own."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

import pytest
from temporalio import activity
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from activities.disruption.types import Decision
from models import contract
from models.contract import DisruptionActivity as names
from tests.support.disruption_fakes import FakeDisruption, command
from tests.support.replaying import replayer
from tests.support.waiting import until_skipped
from tests.workflows.test_disruption_workflow import rounds
from workflows.disruption.state import DEBOUNCE, DisruptionInput
from workflows.disruption.workflow import HOLD_MAX, DisruptionWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")
AT_ONCE = timedelta(seconds=1)


def _emptied() -> FakeDisruption:
    """Round 1 deletes the empty nodes a and b (validated); every later round finds nothing."""
    cmd = command(["a", "b"], replacements=0, reason="Empty")
    return FakeDisruption(decisions=[Decision(commands=[cmd]), Decision(commands=[cmd])])


async def _deleted(env: WorkflowEnvironment, fake: FakeDisruption) -> None:
    await until_skipped(env, lambda: names.DELETE_NODECLAIMS in fake.names(), "round 1 deletes")


async def _next_round_after(
    env: WorkflowEnvironment, fake: FakeDisruption, signalled: datetime
) -> timedelta:
    before = len(fake.times(names.COMPUTE))
    await until_skipped(
        env, lambda: len(fake.times(names.COMPUTE)) > before, "the next round", step=0.25
    )
    return fake.times(names.COMPUTE)[-1] - signalled


async def test_the_round_after_the_deleted_nodes_are_gone_skips_the_debounce(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    fake = _emptied()
    async with rounds(time_env, fake, task_queue) as handle:
        # round 1: compute, validation, delete; no round while the deleted nodes hold the
        # budget (one now would find part of it free and propose part of a batch)
        await _deleted(time_env, fake)
        assert fake.args(names.DELETE_NODECLAIMS) == [["claim-a", "claim-b"]]
        await time_env.sleep(timedelta(seconds=10))
        assert len(fake.times(names.COMPUTE)) == 2
        # one of the two deleted nodes gone: an ordinary change, debounced
        await handle.signal(DisruptionWorkflow.cluster_changed, ["claim-a"])
        first = await time_env.get_current_time()
        await time_env.sleep(timedelta(seconds=2))
        assert len(fake.times(names.COMPUTE)) == 2
        # the other one gone too: the budget they held is free, round 2 starts now
        await handle.signal(DisruptionWorkflow.cluster_changed, ["claim-b"])
        second = await time_env.get_current_time()
        assert await _next_round_after(time_env, fake, second) < AT_ONCE
        assert second - first < DEBOUNCE  # not the first signal's debounce running out
        # with nothing awaited any more, the next change is debounced again
        await handle.signal(DisruptionWorkflow.cluster_changed, ["claim-x"])
        third = await time_env.get_current_time()
        assert await _next_round_after(time_env, fake, third) >= DEBOUNCE
        history = await handle.fetch_history()
    # the run's own history replays (the patch marker, the signals' names)
    await replayer(DisruptionWorkflow).replay_workflow(history)


async def test_changes_that_name_no_deleted_node_are_debounced(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    fake = _emptied()
    async with rounds(time_env, fake, task_queue) as handle:
        await _deleted(time_env, fake)
        await handle.signal(DisruptionWorkflow.cluster_changed)  # an old sender: no names
        at = await time_env.get_current_time()
        assert await _next_round_after(time_env, fake, at) >= DEBOUNCE
        await handle.signal(DisruptionWorkflow.cluster_changed, ["claim-other"])
        at = await time_env.get_current_time()
        assert await _next_round_after(time_env, fake, at) >= DEBOUNCE


async def test_a_node_gone_before_the_delete_returned_still_counts(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    """A Node can go, and its signal arrive, while the delete activity still runs: the
    workflow must not then wait for a name it has already been told."""
    fake = _emptied()
    cluster = f"c-{uuid.uuid4().hex[:6]}"
    handle = time_env.client.get_workflow_handle(contract.disruption_id(cluster))

    @activity.defn(name=names.DELETE_NODECLAIMS)
    async def delete(claims: list[str]) -> int:
        fake._record(names.DELETE_NODECLAIMS, claims)
        await handle.signal(DisruptionWorkflow.cluster_changed, ["claim-a"])
        return len(claims)

    others = [a for a in fake.activities() if a.__name__ != "delete"]
    async with Worker(
        time_env.client,
        task_queue=task_queue,
        workflows=[DisruptionWorkflow],
        activities=[*others, delete],
    ):
        await time_env.client.start_workflow(
            DisruptionWorkflow.run, DisruptionInput(cluster), id=handle.id, task_queue=task_queue
        )
        try:
            await _deleted(time_env, fake)
            await time_env.sleep(timedelta(seconds=3))
            # claim-a's signal came during the delete: no round yet for it alone
            assert len(fake.times(names.COMPUTE)) == 2
            await handle.signal(DisruptionWorkflow.cluster_changed, ["claim-b"])
            at = await time_env.get_current_time()
            assert await _next_round_after(time_env, fake, at) < AT_ONCE
        finally:
            await handle.terminate("test over")


async def test_an_empty_batch_holds_when_the_second_decision_deletes_more(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    """Proposed while the last batch was leaving (part of its budget free), validated once
    all of it is free: Karpenter validates an emptiness command node by node, so the nodes
    proposed are deleted, not dropped for a new 15 s round."""
    fake = FakeDisruption(
        decisions=[
            Decision(commands=[command(["a", "b"], replacements=0, reason="Empty")]),
            Decision(commands=[command(["a", "b", "c"], replacements=0, reason="Empty")]),
            Decision(commands=[command(["d"], replacements=0, reason="Empty")]),
            Decision(commands=[command(["e"], replacements=0, reason="Empty")]),
        ]
    )
    async with rounds(time_env, fake, task_queue) as handle:
        await _deleted(time_env, fake)
        await handle.signal(DisruptionWorkflow.cluster_changed, ["claim-a", "claim-b"])
        await until_skipped(time_env, lambda: len(fake.times(names.COMPUTE)) >= 4, "round 2")
        history = await handle.fetch_history()
    # round 1's two nodes go; round 2's d is no longer an empty node to delete: dropped
    assert fake.args(names.DELETE_NODECLAIMS) == [["claim-a", "claim-b"]]
    await replayer(DisruptionWorkflow).replay_workflow(history)


async def test_with_no_signal_at_all_the_round_after_commands_still_comes(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    """The signals naming the deleted nodes can be lost with a worker: the round the
    commands call for comes HOLD_MAX later all the same, not at the 2-minute slow timer."""
    fake = _emptied()
    async with rounds(time_env, fake, task_queue):
        await _deleted(time_env, fake)
        deleted = fake.times(names.DELETE_NODECLAIMS)[0]
        await until_skipped(time_env, lambda: len(fake.times(names.COMPUTE)) >= 3, "round 2")
    assert HOLD_MAX <= fake.times(names.COMPUTE)[2] - deleted < HOLD_MAX + AT_ONCE
