"""Running phase: the node serves pods until something ends it.

Ends: the NodeClaim or Node was deleted (watcher signal), ``expireAfter`` passed (a durable
timer from the claim's creation), an interruption event arrived (signal), or an operator
asked (``disrupt`` update).
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

from workflows.nodeclaim.context import Lifecycle
from workflows.nodeclaim.state import DRAINING, EXPIRED


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
            wf.end(EXPIRED, f"expireAfter {timedelta(seconds=spec.expire_after_seconds or 0)}")
            break
        await wf.wait(remaining)
        await wf.checkpoint()
    return DRAINING
