"""Replay every recorded history (tests/histories/*.json) against today's workflow code.

A change that makes a recorded run take a different path fails here with a
non-determinism error: such a change would break workflows already running in production.
Record new histories with ``tests/histories/record.py`` when behaviour changes on purpose,
and keep the old ones as long as runs that started under them may still be open.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio import workflow
from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer

from workflows.disruption.workflow import DisruptionWorkflow
from workflows.garbage.workflow import GarbageCollectionWorkflow
from workflows.nodeclaim.state import NodeClaimInput
from workflows.nodeclaim.workflow import NodeClaimWorkflow
from workflows.provisioner import ProvisionerWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")
HISTORIES = sorted((Path(__file__).resolve().parent.parent / "histories").glob("*.json"))


async def test_histories_exist() -> None:
    names = {p.stem for p in HISTORIES}
    assert {
        "nodeclaim_happy_path",
        "provisioner_rounds_pause_resume",
        "disruption_rounds",
        "garbage_collection_rounds",
    } <= names


@pytest.mark.parametrize("path", HISTORIES, ids=lambda p: p.stem)
async def test_replays(path: Path) -> None:
    history = WorkflowHistory.from_json(f"nodeclaim-{path.stem}", path.read_text())
    replayer = Replayer(
        workflows=[
            NodeClaimWorkflow,
            ProvisionerWorkflow,
            DisruptionWorkflow,
            GarbageCollectionWorkflow,
        ]
    )
    result = await replayer.replay_workflow(history, raise_on_replay_failure=True)
    assert result.replay_failure is None


@workflow.defn(name="NodeClaim", sandboxed=False)
class ChangedNodeClaim:
    """A 'refactor' that sleeps before reading the claim: not replay-compatible."""

    @workflow.run
    async def run(self, inp: NodeClaimInput) -> str:
        await workflow.sleep(1)
        return "Terminated"


async def test_a_nondeterministic_change_is_caught() -> None:
    path = next(p for p in HISTORIES if p.stem == "nodeclaim_happy_path")
    history = WorkflowHistory.from_json("nodeclaim-happy", path.read_text())
    result = await Replayer(workflows=[ChangedNodeClaim]).replay_workflow(
        history, raise_on_replay_failure=False
    )
    assert result.replay_failure is not None
    assert "nondetermin" in str(result.replay_failure).lower()
