"""Termination: taint, drain, wait for volumes, terminate the instance, drop finalizers.

As Karpenter's termination controller, with the waiting done by durable timers: a drain pass
blocked by a PodDisruptionBudget is retried with exponential backoff (and reported on the
claim), and the claim's terminationGracePeriod bounds the drain and the volume wait.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from temporalio import workflow

from workflows.nodeclaim import calls
from workflows.nodeclaim.context import Lifecycle
from workflows.nodeclaim.state import DELETED, DETACHING, FINALIZING, TERMINATED, TERMINATING

with workflow.unsafe.imports_passed_through():
    from activities.lifecycle.types import (
        BeginTerminationInput,
        DrainInput,
        DrainStatus,
        FinalizeInput,
        InstanceInput,
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


async def begin(wf: Lifecycle) -> TerminationStart:
    if wf.state.termination is None:
        ending = wf.state.ending
        spec = wf.state.spec
        launched = wf.state.launched
        wf.state.termination = await calls.call_until_done(
            names.BEGIN_TERMINATION,
            BeginTerminationInput(
                name=wf.name,
                uid=spec.uid if spec else "",
                reason=ending.reason if ending else DELETED,
                message=ending.message if ending else "",
                provider_id=launched.provider_id if launched else None,
            ),
            TerminationStart,
            summary=f"taint and delete {wf.name} ({ending.reason if ending else DELETED})",
            local=wf.shape.local_calls,
        )
    return wf.state.termination


async def drain(wf: Lifecycle) -> str:
    start = await begin(wf)
    node = start.node_name or wf.state.node_name
    if not node or start.instance_gone:
        return TERMINATING
    deadline = _deadline(start)
    backoff = BLOCKED_FIRST
    while True:
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


async def detach(wf: Lifecycle) -> str:
    start = await begin(wf)
    node = start.node_name or wf.state.node_name
    if not node:
        return TERMINATING
    deadline = _deadline(start)
    wf.state.waiting_for = "VolumeAttachments"
    while True:
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


async def terminate(wf: Lifecycle) -> str:
    await begin(wf)
    launched = wf.state.launched
    wf.state.waiting_for = "instance termination"
    wf.describe("terminating the instance")
    while True:
        gone = await calls.call_until_done(
            names.TERMINATE_INSTANCE,
            InstanceInput(wf.name, launched.provider_id if launched else None),
            bool,
            summary=f"terminate {launched.instance_id if launched else 'instance of ' + wf.name}",
            local=wf.shape.local_calls,
        )
        if gone:
            return FINALIZING
        await workflow.sleep(INSTANCE_POLL)
        await wf.checkpoint()


async def finalize(wf: Lifecycle) -> str:
    start = await begin(wf)
    ending = wf.state.ending
    await calls.call_until_done(
        names.FINALIZE,
        FinalizeInput(
            wf.name, start.node_name or wf.state.node_name, ending.reason if ending else DELETED
        ),
        bool,
        summary=f"remove finalizers of {wf.name}",
        local=wf.shape.local_calls,
    )
    wf.state.waiting_for = ""
    wf.describe(f"terminated: {ending.reason if ending else DELETED}")
    return TERMINATED
