"""Initialization phase: wait until the Node is Ready, its startup and ephemeral taints are
gone and requested extended resources are advertised (the activity decides; this polls).

``first``: the answer of a check already made (shape 2's registration makes one with it)."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

from workflows import calls
from workflows.nodeclaim.context import Lifecycle
from workflows.nodeclaim.state import DRAINING, READY

with workflow.unsafe.imports_passed_through():
    from activities.lifecycle.types import InitializeInput, InitializeOutcome
    from models.contract import NodeClaimActivity as names

FIRST_POLL = timedelta(seconds=1)
MAX_POLL = timedelta(seconds=30)


async def run(wf: Lifecycle, first: InitializeOutcome | None = None) -> str:
    spec, node = wf.state.spec, wf.state.node_name
    assert spec is not None and node is not None
    poll = FIRST_POLL
    while True:
        if wf.state.ending is not None:
            return DRAINING
        if first is not None:
            out, first = first, None
        else:
            out = await calls.call_until_done(
                names.INITIALIZE,
                InitializeInput(spec, node),
                InitializeOutcome,
                summary=f"initialize {node}",
                local=wf.shape.local_calls,
            )
        if out.initialized:
            return READY
        wf.state.waiting_for = out.reason
        wf.describe(f"Node `{node}` registered, not initialized: {out.reason}")
        await wf.wait(poll)
        poll = min(poll * 2, MAX_POLL)
        await wf.checkpoint()
