"""The disruption activities as Temporal sees them: thin shells over the modules that own
each concern (``compute``, ``marking``, ``replacements``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from temporalio import activity

from activities.deps import Deps
from activities.disruption import compute, marking, replacements
from activities.disruption.types import ComputeInput, Decision, LaunchInput, MarkInput, Readiness
from activities.failures import typed_failures
from activities.heartbeating import heartbeating
from activities.lifecycle import disruption
from models.contract import DisruptionActivity as names


class DisruptionActivities:
    def __init__(self, deps: Deps) -> None:
        self.deps = deps

    @activity.defn(name=names.PAUSE_STATE)
    async def pause_state(self, cluster: str) -> ComputeInput:
        """``joinery pause`` state, held by the cluster's provisioner (asked by query)."""
        status = await disruption.pause_state(activity.client(), cluster)
        return ComputeInput(
            paused_all=bool(status.get("paused_all")),
            paused_pools=list(status.get("paused_pools") or []),
        )

    @activity.defn(name=names.COMPUTE)
    def compute(self, inp: ComputeInput) -> Decision:
        with typed_failures():
            return heartbeating(lambda: compute.compute(self.deps, inp), activity.heartbeat)

    @activity.defn(name=names.MARK)
    def mark(self, inp: MarkInput) -> int:
        with typed_failures():
            return marking.mark(self.deps, inp)

    @activity.defn(name=names.UNMARK)
    def unmark(self, inp: MarkInput) -> int:
        with typed_failures():
            return marking.unmark(self.deps, inp)

    @activity.defn(name=names.LAUNCH_REPLACEMENTS)
    async def launch_replacements(self, inp: LaunchInput) -> list[str]:
        with typed_failures():
            return await replacements.launch(
                activity.client(), self.deps, self.deps.lifecycle_task_queue(), inp
            )

    @activity.defn(name=names.REPLACEMENTS_INITIALIZED)
    def replacements_initialized(self, names_: list[str]) -> Readiness:
        with typed_failures():
            return replacements.readiness(self.deps, names_)

    @activity.defn(name=names.DELETE_NODECLAIMS)
    def delete_nodeclaims(self, claims: list[str]) -> int:
        with typed_failures():
            return replacements.delete(self.deps, claims)

    def all(self) -> list[Callable[..., Any]]:
        return [
            self.pause_state,
            self.compute,
            self.mark,
            self.unmark,
            self.launch_replacements,
            self.replacements_initialized,
            self.delete_nodeclaims,
        ]
