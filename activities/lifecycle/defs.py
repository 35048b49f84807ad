"""The NodeClaim lifecycle activities, as Temporal sees them.

Sync activities (the Kubernetes client and boto3 are sync): the worker runs them on a
thread pool. Each method is a thin shell over the module that owns the concern.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from temporalio import activity

from activities.deps import Deps
from activities.failures import typed_failures
from activities.heartbeating import heartbeating
from activities.lifecycle import (
    claims,
    disruption,
    drain,
    initialization,
    launch,
    registration,
    termination_pass,
)
from activities.lifecycle import termination as term
from activities.lifecycle.types import (
    BeginTerminationInput,
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


def _no_heartbeat(_evicted: list[str]) -> None:
    """A local activity records no heartbeat."""


class NodeClaimActivities:
    def __init__(self, deps: Deps) -> None:
        self.deps = deps

    @activity.defn(name=names.PREPARE)
    def prepare(self, name: str) -> ClaimSpec | None:
        with typed_failures():
            spec = claims.prepare(self.deps, name)
        if spec is not None:  # which code ran the run's first task (workflows/nodeclaim/shape.py)
            spec.read_by_shape = contract.NODECLAIM_SHAPE
        return spec

    @activity.defn(name=names.LAUNCH)
    def launch(self, claim: ClaimSpec) -> LaunchOutcome:
        with typed_failures():
            if activity.info().is_local:  # shape 3: a local activity records no heartbeat
                return launch.launch(self.deps, claim)
            return heartbeating(lambda: launch.launch(self.deps, claim), activity.heartbeat)

    @activity.defn(name=names.REGISTER)
    def register(self, inp: RegisterInput) -> str | None:
        with typed_failures():
            return registration.register(self.deps, inp)

    @activity.defn(name=names.INITIALIZE)
    def initialize(self, inp: InitializeInput) -> InitializeOutcome:
        with typed_failures():
            return initialization.initialize(self.deps, inp)

    @activity.defn(name=names.REGISTER_AND_INITIALIZE)
    def register_and_initialize(self, inp: RegisterInput) -> Registration:
        with typed_failures():
            return registration.register_and_initialize(self.deps, inp)

    @activity.defn(name=names.BEGIN_TERMINATION)
    def begin_termination(self, inp: BeginTerminationInput) -> TerminationStart:
        with typed_failures():
            return term.begin(self.deps, inp)

    @activity.defn(name=names.DRAIN)
    def drain(self, inp: DrainInput) -> DrainStatus:
        """One drain pass; resumes after the pods a previous attempt already evicted.

        Run as a local activity (the lifecycle's shape 1) it has no heartbeat: a pass run
        again finds the pods it evicted already leaving (deletionTimestamp) and skips them."""
        info = activity.info()
        details = info.heartbeat_details
        done: list[str] = list(details[0]) if details else []
        beat: Callable[[list[str]], None] = activity.heartbeat
        if info.is_local:
            beat = _no_heartbeat
        with typed_failures():
            return drain.drain_pass(self.deps, inp, already_evicted=done, heartbeat=beat)

    @activity.defn(name=names.VOLUMES)
    def volumes(self, inp: VolumesInput) -> int:
        with typed_failures():
            return term.volumes_attached(self.deps, inp)

    @activity.defn(name=names.TERMINATE_INSTANCE)
    def terminate_instance(self, inp: InstanceInput) -> bool:
        with typed_failures():
            return term.terminate_instance(self.deps, inp)

    @activity.defn(name=names.FINALIZE)
    def finalize(self, inp: FinalizeInput) -> bool:
        with typed_failures():
            return term.finalize(self.deps, inp)

    @activity.defn(name=names.TERMINATION_PASS)
    def termination_pass(self, inp: TerminationPassInput) -> TerminationProgress:
        """Begin termination, drain once, check volumes, terminate the instance, finalize:
        as far as it gets without waiting. Local only (a drain pass in it: no heartbeat)."""
        with typed_failures():
            return termination_pass.run(self.deps, inp)

    @activity.defn(name=names.DISRUPTION_HOLD)
    async def disruption_hold(self, nodepool: str) -> str:
        return await disruption.hold(activity.client(), self.deps.cluster, nodepool)

    def all(self) -> list[Callable[..., Any]]:
        return [
            self.prepare,
            self.launch,
            self.register,
            self.initialize,
            self.register_and_initialize,
            self.begin_termination,
            self.drain,
            self.volumes,
            self.terminate_instance,
            self.finalize,
            self.termination_pass,
            self.disruption_hold,
        ]
