"""Shape 3's launch is a local activity, which cannot heartbeat: a worker SIGKILLed during
a launch leaves its workflow task open until the task's timeout (10 s), and the next
worker runs the task again from the last one recorded, prepare and launch included. The
real launch finds the instance the first attempt made (NodeClaim tag, client token:
tests/component/activities/test_lifecycle_activities.py); here the run goes on to Ready and its
history records one launch."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from models import contract
from models.contract import NodeClaimActivity as names
from tests.support.waiting import until
from tests.support.workflow_fakes import FakeCloud
from worker.running import tuning
from workflows.nodeclaim.state import NodeClaimInput
from workflows.nodeclaim.workflow import NodeClaimWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")
REPO = Path(__file__).resolve().parents[2]


async def test_a_worker_killed_during_a_local_launch(
    dev_env: WorkflowEnvironment, task_queue: str, tmp_path: Path
) -> None:
    client = dev_env.client
    marker = tmp_path / "launching"
    address = client.service_client.config.target_host
    dying = subprocess.Popen(
        [sys.executable, "-m", "tests.workflows.crashing_worker", address, task_queue, str(marker)],
        cwd=REPO,
    )
    name = f"claim-{uuid.uuid4().hex[:6]}"
    try:
        handle = await client.start_workflow(
            NodeClaimWorkflow.run,
            NodeClaimInput(name, shape=contract.NODECLAIM_SHAPE),
            id=contract.nodeclaim_id("test", name),
            task_queue=task_queue,
        )

        async def launching() -> bool:
            return marker.exists()

        await until(launching, timeout=60, what="the first worker launching", every=0.1)
    finally:
        dying.kill()  # SIGKILL: no activity result, no task completion
        dying.wait(30)

    cloud = FakeCloud()
    async with Worker(
        client,
        task_queue=task_queue,
        workflows=[NodeClaimWorkflow],
        activities=cloud.activities(),
        **tuning.worker_options(),
    ):

        async def ready() -> bool:
            return (await handle.query(NodeClaimWorkflow.status)).phase == "Ready"

        await until(ready, timeout=60, what="Ready on the second worker", every=0.1)
        await handle.signal(NodeClaimWorkflow.deleted, "NodeClaim")
        assert await handle.result() == "Terminated"
        history = await handle.fetch_history()
    # the second worker ran the task again from the start: prepare, then the launch
    assert cloud.names()[:2] == [names.PREPARE, names.LAUNCH]
    assert cloud.names().count(names.LAUNCH) == 1
    kinds = [e.event_type for e in history.events]
    assert kinds.count(EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT) >= 1
    recorded = [
        json.loads(e.marker_recorded_event_attributes.details["data"].payloads[0].data)
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED
    ]
    launches = [(r["activity_type"], r["activity_id"]) for r in recorded]
    assert launches.count((names.LAUNCH, "launch-local-1")) == 1
    assert [a for a, _ in launches].count(names.LAUNCH) == 1
