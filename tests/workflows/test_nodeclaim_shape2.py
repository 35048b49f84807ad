"""The lifecycle's shape 2 on the time-skipping server, activities doubled: registration and
initialization in one call, termination in one pass that stops at the first step that must
wait and leaves the rest to the per-step loops. Shape 3 (test_nodeclaim_shape3.py) keeps all
of it; runs started as shape 2 take this path (each run here is started with shape 2)."""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.testing import WorkflowEnvironment

from activities.lifecycle.types import DrainStatus
from models.contract import NodeClaimActivity as names
from tests.support.nodeclaim_runs import launches, lifecycle, local_calls, run_to_end, until_phase
from tests.support.workflow_fakes import FakeCloud, blocked, spec
from workflows.nodeclaim.workflow import NodeClaimWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")

TERMINATION_PHASES = ["Draining", "AwaitingVolumeDetachment", "Terminating", "Finalizing"]


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text)


def from_the_pass(cloud: FakeCloud) -> list[str]:
    """The calls after the termination pass and the begin-termination and drain calls
    that come next in every one of these runs (checked here); the tests check the rest."""
    calls = cloud.names()[cloud.names().index(names.TERMINATION_PASS) :]
    assert calls[:3] == [names.TERMINATION_PASS, names.BEGIN_TERMINATION, names.DRAIN], calls
    return calls[3:]


def gaps(cloud: FakeCloud, name: str) -> list[int]:
    return [round((b - a).total_seconds()) for a, b in itertools.pairwise(cloud.times(name))]


async def test_happy_path_is_four_local_calls_and_one_launch(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    """A Node ready at registration, nothing to wait for at termination: prepare, one call
    for registration and initialization, one termination pass; 15 events (the benchmark's
    lifecycle, less the expiry check)."""
    cloud = FakeCloud()
    history, timings = await run_to_end(time_env, cloud, task_queue)
    assert local_calls(history) == [
        names.PREPARE,
        names.REGISTER_AND_INITIALIZE,
        names.TERMINATION_PASS,
    ]
    assert launches(history) == [(names.LAUNCH, "launch-1")]
    # every phase entered, the ones the pass went through included
    assert set(timings) >= {"Launching", "Registering", "Initializing", "Ready"} | set(
        [*TERMINATION_PHASES, "Terminated"]
    )
    # the steps themselves ran once each, in Karpenter's order
    steps = [n for n in cloud.names() if n not in (names.PREPARE, names.LAUNCH)]
    assert steps == [
        names.REGISTER_AND_INITIALIZE,
        names.REGISTER,
        names.INITIALIZE,
        names.TERMINATION_PASS,
        names.BEGIN_TERMINATION,
        names.DRAIN,
        names.VOLUMES,
        names.TERMINATE_INSTANCE,
        names.FINALIZE,
    ]
    kinds = [e.event_type for e in history.events]
    assert kinds.count(EventType.EVENT_TYPE_MARKER_RECORDED) == 3
    assert kinds.count(EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) == 1
    assert kinds.count(EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES) == 0


async def test_the_pass_stops_at_a_drain_blocked_by_a_pdb(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    """The pass's drain is refused by a PDB: it stops there; the drain loop backs off from
    that answer (1 s, 2 s) and the later steps run one by one."""
    cloud = FakeCloud(drain_script=[blocked(), blocked()])
    async with lifecycle(time_env, cloud, task_queue, shape=2) as handle:
        await until_phase(time_env, handle, "Ready")
        await handle.signal(NodeClaimWorkflow.deleted, "NodeClaim")
        status = await until_phase(time_env, handle, "Draining")
        assert status.waiting_for == "PodDisruptionBudget ns/web-pdb"
        assert status.blocked == ["ns/web-0 (ns/web-pdb)"]
        assert await handle.result() == "Terminated"
        history = await handle.fetch_history()
    after_drain = from_the_pass(cloud)
    # the pass's drain was blocked: the pass stopped there
    assert after_drain == [
        names.DRAIN,
        names.DRAIN,
        names.VOLUMES,
        names.TERMINATE_INSTANCE,
        names.FINALIZE,
    ]
    assert gaps(cloud, names.DRAIN) == [1, 2]
    assert local_calls(history)[-6:] == [
        names.TERMINATION_PASS,
        names.DRAIN,
        names.DRAIN,
        names.VOLUMES,
        names.TERMINATE_INSTANCE,
        names.FINALIZE,
    ]
    assert local_calls(history).count(names.BEGIN_TERMINATION) == 0


async def test_the_pass_stops_at_attached_volumes(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    cloud = FakeCloud(volumes_script=[2, 1])
    history, timings = await run_to_end(time_env, cloud, task_queue)
    after_drain = from_the_pass(cloud)
    assert after_drain == [
        names.VOLUMES,  # 2 attached: the pass stops
        names.VOLUMES,
        names.VOLUMES,
        names.TERMINATE_INSTANCE,
        names.FINALIZE,
    ]
    assert gaps(cloud, names.VOLUMES) == [5, 5]
    assert set(timings) >= set(TERMINATION_PHASES)
    # the volume wait is timed from the pass, which entered AwaitingVolumeDetachment
    waited = _at(timings["Terminating"]) - _at(timings["AwaitingVolumeDetachment"])
    assert timedelta(seconds=10) <= waited < timedelta(seconds=12)
    assert local_calls(history)[-5:] == [
        names.TERMINATION_PASS,
        names.VOLUMES,
        names.VOLUMES,
        names.TERMINATE_INSTANCE,
        names.FINALIZE,
    ]


async def test_the_pass_stops_at_an_instance_not_yet_gone(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    cloud = FakeCloud(instance_polls=2)
    history, timings = await run_to_end(time_env, cloud, task_queue)
    after_drain = from_the_pass(cloud)
    assert after_drain == [
        names.VOLUMES,
        names.TERMINATE_INSTANCE,  # still terminating: the pass stops
        names.TERMINATE_INSTANCE,
        names.TERMINATE_INSTANCE,
        names.FINALIZE,
    ]
    assert gaps(cloud, names.TERMINATE_INSTANCE) == [5, 5]
    assert set(timings) >= set(TERMINATION_PHASES)
    assert local_calls(history)[-4:] == [
        names.TERMINATION_PASS,
        names.TERMINATE_INSTANCE,
        names.TERMINATE_INSTANCE,
        names.FINALIZE,
    ]


async def test_the_grace_period_still_bounds_a_drain_the_pass_began(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    """A do-not-disrupt pod holds the drain, volumes stay attached: both waits end at the
    terminationGracePeriod's deadline, counted from the pass's begin."""
    cloud = FakeCloud(
        claim=spec(termination_grace_period_seconds=600),
        drain_forever=DrainStatus(done=False, held=["ns/batch-0"]),
        volumes_script=[2] * 50,
    )
    history, _ = await run_to_end(time_env, cloud, task_queue)
    start = cloud.times(names.BEGIN_TERMINATION)[0]
    terminated = cloud.times(names.TERMINATE_INSTANCE)[0]
    assert timedelta(seconds=600) <= terminated - start < timedelta(seconds=620)
    assert cloud.args(names.DRAIN)[0].grace_deadline is not None
    assert local_calls(history).count(names.TERMINATION_PASS) == 1


async def test_a_failing_pass_leaves_the_steps_to_the_per_step_calls(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    cloud = FakeCloud(failures={names.TERMINATION_PASS: 1})
    await run_to_end(time_env, cloud, task_queue)
    # the pass failed (non-retryable) before any step: the termination and drain that
    # follow it are the per-step calls, and so is the rest
    after_drain = from_the_pass(cloud)
    assert after_drain == [
        names.VOLUMES,
        names.TERMINATE_INSTANCE,
        names.FINALIZE,
    ]


async def test_a_local_call_that_fails_pauses_and_tries_again(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    """A local call's non-retryable failure (RBAC, say) arrives unwrapped, not as an
    ActivityError: the step still pauses a minute and tries again instead of failing the
    run, which would leave the instance behind."""
    cloud = FakeCloud(failures={names.VOLUMES: 2})
    await run_to_end(time_env, cloud, task_queue)
    # the pass fails at its volume check and the steps go one by one: that check fails too,
    # and a minute later the next answers
    assert gaps(cloud, names.VOLUMES) == [0, 60]
    after_drain = from_the_pass(cloud)
    assert after_drain == [
        names.VOLUMES,  # fails: the pass fails
        names.BEGIN_TERMINATION,
        names.DRAIN,
        names.VOLUMES,  # fails: a minute's pause
        names.VOLUMES,
        names.TERMINATE_INSTANCE,
        names.FINALIZE,
    ]


async def test_a_node_not_yet_initialized_is_polled_from_the_combined_answer(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    """The Node registers at the third check and initializes two checks later: the combined
    call's answer is the first initialization check, the next come 1 s and 2 s after it."""
    cloud = FakeCloud(register_after=2, initialize_after=2)
    history, timings = await run_to_end(time_env, cloud, task_queue)
    assert cloud.names().count(names.REGISTER_AND_INITIALIZE) == 3
    assert cloud.names().count(names.REGISTER) == 3
    assert cloud.names().count(names.INITIALIZE) == 3
    assert gaps(cloud, names.INITIALIZE) == [1, 2]
    calls = local_calls(history)
    assert calls.count(names.INITIALIZE) == 2 and calls.count(names.REGISTER) == 0
    assert _at(timings["Registering"]) < _at(timings["Initializing"]) < _at(timings["Ready"])


async def test_a_run_a_shape_1_worker_began_goes_on_as_shape_1(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    """The claim was read by code that knows no shape 2 (its spec unstamped): the run was
    started as shape 2 but takes shape 1's path, as that worker's own tasks did."""
    cloud = FakeCloud(read_by_shape=0)
    history, _ = await run_to_end(time_env, cloud, task_queue)
    assert names.REGISTER_AND_INITIALIZE not in cloud.names()
    assert names.TERMINATION_PASS not in cloud.names()
    assert local_calls(history) == [
        names.PREPARE,
        names.REGISTER,
        names.INITIALIZE,
        names.BEGIN_TERMINATION,
        names.DRAIN,
        names.VOLUMES,
        names.TERMINATE_INSTANCE,
        names.FINALIZE,
    ]
    assert launches(history) == [(names.LAUNCH, "2")]  # numbered by the SDK, as shape 1 did


async def test_shape_1_is_unchanged(time_env: WorkflowEnvironment, task_queue: str) -> None:
    history, _ = await run_to_end(time_env, FakeCloud(), task_queue, shape=1)
    assert len(local_calls(history)) == 8
    assert launches(history) == [(names.LAUNCH, "2")]
