"""Running a NodeClaim lifecycle on the time-skipping server with the activity doubles
(``FakeCloud``), and reading what its history recorded."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowHandle, WorkflowHistory
from temporalio.service import RPCError
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from models import contract
from tests.support.workflow_fakes import FakeCloud
from workflows.nodeclaim.state import NodeClaimInput, NodeClaimStatus
from workflows.nodeclaim.workflow import NodeClaimWorkflow

# Deadlines count from the workflow start, a moment before the first activity is scheduled.
SLACK = timedelta(seconds=1)


@asynccontextmanager
async def lifecycle(
    env: WorkflowEnvironment, cloud: FakeCloud, task_queue: str, **inp: object
) -> AsyncIterator[WorkflowHandle[NodeClaimWorkflow, str]]:
    cloud.clock = env.get_current_time
    async with Worker(
        env.client,
        task_queue=task_queue,
        workflows=[NodeClaimWorkflow],
        activities=cloud.activities(),
    ):
        name = f"claim-{uuid.uuid4().hex[:6]}"
        inp.setdefault("shape", contract.NODECLAIM_SHAPE)  # as every fresh start asks
        handle = await env.client.start_workflow(
            NodeClaimWorkflow.run,
            NodeClaimInput(name, **inp),  # type: ignore[arg-type]
            id=contract.nodeclaim_id("test", name),
            task_queue=task_queue,
        )
        yield handle


async def until_phase(
    env: WorkflowEnvironment, handle: WorkflowHandle[NodeClaimWorkflow, str], phase: str
) -> NodeClaimStatus:
    status = None
    for _ in range(200):
        try:
            status = await handle.query(NodeClaimWorkflow.status)
        except RPCError:  # a query racing continue-as-new on a busy machine; ask again
            await asyncio.sleep(0.2)
            continue
        if status.phase == phase:
            return status
        await env.sleep(1)
    raise AssertionError(f"never reached {phase}: {status}")


async def run_to_end(
    env: WorkflowEnvironment, cloud: FakeCloud, task_queue: str, **inp: object
) -> tuple[WorkflowHistory, dict[str, str]]:
    """Ready, then deleted; the run's history and its phase timings (shape 2 unless told)."""
    inp.setdefault("shape", 2)
    async with lifecycle(env, cloud, task_queue, **inp) as handle:
        await until_phase(env, handle, "Ready")
        await handle.signal(NodeClaimWorkflow.deleted, "NodeClaim")
        assert await handle.result() == "Terminated"
        status = await handle.query(NodeClaimWorkflow.status)
        return await handle.fetch_history(), status.timings


def local_calls(history: WorkflowHistory) -> list[str]:
    """The local activities the history records, in order (one marker each)."""
    out = []
    for e in history.events:
        if e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED:
            data = e.marker_recorded_event_attributes.details["data"].payloads[0].data
            out.append(json.loads(data)["activity_type"])
    return out


def launches(history: WorkflowHistory) -> list[tuple[str, str]]:
    """(activity type, activity id) of every regular activity the history schedules."""
    return [
        (a.activity_type.name, a.activity_id)
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        for a in [e.activity_task_scheduled_event_attributes]
    ]
