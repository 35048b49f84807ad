"""DisruptionWorkflow's choreography on the time-skipping server; the test decides what the
engine says and how replacements fare (``disruption_fakes``)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import timedelta

import pytest
from temporalio.client import WorkflowHandle
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from activities.disruption.types import Decision, Readiness
from models import contract
from models.contract import DisruptionActivity as names
from tests.support.disruption_fakes import FakeDisruption, command
from tests.support.round_history import read_run
from tests.support.waiting import until_skipped
from workflows.disruption.execute import command_timeout
from workflows.disruption.state import DisruptionInput
from workflows.disruption.workflow import DisruptionWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")


@asynccontextmanager
async def rounds(
    env: WorkflowEnvironment,
    fake: FakeDisruption,
    task_queue: str,
    inp: Callable[[str], DisruptionInput] = DisruptionInput,
) -> AsyncIterator[WorkflowHandle[DisruptionWorkflow, None]]:
    cluster = f"c-{uuid.uuid4().hex[:6]}"
    async with Worker(
        env.client,
        task_queue=task_queue,
        workflows=[DisruptionWorkflow],
        activities=fake.activities(),
    ):
        handle = await env.client.start_workflow(
            DisruptionWorkflow.run,
            inp(cluster),
            id=contract.disruption_id(cluster),
            task_queue=task_queue,
        )
        try:
            yield handle
        finally:
            await handle.terminate("test over")


async def test_a_valid_command_runs_after_the_validation_delay(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    keep, drop = command(["a", "b"]), command(["c"], replacements=0, reason="Empty")
    fake = FakeDisruption(
        decisions=[Decision(commands=[keep, drop]), Decision(commands=[keep])],
        readiness=lambda claims, n: (
            Readiness(pending=list(claims)) if n < 2 else Readiness(initialized=list(claims))
        ),
    )
    async with rounds(time_env, fake, task_queue) as handle:
        await until_skipped(time_env, lambda: names.DELETE_NODECLAIMS in fake.names(), "deleted")
        status = await handle.query(DisruptionWorkflow.status)
    first, second = fake.times(names.COMPUTE)[:2]
    assert second - first >= timedelta(seconds=15)
    # only the command in both decisions ran, in order: mark → launch → initialized → delete
    assert fake.names()[:8] == [
        names.COMPUTE,
        names.COMPUTE,
        names.MARK,
        names.LAUNCH_REPLACEMENTS,
        names.REPLACEMENTS_INITIALIZED,
        names.REPLACEMENTS_INITIALIZED,
        names.REPLACEMENTS_INITIALIZED,
        names.DELETE_NODECLAIMS,
    ]
    assert fake.args(names.MARK)[0].nodes == ["a", "b"]
    assert fake.args(names.DELETE_NODECLAIMS) == [["claim-a", "claim-b"]]
    assert names.UNMARK not in fake.names()
    assert status.commands_done == 1 and status.rounds >= 1
    # one validation delay waited (rounds with nothing proposed wait none): the figure the
    # consolidation scenario subtracts to report Joinery's own time
    assert status.validations == 1
    assert "replace 2 nodes by 1 m5.large" in status.last_action
    assert "(1 invalidated)" in status.last_action


async def test_the_validation_delay_is_the_one_the_workflow_was_started_with(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    cmd = command(["a"])
    fake = FakeDisruption(
        decisions=[Decision(commands=[cmd]), Decision(commands=[cmd])],
        readiness=lambda claims, n: Readiness(initialized=list(claims)),
    )
    started = lambda cluster: DisruptionInput(cluster, validation_delay_seconds=4.0)  # noqa: E731
    async with rounds(time_env, fake, task_queue, started) as handle:
        await until_skipped(
            time_env, lambda: names.DELETE_NODECLAIMS in fake.names(), "deleted", 0.5
        )
        history = await handle.fetch_history()
    first, second = fake.times(names.COMPUTE)[:2]
    assert timedelta(seconds=4) <= second - first < timedelta(seconds=15)
    # the round's history read back counts that timer as the validation delay
    read = await read_run(history.events, time_env.client.data_converter)
    assert [round(t.validation) for t in read.timings] == [4]


async def test_a_failed_replacement_is_undone(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    cmd = command(["a"])
    fake = FakeDisruption(
        decisions=[Decision(commands=[cmd]), Decision(commands=[cmd])],
        readiness=lambda claims, n: Readiness(failed={claims[0]: "launch failed: ICE"}),
    )
    async with rounds(time_env, fake, task_queue) as handle:
        await until_skipped(time_env, lambda: names.UNMARK in fake.names(), "unmarked")
        await until_skipped(
            time_env, lambda: len(fake.args(names.DELETE_NODECLAIMS)) == 1, "undone"
        )
        status = await handle.query(DisruptionWorkflow.status)
    # the candidates stay; only what was launched for them is deleted
    assert fake.args(names.DELETE_NODECLAIMS) == [[r.name for r in cmd.replacements]]
    assert fake.args(names.UNMARK)[0].nodes == ["a"]
    assert status.commands_failed == 1 and "launch failed: ICE" in status.last_action


async def test_replacements_that_never_initialize_time_out(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    cmd = command(["a"])
    fake = FakeDisruption(
        decisions=[Decision(commands=[cmd]), Decision(commands=[cmd])],
        readiness=lambda claims, n: Readiness(pending=list(claims)),
    )
    async with rounds(time_env, fake, task_queue):
        await until_skipped(time_env, lambda: names.UNMARK in fake.names(), "gave up", step=10)
    launched = fake.times(names.LAUNCH_REPLACEMENTS)[0]
    gave_up = fake.times(names.UNMARK)[0]
    assert timedelta(minutes=10) <= gave_up - launched < timedelta(minutes=11)
    assert fake.args(names.DELETE_NODECLAIMS) == [[r.name for r in cmd.replacements]]


async def test_nothing_changes_so_rounds_come_from_the_slow_timer(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    fake = FakeDisruption()
    async with rounds(time_env, fake, task_queue) as handle:
        await until_skipped(time_env, lambda: len(fake.times(names.COMPUTE)) >= 3, "three rounds")
        times = fake.times(names.COMPUTE)
        assert times[2] - times[1] >= timedelta(minutes=2)
        # a change (debounced) starts a round well before the slow timer
        await handle.signal(DisruptionWorkflow.cluster_changed)
        before = len(fake.times(names.COMPUTE))
        await until_skipped(
            time_env, lambda: len(fake.times(names.COMPUTE)) > before, "signalled round"
        )
        gap = fake.times(names.COMPUTE)[-1] - fake.times(names.COMPUTE)[-2]
    assert gap < timedelta(minutes=2)


async def test_a_round_without_a_decision_is_abandoned_not_the_workflow(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    """Found by the crash test: SIGKILLs used up the compute activity's attempts and the
    cluster's one disruption workflow failed with it (taking every later round along)."""
    cmd = command(["a"], replacements=0, reason="Empty")
    fake = FakeDisruption(
        decisions=[Decision(commands=[cmd]), Decision(commands=[cmd])], compute_failures=1
    )
    async with rounds(time_env, fake, task_queue) as handle:
        for _ in range(60):
            status = await handle.query(DisruptionWorkflow.status)
            if "round abandoned" in status.last_summary:
                break
            await time_env.sleep(timedelta(seconds=1))
        assert "round abandoned" in status.last_summary and status.phase == "Idle"
        await handle.signal(DisruptionWorkflow.cluster_changed)
        await until_skipped(time_env, lambda: names.DELETE_NODECLAIMS in fake.names(), "next round")
        status = await handle.query(DisruptionWorkflow.status)
    assert status.commands_done == 1 and fake.args(names.DELETE_NODECLAIMS) == [cmd.claims]


async def test_command_timeout_is_karpenters() -> None:
    assert command_timeout(1) == timedelta(minutes=10)
    assert command_timeout(10_000) == timedelta(seconds=800)
    assert command_timeout(1_000_000) == timedelta(hours=1)
