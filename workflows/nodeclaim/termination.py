"""Termination: taint, drain, wait for volumes, terminate the instance, drop finalizers.

As Karpenter's termination controller, with the waiting done by durable timers: a drain pass
blocked by a PodDisruptionBudget is retried with exponential backoff (and reported on the
claim), and the claim's terminationGracePeriod bounds the drain and the volume wait.

In shape 2 termination begins with one pass through all the steps (begin, one drain pass,
volumes, the instance, finalizers: ``names.TERMINATION_PASS``) that stops at the first one
that must wait. The phases it got through are entered as if each step had run alone, and
the step where it stopped goes on in its own loop below, from the pass's answer. A pass
that keeps failing leaves the work to the per-step calls (every step is idempotent).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from temporalio import workflow

from workflows import calls
from workflows.nodeclaim.context import Lifecycle
from workflows.nodeclaim.state import (
    DELETED,
    DETACHING,
    FINALIZING,
    TERMINATED,
    TERMINATING,
)

with workflow.unsafe.imports_passed_through():
    from activities.lifecycle.types import (
        BeginTerminationInput,
        DrainInput,
        DrainStatus,
        FinalizeInput,
        InstanceInput,
        TerminationPassInput,
        TerminationProgress,
        TerminationStart,
        VolumesInput,
    )
    from models.contract import NodeClaimActivity as names

DRAIN_POLL = timedelta(seconds=2)
BLOCKED_FIRST = timedelta(seconds=1)
BLOCKED_MAX = timedelta(seconds=60)
VOLUME_POLL = timedelta(seconds=5)
INSTANCE_POLL = timedelta(seconds=5)


def _deadline(start: TerminationStart) -> datetime | None:
    if not start.grace_deadline:
        return None
    return datetime.fromisoformat(start.grace_deadline.replace("Z", "+00:00"))


def _past(deadline: datetime | None) -> bool:
    return deadline is not None and workflow.now() >= deadline


def _until(delay: timedelta, deadline: datetime | None) -> timedelta:
    if deadline is None:
        return delay
    return max(min(delay, deadline - workflow.now()), timedelta(seconds=1))


def _begin_input(wf: Lifecycle) -> BeginTerminationInput:
    ending = wf.state.ending
    spec = wf.state.spec
    launched = wf.state.launched
    return BeginTerminationInput(
        name=wf.name,
        uid=spec.uid if spec else "",
        reason=ending.reason if ending else DELETED,
        message=ending.message if ending else "",
        provider_id=launched.provider_id if launched else None,
    )


def _reason(wf: Lifecycle) -> str:
    return wf.state.ending.reason if wf.state.ending else DELETED


async def begin(wf: Lifecycle) -> TerminationStart:
    if wf.state.termination is None:
        wf.state.termination = await calls.call_until_done(
            names.BEGIN_TERMINATION,
            _begin_input(wf),
            TerminationStart,
            summary=f"taint and delete {wf.name} ({_reason(wf)})",
            local=wf.shape.local_calls,
        )
    return wf.state.termination


async def drain(wf: Lifecycle) -> str:
    if wf.shape.combined_calls and wf.state.termination is None:
        progress = await _one_pass(wf)
        if progress is not None:
            return await _after_pass(wf, progress)
    return await _drain(wf)


async def _one_pass(wf: Lifecycle) -> TerminationProgress | None:
    """The termination pass; None when it failed three times (the steps go one by one)."""
    try:
        return await calls.call(
            names.TERMINATION_PASS,
            TerminationPassInput(_begin_input(wf), wf.state.node_name),
            TerminationProgress,
            summary=f"terminate {wf.name} ({_reason(wf)}) as far as it goes without waiting",
            timeout=timedelta(minutes=5),
            attempts=3,
            local=True,
        )
    except calls.FAILED as exc:
        workflow.logger.warning("termination pass failed (%s); going step by step", exc)
        return None


async def _after_pass(wf: Lifecycle, progress: TerminationProgress) -> str:
    """Each phase the pass got through is entered in turn; the loop of the step where it
    stopped goes on from its answer, and its next phase is returned to the workflow's loop."""
    wf.state.termination = progress.start
    if progress.drain is not None:  # there was a Node to drain
        after = await _drain(wf, first=progress.drain)
        if progress.volumes_attached is None:
            return after
        wf.enter(after)
        after = await detach(wf, first=progress.volumes_attached)
        if progress.instance_gone is None:
            return after
        wf.enter(after)
    else:
        wf.enter(TERMINATING)
    assert progress.instance_gone is not None
    after = await terminate(wf, first=progress.instance_gone)
    if not progress.finalized:
        return after
    wf.enter(after)
    return await finalize(wf, done=True)


async def _drain(wf: Lifecycle, first: DrainStatus | None = None) -> str:
    start = await begin(wf)
    node = start.node_name or wf.state.node_name
    if not node or start.instance_gone:
        return TERMINATING
    deadline = _deadline(start)
    backoff = BLOCKED_FIRST
    while True:
        if first is not None:
            status, first = first, None
        else:
            status = await calls.call_until_done(
                names.DRAIN,
                DrainInput(wf.name, node, start.grace_deadline),
                DrainStatus,
                summary=f"drain {node}",
                timeout=timedelta(minutes=5),
                heartbeat=None if wf.shape.local_drain else timedelta(seconds=20),
                local=wf.shape.local_drain,
            )
        wf.state.drain = status
        if status.done or _past(deadline):
            return DETACHING
        if status.blocked:
            delay, backoff = backoff, min(backoff * 2, BLOCKED_MAX)
            pdbs = sorted({p for b in status.blocked for p in b.pdbs})
            wf.state.waiting_for = f"PodDisruptionBudget {', '.join(pdbs) or '?'}"
        else:
            delay, backoff = DRAIN_POLL, BLOCKED_FIRST
            wf.state.waiting_for = (
                f"{len(status.held)} do-not-disrupt pod(s)" if status.held else "pods to leave"
            )
        wf.describe(
            f"draining `{node}`: {len(status.evicted)} evicted, {len(status.waiting)} leaving, "
            f"{len(status.blocked)} blocked by PDBs, {len(status.held)} do-not-disrupt"
        )
        await workflow.sleep(_until(delay, deadline))
        await wf.checkpoint()


async def detach(wf: Lifecycle, first: int | None = None) -> str:
    start = await begin(wf)
    node = start.node_name or wf.state.node_name
    if not node:
        return TERMINATING
    deadline = _deadline(start)
    wf.state.waiting_for = "VolumeAttachments"
    while True:
        if first is not None:
            attached, first = first, None
        else:
            attached = await calls.call_until_done(
                names.VOLUMES,
                VolumesInput(wf.name, node),
                int,
                summary=f"volumes on {node}",
                local=wf.shape.local_calls,
            )
        if attached == 0 or _past(deadline):
            return TERMINATING
        wf.describe(f"waiting for {attached} volume(s) to detach from `{node}`")
        await workflow.sleep(_until(VOLUME_POLL, deadline))
        await wf.checkpoint()


async def terminate(wf: Lifecycle, first: bool | None = None) -> str:
    await begin(wf)
    launched = wf.state.launched
    wf.state.waiting_for = "instance termination"
    wf.describe("terminating the instance")
    while True:
        if first is not None:
            gone, first = first, None
        else:
            gone = await calls.call_until_done(
                names.TERMINATE_INSTANCE,
                InstanceInput(wf.name, launched.provider_id if launched else None),
                bool,
                summary=(
                    f"terminate {launched.instance_id if launched else 'instance of ' + wf.name}"
                ),
                local=wf.shape.local_calls,
            )
        if gone:
            return FINALIZING
        await workflow.sleep(INSTANCE_POLL)
        await wf.checkpoint()


async def finalize(wf: Lifecycle, done: bool = False) -> str:
    """``done``: the termination pass removed the finalizers already."""
    start = await begin(wf)
    ending = wf.state.ending
    if not done:
        await calls.call_until_done(
            names.FINALIZE,
            FinalizeInput(wf.name, start.node_name or wf.state.node_name, _reason(wf)),
            bool,
            summary=f"remove finalizers of {wf.name}",
            local=wf.shape.local_calls,
        )
    wf.state.waiting_for = ""
    wf.describe(f"terminated: {ending.reason if ending else DELETED}")
    return TERMINATED
