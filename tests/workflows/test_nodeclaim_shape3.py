"""The lifecycle's shape 3 on the time-skipping server, activities doubled: shape 2's calls
with the launch a local activity, so the run schedules no regular activity at all; runs an
older worker began keep that worker's path (workflows/nodeclaim/shape.py)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowHistory
from temporalio.testing import WorkflowEnvironment

from models import contract
from models.contract import NodeClaimActivity as names
from tests.support.nodeclaim_runs import (
    SLACK,
    launches,
    lifecycle,
    local_calls,
    run_to_end,
    until_phase,
)
from tests.support.workflow_fakes import FakeCloud, spec
from workflows.nodeclaim.launch import PAST_TTL_TRY
from workflows.nodeclaim.workflow import NodeClaimWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")


def local_launch_ids(history: WorkflowHistory) -> list[str]:
    """The activity ids of the local launches the history records."""
    out = []
    for e in history.events:
        marker = e.marker_recorded_event_attributes
        if e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED and "data" in marker.details:
            data = json.loads(marker.details["data"].payloads[0].data)
            if data["activity_type"] == names.LAUNCH:
                out.append(data["activity_id"])
    return out


async def test_current_shape_is_3() -> None:
    assert contract.NODECLAIM_SHAPE == 3


async def test_happy_path_is_five_local_calls_and_no_regular_activity(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    """Prepare, the launch, registration with initialization, one termination pass: all
    local, the launch named ``launch-local-1`` (a shape-2 replay fails there)."""
    history, timings = await run_to_end(time_env, FakeCloud(), task_queue, shape=3)
    assert local_calls(history) == [
        names.PREPARE,
        names.LAUNCH,
        names.REGISTER_AND_INITIALIZE,
        names.TERMINATION_PASS,
    ]
    assert local_launch_ids(history) == ["launch-local-1"]
    assert launches(history) == []
    kinds = [e.event_type for e in history.events]
    assert kinds.count(EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) == 0
    assert kinds.count(EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES) == 0
    assert {"Launching", "Registering", "Initializing", "Ready"} <= set(timings)


async def test_a_run_a_shape_2_worker_began_goes_on_as_shape_2(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    """Started as shape 3, the claim read by shape-2 code (stamped 2): the launch stays a
    regular activity named as shape 2 names it, as that worker's own tasks did."""
    cloud = FakeCloud(read_by_shape=2)
    history, _ = await run_to_end(time_env, cloud, task_queue, shape=3)
    assert launches(history) == [(names.LAUNCH, "launch-1")]
    assert local_calls(history) == [
        names.PREPARE,
        names.REGISTER_AND_INITIALIZE,
        names.TERMINATION_PASS,
    ]


async def test_a_run_a_shape_1_worker_began_goes_on_as_shape_1(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    cloud = FakeCloud(read_by_shape=0)
    history, _ = await run_to_end(time_env, cloud, task_queue, shape=3)
    assert launches(history) == [(names.LAUNCH, "2")]  # numbered by the SDK, as shape 1 did
    assert names.REGISTER_AND_INITIALIZE not in cloud.names()


async def test_a_non_retryable_local_launch_failure_ends_the_claim(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    """A local activity's failure reaches the workflow as the error itself, not wrapped in
    an ActivityError: a non-retryable one still ends the claim at once as LaunchFailed."""
    cloud = FakeCloud(launch_error="UnauthorizedOperation")
    async with lifecycle(time_env, cloud, task_queue, shape=3) as handle:
        assert await handle.result() == "Terminated"
    assert cloud.names().count(names.LAUNCH) == 1
    assert cloud.args(names.BEGIN_TERMINATION)[0].reason == "LaunchFailed"


async def test_a_retryable_local_launch_failure_is_tried_in_rounds_until_the_ttl(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    """Three attempts a round, a durable pause between rounds, each round a local launch of
    its own id, until the 5-minute launch TTL ends the claim (and no later than a minute
    after it). Shape 3 is every fresh start's, so this is also the launch TTL's test."""
    cloud = FakeCloud(launch_error="Throttled", launch_error_retryable=True)
    async with lifecycle(time_env, cloud, task_queue, shape=3) as handle:
        assert await handle.result() == "Terminated"
        history = await handle.fetch_history()
    ids = local_launch_ids(history)
    assert ids[:3] == ["launch-local-1", "launch-local-2", "launch-local-3"]
    assert ids == [f"launch-local-{i}" for i in range(1, len(ids) + 1)]
    assert cloud.names().count(names.LAUNCH) >= 3 * (len(ids) - 1)
    assert cloud.args(names.BEGIN_TERMINATION)[0].reason == "LaunchTimeout"
    waited = cloud.times(names.BEGIN_TERMINATION)[0] - cloud.times(names.PREPARE)[0]
    assert timedelta(minutes=5) - SLACK <= waited < timedelta(minutes=6)


async def _created_ago(env: WorkflowEnvironment, ago: timedelta) -> FakeCloud:
    """A cloud whose claim was created ``ago`` before the run starts (a burst's backlog)."""
    created = (await env.get_current_time()) - ago
    return FakeCloud(claim=spec(created_at=created.isoformat()))


async def test_a_claim_past_its_launch_ttl_before_it_first_ran_is_launched_once(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    """Karpenter launches a claim before it checks its liveness: a claim whose 5 minutes
    passed while its lifecycle waited to run is tried once, not deleted untried (which only
    buys the same capacity again for a new claim)."""
    cloud = await _created_ago(time_env, timedelta(minutes=6))
    async with lifecycle(time_env, cloud, task_queue, shape=3) as handle:
        await until_phase(time_env, handle, "Ready")
        await handle.signal(NodeClaimWorkflow.deleted, "NodeClaim")
        assert await handle.result() == "Terminated"
    assert cloud.names().count(names.LAUNCH) == 1
    assert cloud.args(names.BEGIN_TERMINATION)[0].reason != "LaunchTimeout"


async def test_a_claim_past_its_launch_ttl_gets_one_round_of_tries_only(
    time_env: WorkflowEnvironment, task_queue: str
) -> None:
    """That one try is a round (its attempts within 2 minutes); failing, the claim ends as
    LaunchTimeout without a pause and a second round."""
    cloud = await _created_ago(time_env, timedelta(minutes=6))
    cloud.launch_error, cloud.launch_error_retryable = "Throttled", True
    async with lifecycle(time_env, cloud, task_queue, shape=3) as handle:
        assert await handle.result() == "Terminated"
        history = await handle.fetch_history()
    assert local_launch_ids(history) == ["launch-local-1"]
    assert cloud.args(names.BEGIN_TERMINATION)[0].reason == "LaunchTimeout"
    waited = cloud.times(names.BEGIN_TERMINATION)[0] - cloud.times(names.PREPARE)[0]
    assert waited <= PAST_TTL_TRY + SLACK
