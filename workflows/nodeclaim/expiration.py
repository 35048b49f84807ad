"""Running phase: the node serves pods until something ends it.

Ends: the NodeClaim or Node was deleted (watcher signal), ``expireAfter`` passed (a durable
timer from the claim's creation), an interruption event arrived (signal), or an operator
asked (``disrupt`` update). Expiry is the one end Joinery decides by itself, so it waits
while an operator has paused disruption for the pool (``joinery pause``), re-checking every
``PAUSE_RECHECK``; the other ends are explicit requests and proceed.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

from workflows import calls
from workflows.nodeclaim.context import Lifecycle
from workflows.nodeclaim.shape import Shape
from workflows.nodeclaim.state import DRAINING, EXPIRED

with workflow.unsafe.imports_passed_through():
    from models.contract import NodeClaimActivity as names

PAUSE_RECHECK = timedelta(seconds=60)


async def run(wf: Lifecycle) -> str:
    spec = wf.state.spec
    assert spec is not None
    expires = (
        wf.anchor() + timedelta(seconds=spec.expire_after_seconds)
        if spec.expire_after_seconds is not None
        else None
    )
    launched = wf.state.launched
    what = f"{launched.instance_type} {launched.capacity_type} {launched.zone}" if launched else ""
    wf.describe(
        f"serving pods on `{wf.state.node_name}` ({what})"
        + (f"; expires {expires.isoformat()}" if expires else "")
    )
    wf.state.waiting_for = ""
    while wf.state.ending is None:
        remaining = None if expires is None else expires - workflow.now()
        if remaining is not None and remaining <= timedelta(0):
            hold = await _paused(spec.nodepool, wf.shape)
            if not hold:
                wf.end(EXPIRED, f"expireAfter {timedelta(seconds=spec.expire_after_seconds or 0)}")
                break
            wf.state.waiting_for = hold
            wf.describe(f"expired, not disrupted: {hold}")
            remaining = PAUSE_RECHECK
        await wf.wait(remaining)
        await wf.checkpoint()
    wf.state.waiting_for = ""
    return DRAINING


async def _paused(nodepool: str, shape: Shape) -> str:
    if not shape.pause_holds_expiry():
        return ""
    # until done: a non-retryable failure here must not fail the run (and strand the node)
    return await calls.call_until_done(
        names.DISRUPTION_HOLD,
        nodepool,
        str,
        summary=f"may pool {nodepool} be disrupted?",
        local=shape.local_calls,
    )
