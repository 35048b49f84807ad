"""Replay every recorded history (tests/histories/*.json) against today's workflow code.

A change that makes a recorded run take a different path fails here with a
non-determinism error: such a change would break workflows already running in production.
Record new histories with ``python -m tests.histories.record`` when behaviour changes on purpose,
and keep the old ones as long as runs that started under them may still be open.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from temporalio import workflow
from temporalio.client import WorkflowHistory

from models import contract
from tests.support.replaying import replayer
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
        "disruption_due_rounds",
        "garbage_collection_rounds",
        "nodeclaim_local_calls_patched",
        "nodeclaim_shape1_happy_path",
        "nodeclaim_shape1_disrupted",
        "nodeclaim_shape1_expiry_held_by_pause",
        "nodeclaim_shape2_happy_path",
        "nodeclaim_shape2_disrupted",
        "nodeclaim_shape2_expiry_held_by_pause",
        "nodeclaim_shape2_instance_slow_to_go",
        "nodeclaim_shape3_happy_path",
        "nodeclaim_shape3_disrupted",
        "nodeclaim_shape3_expiry_held_by_pause",
    } <= names


@pytest.mark.parametrize("path", HISTORIES, ids=lambda p: p.stem)
async def test_replays(path: Path) -> None:
    history = WorkflowHistory.from_json(f"nodeclaim-{path.stem}", path.read_text())
    replaying = replayer(
        NodeClaimWorkflow, ProvisionerWorkflow, DisruptionWorkflow, GarbageCollectionWorkflow
    )
    result = await replaying.replay_workflow(history, raise_on_replay_failure=True)
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
    result = await replayer(ChangedNodeClaim).replay_workflow(
        history, raise_on_replay_failure=False
    )
    assert result.replay_failure is not None
    assert "nondetermin" in str(result.replay_failure).lower()


def _with_shape(path: Path, shape: int) -> WorkflowHistory:
    """The recorded history of ``path`` as if its run had been started with ``shape``."""
    recorded: dict[str, Any] = json.loads(path.read_text())
    payload = recorded["events"][0]["workflowExecutionStartedEventAttributes"]["input"]
    payload = payload["payloads"][0]
    inp = json.loads(base64.b64decode(payload["data"]))
    payload["data"] = base64.b64encode(json.dumps({**inp, "shape": shape}).encode()).decode()
    return WorkflowHistory.from_json(f"nodeclaim-{path.stem}", json.dumps(recorded))


async def test_an_older_worker_began_a_current_shape_run() -> None:
    """A rolling upgrade: a new replica started the run (current shape in its input), an old
    replica ran its tasks as shape 0 (its marker, its regular drain). Today's code replays it
    as shape 0. The history is one the commit before shapes recorded (c87c1ef)."""
    path = next(p for p in HISTORIES if p.stem == "nodeclaim_local_calls_patched")
    history = _with_shape(path, contract.NODECLAIM_SHAPE)
    result = await replayer(NodeClaimWorkflow).replay_workflow(
        history, raise_on_replay_failure=True
    )
    assert result.replay_failure is None


async def test_the_shape_decides_the_replay() -> None:
    """A current-shape history replayed as if its input said shape 0 takes the patched
    path, finds no marker and fails: the shape in the input is what keeps it replaying."""
    path = next(p for p in HISTORIES if p.stem == "nodeclaim_shape1_happy_path")
    result = await replayer(NodeClaimWorkflow).replay_workflow(
        _with_shape(path, 0), raise_on_replay_failure=False
    )
    assert result.replay_failure is not None
    assert "nondetermin" in str(result.replay_failure).lower()


SHAPE1 = [p for p in HISTORIES if p.stem.startswith("nodeclaim_shape1_")]
SHAPE2 = [p for p in HISTORIES if p.stem.startswith("nodeclaim_shape2_")]
SHAPE3 = [p for p in HISTORIES if p.stem.startswith("nodeclaim_shape3_")]


@pytest.mark.parametrize("started_as", [2, 3])
@pytest.mark.parametrize("path", SHAPE1, ids=lambda p: p.stem)
async def test_a_shape_1_worker_began_a_later_shape_run(path: Path, started_as: int) -> None:
    """A rolling upgrade: a new replica started the run as shape 2 (or 3), a shape-1 replica
    ran its tasks as shape 1 (the claim it read carries no ``read_by_shape``). Today's code
    replays it as shape 1."""
    result = await replayer(NodeClaimWorkflow).replay_workflow(
        _with_shape(path, started_as), raise_on_replay_failure=True
    )
    assert result.replay_failure is None


@pytest.mark.parametrize("path", SHAPE2, ids=lambda p: p.stem)
async def test_a_shape_2_worker_began_a_shape_3_run(path: Path) -> None:
    """A new replica started the run as shape 3, a shape-2 replica ran its tasks (the claim
    it read is stamped ``read_by_shape`` 2): today's code replays it as shape 2, its launch
    a regular activity."""
    result = await replayer(NodeClaimWorkflow).replay_workflow(
        _with_shape(path, 3), raise_on_replay_failure=True
    )
    assert result.replay_failure is None


@pytest.mark.parametrize("path", SHAPE3, ids=lambda p: p.stem)
async def test_shape_2_code_cannot_continue_a_shape_3_run(path: Path) -> None:
    """Shape-2 code runs any shape >= 2 as shape 2 (today's code given shape 2 and a claim
    read by shape-3 code does what it did): replaying a shape-3 run it schedules a regular
    launch where the history holds the local one, and fails, so its task goes back to the
    server for a new replica."""
    result = await replayer(NodeClaimWorkflow).replay_workflow(
        _with_shape(path, 2), raise_on_replay_failure=False
    )
    assert result.replay_failure is not None
    assert "nondetermin" in str(result.replay_failure).lower()


@pytest.mark.parametrize("path", SHAPE2, ids=lambda p: p.stem)
async def test_shape_1_code_cannot_continue_a_shape_2_run(path: Path) -> None:
    """Shape-1 code runs any shape >= 1 as shape 1; replaying a shape-2 run (today's code on
    the shape-1 path does what that code did) it fails, at the named launch or at the first
    combined call, so its task goes back to the server for a new replica."""
    result = await replayer(NodeClaimWorkflow).replay_workflow(
        _with_shape(path, 1), raise_on_replay_failure=False
    )
    assert result.replay_failure is not None
    assert "nondetermin" in str(result.replay_failure).lower()
    assert "launch-1" in str(result.replay_failure)
