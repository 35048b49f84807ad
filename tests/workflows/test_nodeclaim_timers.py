"""NodeClaimWorkflow timing and control flow on the time-skipping server, activities doubled."""

from __future__ import annotations

import itertools
from datetime import timedelta

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowHistory, WorkflowUpdateFailedError
from temporalio.testing import WorkflowEnvironment

from activities.lifecycle.types import DrainStatus
from models import contract
from models.contract import NodeClaimActivity as names
from tests.support.nodeclaim_runs import SLACK, lifecycle, until_phase
from tests.support.workflow_fakes import FakeCloud, blocked, spec
from workflows.nodeclaim.state import DisruptRequest
from workflows.nodeclaim.workflow import NodeClaimWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")


def history_markers(history: WorkflowHistory) -> list[str]:
    return [
        e.marker_recorded_event_attributes.marker_name
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED
    ]


@pytest.mark.parametrize(
    "shape", [contract.NODECLAIM_SHAPE, 2, 1, 0], ids=["current", "shape-2", "shape-1", "shape-0"]
)
async def test_happy_path_then_deletion(
    time_env: WorkflowEnvironment, task_queue: str, shape: int
) -> None:
    cloud = FakeCloud(register_after=3, initialize_after=2, volumes_script=[1], instance_polls=1)
    async with lifecycle(time_env, cloud, task_queue, shape=shape) as handle:
        status = await until_phase(time_env, handle, "Ready")
        assert status.instance_type == "m5.large" and status.node_name == "i-0123456789"
        assert set(status.timings) >= {"Launching", "Registering", "Initializing", "Ready"}
        await handle.signal(NodeClaimWorkflow.deleted, "NodeClaim")
        assert await handle.result() == "Terminated"
        history = await handle.fetch_history()
    kinds = [e.event_type for e in history.events]
    patches = [m for m in history_markers(history) if m == "core_patch"]
    regular = kinds.count(EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
    upserts = kinds.count(EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES)
    if shape >= 3:  # no patch marker, no upsert; the launch is local too
        assert (len(patches), upserts, regular) == (0, 0, 0)
    elif shape:  # no patch marker, no TemporalChangeVersion upsert; only the launch is regular
        assert (len(patches), upserts, regular) == (0, 0, 1)
    else:  # the local-short-calls patch, its upsert; the launch and the drain are regular
        assert (len(patches), upserts, regular) == (1, 1, 2)
    # the steps, whether called one by one or by shape 2's combined calls
    combined = (names.REGISTER_AND_INITIALIZE, names.TERMINATION_PASS)
    assert any(n in combined for n in cloud.names()) == (shape >= 2)
    order = [n for n in cloud.names() if n not in (names.REGISTER, names.INITIALIZE, *combined)]
    assert order == [
        names.PREPARE,
        names.LAUNCH,
        names.BEGIN_TERMINATION,
        names.DRAIN,
        names.VOLUMES,
        names.VOLUMES,
        names.TERMINATE_INSTANCE,
        names.TERMINATE_INSTANCE,
        names.FINALIZE,
    ]
    assert cloud.names().count(names.REGISTER) == 4
    assert cloud.names().count(names.INITIALIZE) == 3
    # registration polls back off: 1 s, 2 s, 4 s
    times = cloud.times(names.REGISTER)
    gaps = [round((b - a).total_seconds()) for a, b in itertools.pairwise(times)]
    assert gaps == [1, 2, 4]
    assert cloud.args(names.BEGIN_TERMINATION)[0].reason == "Deleted"


async def test_registration_timeout_terminates(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    cloud = FakeCloud(register_after=None)
    async with lifecycle(time_env, cloud, task_queue) as handle:
        assert await handle.result() == "Terminated"
    begin = cloud.args(names.BEGIN_TERMINATION)[0]
    assert begin.reason == "RegistrationTimeout"
    assert begin.provider_id == "aws:///us-east-1a/i-0123456789"
    waited = cloud.times(names.BEGIN_TERMINATION)[0] - cloud.times(names.PREPARE)[0]
    assert timedelta(minutes=15) - SLACK <= waited < timedelta(minutes=16)
    assert names.DRAIN not in cloud.names()
    instance = cloud.args(names.TERMINATE_INSTANCE)[0]
    assert instance.provider_id == "aws:///us-east-1a/i-0123456789"
    assert cloud.names()[-1] == names.FINALIZE


async def test_insufficient_capacity_deletes_at_once(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    cloud = FakeCloud(launch_error="InsufficientCapacity")
    async with lifecycle(time_env, cloud, task_queue) as handle:
        assert await handle.result() == "Terminated"
    assert cloud.names().count(names.LAUNCH) == 1
    assert cloud.args(names.BEGIN_TERMINATION)[0].reason == "InsufficientCapacity"
    assert cloud.args(names.TERMINATE_INSTANCE)[0].provider_id is None  # found by tag
    assert cloud.times(names.FINALIZE)[0] - cloud.times(names.PREPARE)[0] < timedelta(seconds=5)


async def test_expire_after_is_a_durable_timer(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    cloud = FakeCloud(claim=spec(expire_after_seconds=6 * 3600))
    async with lifecycle(time_env, cloud, task_queue) as handle:
        assert await handle.result() == "Terminated"
    assert cloud.args(names.BEGIN_TERMINATION)[0].reason == "Expired"
    lived = cloud.times(names.BEGIN_TERMINATION)[0] - cloud.times(names.PREPARE)[0]
    assert timedelta(hours=6) - SLACK <= lived < timedelta(hours=6, minutes=1)


async def test_a_paused_pool_holds_expiry(time_env: WorkflowEnvironment, task_queue: str) -> None:
    """Expired while the operator has paused disruption: the node stays, re-checking every
    minute, and goes at the first check after resume."""
    cloud = FakeCloud(claim=spec(expire_after_seconds=3600), paused_checks=3)
    async with lifecycle(time_env, cloud, task_queue) as handle:
        status = await until_phase(time_env, handle, "Ready")
        for _ in range(100):
            status = await handle.query(NodeClaimWorkflow.status)
            if status.waiting_for:
                break
            await time_env.sleep(60)
        assert status.waiting_for == "disruption is paused for NodePool default"
        assert await handle.result() == "Terminated"
    assert cloud.args(names.BEGIN_TERMINATION)[0].reason == "Expired"
    checks = cloud.times(names.DISRUPTION_HOLD)
    assert len(checks) == 4 and cloud.args(names.DISRUPTION_HOLD)[0] == "default"
    lived = cloud.times(names.BEGIN_TERMINATION)[0] - cloud.times(names.PREPARE)[0]
    assert timedelta(hours=1, minutes=3) - SLACK <= lived < timedelta(hours=1, minutes=4)


async def test_a_failing_pause_check_waits_and_asks_again(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    """The pause check at expiry fails for good (RBAC, say): the run pauses a minute and asks
    again instead of failing, which would leave the node and its instance behind."""
    cloud = FakeCloud(claim=spec(expire_after_seconds=3600), failures={names.DISRUPTION_HOLD: 1})
    async with lifecycle(time_env, cloud, task_queue) as handle:
        assert await handle.result() == "Terminated"
    checks = cloud.times(names.DISRUPTION_HOLD)
    assert len(checks) == 2
    assert timedelta(seconds=60) <= checks[1] - checks[0] < timedelta(seconds=62)
    assert cloud.args(names.BEGIN_TERMINATION)[0].reason == "Expired"


async def test_pdb_blocked_drain_backs_off_and_reports(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    cloud = FakeCloud(
        drain_script=[
            blocked(),
            blocked(),
            blocked(2),
            blocked(),
            DrainStatus(False, waiting=["ns/web-0"]),
        ]
    )
    async with lifecycle(time_env, cloud, task_queue) as handle:
        await until_phase(time_env, handle, "Ready")
        await handle.signal(NodeClaimWorkflow.interrupted, "SpotInterruption")
        status = await until_phase(time_env, handle, "Draining")
        assert status.ending_reason == "Interrupted"
        assert await handle.result() == "Terminated"
    times = cloud.times(names.DRAIN)
    gaps = [round((b - a).total_seconds()) for a, b in itertools.pairwise(times)]
    assert gaps == [1, 2, 4, 8, 2]  # exponential while blocked, then the plain poll


async def test_termination_grace_period_bounds_the_drain(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    held = DrainStatus(done=False, held=["ns/batch-0"])
    cloud = FakeCloud(
        claim=spec(termination_grace_period_seconds=600),
        drain_forever=held,
        volumes_script=[2] * 50,
    )
    async with lifecycle(time_env, cloud, task_queue) as handle:
        await until_phase(time_env, handle, "Ready")
        await handle.signal(NodeClaimWorkflow.deleted, "Node")
        assert await handle.result() == "Terminated"
    start = cloud.times(names.BEGIN_TERMINATION)[0]
    deadline = cloud.args(names.DRAIN)[0].grace_deadline
    assert deadline is not None
    terminated = cloud.times(names.TERMINATE_INSTANCE)[0]
    assert timedelta(seconds=600) <= terminated - start < timedelta(seconds=620)
    assert cloud.names().count(names.DRAIN) > 10


async def test_disrupt_update_validates(time_env: WorkflowEnvironment, task_queue: str) -> None:
    cloud = FakeCloud(drain_forever=blocked())
    async with lifecycle(time_env, cloud, task_queue) as handle:
        await until_phase(time_env, handle, "Ready")
        with pytest.raises(WorkflowUpdateFailedError) as bad:
            await handle.execute_update(NodeClaimWorkflow.disrupt, DisruptRequest("not a word!"))
        assert "must be a word" in str(bad.value.cause)
        answer = await handle.execute_update(
            NodeClaimWorkflow.disrupt, DisruptRequest("Maintenance", "kernel upgrade")
        )
        assert "will be drained" in answer
        with pytest.raises(WorkflowUpdateFailedError) as again:
            await handle.execute_update(NodeClaimWorkflow.disrupt, DisruptRequest("Maintenance"))
        assert "already terminating" in str(again.value.cause)
        await until_phase(time_env, handle, "Draining")
        for _ in range(20):
            status = await handle.query(NodeClaimWorkflow.status)
            if status.blocked:
                break
            await time_env.sleep(1)
        assert status.blocked == ["ns/web-0 (ns/web-pdb)"]
        assert status.waiting_for == "PodDisruptionBudget ns/web-pdb"
        await handle.terminate("test over")
    begin = cloud.args(names.BEGIN_TERMINATION)[0]
    assert (begin.reason, begin.message) == ("Maintenance", "kernel upgrade")


async def test_missing_claim_ends_quietly(time_env: WorkflowEnvironment, task_queue: str) -> None:
    cloud = FakeCloud(claim=None)
    async with lifecycle(time_env, cloud, task_queue) as handle:
        assert await handle.result() == "Gone"
    assert cloud.names() == [names.PREPARE]
