"""The provisioner's activities doubled: each round "plans" ``claims_per_round`` claims and
records what it was asked, for the ProvisionerWorkflow tests and the recorded histories."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from temporalio import activity

from activities.planning.types import (
    CreatedNodeClaim,
    PlanInput,
    PlannedNodeClaim,
    PlanOutcome,
    ProvisionOutcome,
    StartInput,
)
from models.contract import ProvisioningActivity


@dataclass
class FakePlanner:
    claims_per_round: int = 1
    plans: list[tuple[PlanInput, datetime]] = field(default_factory=list)
    created: list[str] = field(default_factory=list)
    started: list[str] = field(default_factory=list)

    def activities(self) -> list[Callable[..., Any]]:
        me = self

        @activity.defn(name=ProvisioningActivity.PROVISION)
        async def provision(inp: PlanInput) -> ProvisionOutcome:
            me.plans.append((inp, activity.info().current_attempt_scheduled_time))
            n = len(me.plans)
            names = [f"default-{n}{i}" for i in range(me.claims_per_round)]
            me.created.extend(names)
            return ProvisionOutcome(created=names, pending_pods=3)

        # The rounds recorded before PROVISION (tests/histories/record.py) used these three.
        @activity.defn(name=ProvisioningActivity.PLAN)
        async def plan(inp: PlanInput) -> PlanOutcome:
            me.plans.append((inp, activity.info().current_attempt_scheduled_time))
            n = len(me.plans)
            return PlanOutcome(
                claims=[
                    PlannedNodeClaim(f"default-{n}{i}", "default", {"metadata": {}})
                    for i in range(me.claims_per_round)
                ],
                pending_pods=3,
            )

        @activity.defn(name=ProvisioningActivity.CREATE)
        async def create(planned: list[PlannedNodeClaim]) -> list[CreatedNodeClaim]:
            me.created.extend(p.name for p in planned)
            return [CreatedNodeClaim(p.name, f"uid-{p.name}", "summary") for p in planned]

        @activity.defn(name=ProvisioningActivity.START)
        async def start(inp: StartInput) -> int:
            me.started.extend([*(c.name for c in inp.claims), *inp.names])
            return len(inp.claims) + len(inp.names)

        return [provision, plan, create, start]
