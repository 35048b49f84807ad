"""The planning activities as Temporal sees them."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from temporalio import activity

from activities.deps import Deps
from activities.failures import typed_failures
from activities.heartbeating import heartbeating
from activities.kubernetes import nodeclaims
from activities.lifecycle.start import start_lifecycle
from activities.planning import create, plan, pod_events, provision
from activities.planning.summary import summary_of_claim
from activities.planning.types import (
    CreatedNodeClaim,
    PlanInput,
    PlannedNodeClaim,
    PlanOutcome,
    ProvisionOutcome,
    StartInput,
)
from models.contract import ProvisioningActivity as names

# Workflow starts in flight at once: a burst of 1,000 claims is 1,000 start calls, and one
# after the other they take longer than the activity's timeout on a loaded server.
STARTS_IN_FLIGHT = 32


class PlanningActivities:
    def __init__(self, deps: Deps) -> None:
        self.deps = deps

    @activity.defn(name=names.PROVISION)
    def provision(self, inp: PlanInput) -> ProvisionOutcome:
        info = activity.info()
        key = provision.round_key(
            info.workflow_id or "", info.workflow_run_id or "", info.activity_id
        )
        with typed_failures():
            return heartbeating(
                lambda: provision.provision(
                    self.deps, frozenset(inp.paused_pools), key, info.attempt
                ),
                activity.heartbeat,
            )

    @activity.defn(name=names.PLAN)
    def plan(self, inp: PlanInput) -> PlanOutcome:
        with typed_failures():
            outcome = heartbeating(
                lambda: plan.plan(
                    self.deps.kube,
                    self.deps.provider(),
                    frozenset(inp.paused_pools),
                    self.deps.counters,
                    self.deps.policies,
                ),
                activity.heartbeat,
            )
        pod_events.publish(self.deps.kube, outcome)
        return outcome.for_history()

    @activity.defn(name=names.CREATE)
    def create(self, planned: list[PlannedNodeClaim]) -> list[CreatedNodeClaim]:
        with typed_failures():
            return create.create(self.deps, planned)

    @activity.defn(name=names.START)
    async def start(self, inp: StartInput) -> int:
        claims = [*inp.claims, *(await asyncio.to_thread(self._summaries, inp.names))]
        client = activity.client()
        queue = self.deps.lifecycle_task_queue()
        gate = asyncio.Semaphore(STARTS_IN_FLIGHT)

        async def one(claim: CreatedNodeClaim) -> None:
            async with gate:
                await start_lifecycle(
                    client,
                    cluster=self.deps.cluster,
                    task_queue=queue,
                    name=claim.name,
                    summary=claim.summary,
                    search_attributes=inp.search_attributes,
                )

        await asyncio.gather(*(one(claim) for claim in claims))
        return len(claims)

    def _summaries(self, names: list[str]) -> list[CreatedNodeClaim]:
        """``names`` with their UI summaries, read back from the claims in one list call."""
        if not names:
            return []
        with typed_failures():
            listed, _ = nodeclaims.list_(self.deps.kube)
        by_name = {str(c["metadata"]["name"]): c for c in listed}
        return [
            CreatedNodeClaim(
                name,
                str(by_name[name]["metadata"].get("uid") or "") if name in by_name else "",
                summary_of_claim(by_name[name]) if name in by_name else "",
            )
            for name in names
        ]

    def all(self) -> list[Callable[..., Any]]:
        # plan and create serve rounds recorded before provision took their place.
        return [self.provision, self.start, self.plan, self.create]
