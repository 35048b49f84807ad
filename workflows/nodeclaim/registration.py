"""Registration phase: wait (durably) for the instance's Node, within the 15-minute TTL.

The workflow polls with a growing interval and wakes early when the worker's Node watcher
signals that a Node appeared; the signal names the Node, so the check reads that one Node
instead of listing the pool's (a list per poll per claim grew with the square of a burst).
Past the TTL the claim is deleted and its instance terminated, as Karpenter's liveness
controller does.

In shape 2 the check that finds the Node also checks its initialization in the same call,
so a Node ready at registration (most) costs one local activity; the initialization phase
is entered and starts from that answer.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

from workflows import calls
from workflows.nodeclaim import initialization
from workflows.nodeclaim.context import Lifecycle
from workflows.nodeclaim.state import DRAINING, INITIALIZING, REGISTRATION_TIMEOUT

with workflow.unsafe.imports_passed_through():
    from activities.lifecycle.types import InitializeOutcome, RegisterInput, Registration
    from models.contract import NodeClaimActivity as names

REGISTRATION_TTL = timedelta(minutes=15)
FIRST_POLL = timedelta(seconds=1)
MAX_POLL = timedelta(seconds=30)


async def run(wf: Lifecycle) -> str:
    spec, launched = wf.state.spec, wf.state.launched
    assert spec is not None and launched is not None
    deadline = wf.anchor() + REGISTRATION_TTL
    poll = FIRST_POLL
    checks = 0
    wf.describe(f"waiting for the Node of `{launched.provider_id}` to register")
    while True:
        if wf.state.ending is not None:
            return DRAINING
        # The first check only reads a Node the watcher named: right after the launch none
        # has registered yet, and the watcher's signal usually comes before the second.
        # Later checks list too (a lost signal, a Node that came first).
        inp = RegisterInput(spec, launched.provider_id, wf.node_hint, search=checks > 0)
        initialized: InitializeOutcome | None = None
        if wf.shape.combined_calls:
            both = await calls.call_until_done(
                names.REGISTER_AND_INITIALIZE,
                inp,
                Registration,
                summary=f"register and initialize {launched.provider_id}",
                local=True,
            )
            node, initialized = both.node_name, both.initialize
        else:
            node = await calls.call_until_done(
                names.REGISTER,
                inp,
                str,
                summary=f"register {launched.provider_id}",
                local=wf.shape.local_calls,
            )
        checks += 1
        if node:
            wf.state.node_name = node
            if initialized is None:
                return INITIALIZING
            wf.enter(INITIALIZING)
            return await initialization.run(wf, first=initialized)
        remaining = deadline - workflow.now()
        if remaining <= timedelta(0):
            wf.end(REGISTRATION_TIMEOUT, f"no Node registered within {REGISTRATION_TTL}")
            return DRAINING
        wf.state.waiting_for = "Node registration"
        await wf.wait(min(poll, remaining))
        poll = min(poll * 2, MAX_POLL)
        await wf.checkpoint()
