"""Each disruption round findable in the Temporal UI, on the dev server (the time-skipping
server takes no custom search attributes): the round's reasons and NodePools as search
attributes, its one-line summary on the steps of its history and in the workflow's current
details, and the last round's per-node outcomes in the ``status`` query (what ``joinery
explain`` reads). The engine's decisions come from ``disruption_fakes``."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from temporalio.converter import DataConverter
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from activities.disruption.types import Decision
from models import contract
from models.contract import DisruptionActivity as names
from tests.support.disruption_fakes import FakeDisruption, command
from workflows.disruption.state import DISRUPTED, DisruptionInput
from workflows.disruption.workflow import DisruptionWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_a_round_is_findable_by_reason_and_nodepool_with_its_summary(
    dev_env: WorkflowEnvironment, task_queue: str
) -> None:
    run, dropped = command(["a", "b"]), command(["c"], replacements=0, reason="Empty")
    fake = FakeDisruption(
        decisions=[
            Decision(commands=[run, dropped], kept_nodes={"d": "fits nowhere cheaper"}),
            Decision(commands=[run], kept_nodes={"c": "now busy", "d": "fits nowhere cheaper"}),
        ]
    )
    cluster = f"c-{uuid.uuid4().hex[:6]}"
    client = dev_env.client
    async with Worker(
        client, task_queue=task_queue, workflows=[DisruptionWorkflow], activities=fake.activities()
    ):
        handle = await client.start_workflow(
            DisruptionWorkflow.run,
            DisruptionInput(cluster, search_attributes=True, validation_delay_seconds=2.0),
            id=contract.disruption_id(cluster),
            task_queue=task_queue,
        )
        try:
            # The round after the commands waits for the deleted nodes to be named gone; no
            # watcher names them here, so it comes after the 30 s fallback.
            for _ in range(180):
                status = await handle.query(DisruptionWorkflow.status)
                if status.commands_done and status.phase == "Idle" and status.rounds >= 2:
                    break
                await asyncio.sleep(0.5)
            assert status.commands_done == 1, status
            found: list[str] = []
            query = (
                f"WorkflowId = '{handle.id}' AND {contract.SA_DISRUPTION_REASON} = "
                f"'Underutilized' AND {contract.SA_NODEPOOL} = 'default'"
            )
            for _ in range(60):  # visibility is eventually consistent
                found = [wf.id async for wf in client.list_workflows(query)]
                if found:
                    break
                await asyncio.sleep(0.5)
            assert found == [handle.id]
            metadata = await handle.query("__temporal_workflow_metadata")
            details = str(getattr(metadata, "current_details", metadata))
            assert f"last acted: round 1: {run.summary}" in details

            summaries: list[str] = []
            convert = DataConverter.default.payload_converter
            async for event in handle.fetch_history_events():
                if event.user_metadata.HasField("summary"):
                    summaries.append(convert.from_payload(event.user_metadata.summary, str))
        finally:
            await handle.terminate("test over")
    assert "round 1: compute: read cluster, decide" in summaries
    assert f"round 1: validation delay: {run.summary}; {dropped.summary}" in summaries
    assert f"mark: {run.summary}" in summaries
    # the round after it named nothing (the fake engine has no more to say); the nodes
    # round 1 disrupted are still told, with their round
    assert status.rounds >= 2
    outcomes = {o.node: (o.outcome, o.round) for o in status.last_outcomes}
    assert outcomes == {"a": (DISRUPTED, 1), "b": (DISRUPTED, 1)}
    assert fake.names().count(names.COMPUTE) >= 2
