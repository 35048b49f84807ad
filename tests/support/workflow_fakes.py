"""Test doubles for the lifecycle activities, registered under the real activity names.

``FakeCloud`` scripts what the cluster and EC2 would answer and records every call, so
workflow tests can check order and timing. Times come from the (possibly time-skipping)
server via the activity's scheduled time, never the wall clock. A local activity's scheduled
time is the worker's wall clock, so under time skipping set ``clock`` to the environment's
``get_current_time`` and local calls read the server's (skipped) time from it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.lifecycle.types import (
    BeginTerminationInput,
    BlockedPod,
    ClaimSpec,
    DrainInput,
    DrainStatus,
    FinalizeInput,
    InitializeInput,
    InitializeOutcome,
    InstanceInput,
    LaunchOutcome,
    RegisterInput,
    Registration,
    TerminationPassInput,
    TerminationProgress,
    TerminationStart,
    VolumesInput,
)
from models import contract
from models.contract import NodeClaimActivity as names


def spec(name: str = "claim-a", **kw: Any) -> ClaimSpec:
    base: dict[str, Any] = {
        "name": name,
        "uid": f"uid-{name}",
        "nodepool": "default",
        "nodeclass": "default",
        "expire_after_seconds": None,
    }
    base.update(kw)
    return ClaimSpec(**base)


def blocked(n: int = 1) -> DrainStatus:
    return DrainStatus(
        done=False, blocked=[BlockedPod(f"ns/web-{i}", ["ns/web-pdb"]) for i in range(n)]
    )


@dataclass
class FakeCloud:
    claim: ClaimSpec | None = field(default_factory=spec)
    launch_error: str | None = None  # ApplicationError type to raise
    launch_error_retryable: bool = False
    register_after: int | None = 0  # polls returning None first; None = never registers
    initialize_after: int = 0
    drain_script: list[DrainStatus] = field(default_factory=list)  # then done
    drain_forever: DrainStatus | None = None
    volumes_script: list[int] = field(default_factory=list)
    instance_polls: int = 0  # calls answering "still terminating" first
    calls: list[tuple[str, Any, Any]] = field(default_factory=list)  # (name, arg, time)
    launch_tgp_seconds: float | None = None
    paused_checks: int = 0  # disruption-hold answers "paused" this many times first
    clock: Callable[[], Awaitable[datetime]] | None = None  # the time-skipping server's time
    # What prepare stamps on the spec: the shape the worker's code knows (0: a shape-1 worker).
    read_by_shape: int = contract.NODECLAIM_SHAPE
    # activity name -> how many of its calls fail first (non-retryable, as RBAC's Forbidden)
    failures: dict[str, int] = field(default_factory=dict)

    async def _now(self) -> datetime:
        info = activity.info()
        if info.is_local and self.clock is not None:
            return await self.clock()
        return info.current_attempt_scheduled_time

    async def _record(self, name: str, arg: Any) -> None:
        self.calls.append((name, arg, await self._now()))
        if self.failures.get(name, 0) > 0:
            self.failures[name] -= 1
            raise ApplicationError(f"fake {name} failure", type="Forbidden", non_retryable=True)

    def names(self) -> list[str]:
        return [c[0] for c in self.calls]

    def times(self, name: str) -> list[Any]:
        return [t for n, _, t in self.calls if n == name]

    def args(self, name: str) -> list[Any]:
        return [a for n, a, _ in self.calls if n == name]

    def activities(self) -> list[Callable[..., Any]]:
        cloud = self

        @activity.defn(name=names.PREPARE)
        async def prepare(name: str) -> ClaimSpec | None:
            await cloud._record(names.PREPARE, name)
            if cloud.claim is None:
                return None
            return dataclasses.replace(cloud.claim, read_by_shape=cloud.read_by_shape)

        @activity.defn(name=names.LAUNCH)
        async def launch(claim: ClaimSpec) -> LaunchOutcome:
            await cloud._record(names.LAUNCH, claim.name)
            if cloud.launch_error:
                raise ApplicationError(
                    f"fake {cloud.launch_error}",
                    type=cloud.launch_error,
                    non_retryable=not cloud.launch_error_retryable,
                )
            return LaunchOutcome(
                provider_id="aws:///us-east-1a/i-0123456789",
                instance_id="i-0123456789",
                instance_type="m5.large",
                zone="us-east-1a",
                capacity_type="spot",
            )

        @activity.defn(name=names.REGISTER)
        async def register(inp: RegisterInput) -> str | None:
            await cloud._record(names.REGISTER, inp.provider_id)
            polls = sum(1 for n in cloud.names() if n == names.REGISTER)
            if cloud.register_after is None or polls <= cloud.register_after:
                return None
            return "i-0123456789"

        @activity.defn(name=names.INITIALIZE)
        async def initialize(inp: InitializeInput) -> InitializeOutcome:
            await cloud._record(names.INITIALIZE, inp.node_name)
            polls = sum(1 for n in cloud.names() if n == names.INITIALIZE)
            if polls <= cloud.initialize_after:
                return InitializeOutcome(False, "NodeNotReady")
            return InitializeOutcome(True)

        @activity.defn(name=names.BEGIN_TERMINATION)
        async def begin(inp: BeginTerminationInput) -> TerminationStart:
            await cloud._record(names.BEGIN_TERMINATION, inp)
            now = await cloud._now()
            tgp = cloud.claim.termination_grace_period_seconds if cloud.claim else None
            deadline = (now + timedelta(seconds=tgp)).isoformat() if tgp is not None else None
            registered = any(n == names.INITIALIZE for n in cloud.names()) or any(
                n == names.REGISTER for n in cloud.names()
            )
            node = "i-0123456789" if registered and cloud.register_after is not None else None
            return TerminationStart(node, now.isoformat(), deadline)

        @activity.defn(name=names.DRAIN)
        async def drain(inp: DrainInput) -> DrainStatus:
            await cloud._record(names.DRAIN, inp)
            if cloud.drain_script:
                return cloud.drain_script.pop(0)
            if cloud.drain_forever is not None:
                return cloud.drain_forever
            return DrainStatus(done=True)

        @activity.defn(name=names.VOLUMES)
        async def volumes(inp: VolumesInput) -> int:
            await cloud._record(names.VOLUMES, inp.node_name)
            return cloud.volumes_script.pop(0) if cloud.volumes_script else 0

        @activity.defn(name=names.TERMINATE_INSTANCE)
        async def terminate(inp: InstanceInput) -> bool:
            await cloud._record(names.TERMINATE_INSTANCE, inp)
            if cloud.instance_polls > 0:
                cloud.instance_polls -= 1
                return False
            return True

        @activity.defn(name=names.FINALIZE)
        async def finalize(inp: FinalizeInput) -> bool:
            await cloud._record(names.FINALIZE, inp)
            return True

        @activity.defn(name=names.DISRUPTION_HOLD)
        async def disruption_hold(nodepool: str) -> str:
            await cloud._record(names.DISRUPTION_HOLD, nodepool)
            if cloud.paused_checks > 0:
                cloud.paused_checks -= 1
                return f"disruption is paused for NodePool {nodepool}"
            return ""

        # The shape-2 calls run the doubles above in the order the real ones run the real
        # steps (activities/lifecycle/registration.py, termination_pass.py), each step
        # recorded under its own name too.
        @activity.defn(name=names.REGISTER_AND_INITIALIZE)
        async def register_and_initialize(inp: RegisterInput) -> Registration:
            await cloud._record(names.REGISTER_AND_INITIALIZE, inp.provider_id)
            node = await register(inp)
            if node is None:
                return Registration()
            return Registration(node, await initialize(InitializeInput(inp.claim, node)))

        @activity.defn(name=names.TERMINATION_PASS)
        async def termination_pass(inp: TerminationPassInput) -> TerminationProgress:
            await cloud._record(names.TERMINATION_PASS, inp)
            b = inp.begin
            progress = TerminationProgress(await begin(b))
            start = progress.start
            node = start.node_name or inp.node_name
            if node and not start.instance_gone:
                progress.drain = await drain(DrainInput(b.name, node, start.grace_deadline))
                if not progress.drain.done:
                    return progress
                progress.volumes_attached = await volumes(VolumesInput(b.name, node))
                if progress.volumes_attached:
                    return progress
            progress.instance_gone = await terminate(InstanceInput(b.name, b.provider_id))
            if not progress.instance_gone:
                return progress
            await finalize(FinalizeInput(b.name, node, b.reason))
            progress.finalized = True
            return progress

        return [
            register_and_initialize,
            termination_pass,
            disruption_hold,
            prepare,
            launch,
            register,
            initialize,
            begin,
            drain,
            volumes,
            terminate,
            finalize,
        ]
