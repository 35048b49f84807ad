"""Launch phase: one instance through the EC2 provider, within Karpenter's 5-minute launch TTL.

Insufficient capacity ends the claim at once (the provisioner plans again without that
offering); any other failure is retried until the TTL, then the claim is deleted and any
instance a late attempt made is terminated by the termination phase (found by tag). A claim
is tried once even when the TTL ran out before its lifecycle first ran (a burst's backlog):
Karpenter's launch, too, runs before its liveness check; ending it untried would only buy
the same capacity again for a new claim.

From shape 3 the launch is a local activity (workflows/nodeclaim/shape.py): in the worker
that runs the workflow task, recorded as one marker, so a lifecycle is one workflow task
until its Node registers. It cannot heartbeat; a worker that dies during a launch leaves
its workflow task to time out and the next worker runs the launch again, which finds the
instance (the claim's client token and tag). The worker's slots let launches wait without
holding the workflow-task budget (worker/running/slots.py).
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, RetryState
from temporalio.exceptions import TimeoutError as ActivityTimeout

from workflows import calls
from workflows.nodeclaim.context import Lifecycle
from workflows.nodeclaim.state import (
    DRAINING,
    INSUFFICIENT_CAPACITY,
    LAUNCH_FAILED,
    LAUNCH_TIMEOUT,
    REGISTERING,
)

with workflow.unsafe.imports_passed_through():
    from activities.lifecycle.types import LaunchOutcome
    from models import contract
    from models import nodeclaim as nodeclaim_model
    from models.contract import NodeClaimActivity as names

LAUNCH_TTL = nodeclaim_model.LAUNCH_TTL
# Histories recorded before a claim past its TTL got one launch replay without that launch.
LAUNCH_ONCE_PAST_TTL = "launch-once-past-ttl"
# The time a claim whose TTL passed before its first try has for that try.
PAST_TTL_TRY = timedelta(minutes=2)
FIRST_PAUSE = timedelta(seconds=5)
MAX_PAUSE = timedelta(seconds=60)
# Non-retryable for one attempt but worth another try later (the NodeClass may get ready).
RETRY_ANYWAY = (contract.ERR_NODECLASS_NOT_FOUND,)


async def run(wf: Lifecycle) -> str:
    spec = wf.state.spec
    assert spec is not None
    deadline = wf.anchor() + LAUNCH_TTL
    pause = FIRST_PAUSE
    tries = 0
    while True:
        if wf.state.ending is not None:
            return DRAINING
        remaining = deadline - workflow.now()
        if remaining <= timedelta(0):
            if tries > 0 or not workflow.patched(LAUNCH_ONCE_PAST_TTL):
                wf.end(LAUNCH_TIMEOUT, f"not launched within {LAUNCH_TTL}")
                return DRAINING
            # The TTL ran out before the lifecycle first ran (a burst's backlog of workflow
            # tasks): as Karpenter's launch comes before its liveness check, try once.
            remaining = PAST_TTL_TRY
        wf.describe(f"launching an instance for pool **{spec.nodepool}**")
        tries += 1
        local = wf.shape.local_launch
        try:
            out = await calls.call(
                names.LAUNCH,
                spec,
                LaunchOutcome,
                summary=f"launch {spec.name} ({spec.nodepool}){' locally' if local else ''}",
                timeout=timedelta(minutes=2),
                heartbeat=None if local else timedelta(seconds=10),
                schedule_to_close=remaining,
                non_retryable=[INSUFFICIENT_CAPACITY],
                attempts=3,
                local=local,
                activity_id=_activity_id(wf, tries),
            )
        except calls.FAILED as exc:
            kind = calls.error_type(exc)
            message = str(exc.cause or exc) if isinstance(exc, ActivityError) else str(exc)
            if kind == INSUFFICIENT_CAPACITY:
                wf.end(INSUFFICIENT_CAPACITY, message)
                return DRAINING
            if _timed_out(exc):
                wf.end(LAUNCH_TIMEOUT, f"not launched within {LAUNCH_TTL}: {message}")
                return DRAINING
            if _non_retryable(exc) and kind not in RETRY_ANYWAY:
                wf.end(LAUNCH_FAILED, message)
                return DRAINING
            # Retryable, attempts used up: wait on a durable timer and try again until the TTL.
            wf.state.waiting_for = f"launch retry after {kind or 'error'}: {message[:120]}"
            await workflow.sleep(min(pause, max(deadline - workflow.now(), timedelta(seconds=1))))
            pause = min(pause * 2, MAX_PAUSE)
            continue
        wf.state.launched = out
        wf.state.waiting_for = ""
        wf.upsert(instance_type=out.instance_type, capacity_type=out.capacity_type, zone=out.zone)
        return REGISTERING


def _activity_id(wf: Lifecycle, tries: int) -> str | None:
    """Shape 2 names its launches and shape 3 its local ones otherwise, so older code
    replaying a run newer code began fails at the launch instead of going on along its own
    path (workflows/nodeclaim/shape.py); shapes 0 and 1 leave the SDK's numbering."""
    if wf.shape.local_launch:
        return f"launch-local-{tries}"
    return f"launch-{tries}" if wf.shape.combined_calls else None


def _timed_out(exc: BaseException) -> bool:
    """A regular activity's timeout comes as the cause of an ActivityError (or as its retry
    state), a local one's as the TimeoutError itself."""
    if isinstance(exc, ActivityTimeout):
        return True
    return isinstance(exc, ActivityError) and (
        isinstance(exc.cause, ActivityTimeout) or exc.retry_state == RetryState.TIMEOUT
    )


def _non_retryable(exc: BaseException) -> bool:
    """Retrying the same launch cannot help (the error says so)."""
    if isinstance(exc, ActivityError):
        return exc.retry_state == RetryState.NON_RETRYABLE_FAILURE
    return isinstance(exc, ApplicationError) and exc.non_retryable
