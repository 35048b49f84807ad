"""One disruption round from a cluster's objects: the entry point ``joinery plan
--disruption`` and the durable DisruptionWorkflow's compute activity share.

Pending pods are simulated first (the plan), then the engine decides on the cluster as the
plan leaves it. Everything here is pure: the caller reads the objects (files or a live
cluster) and the clock, and passes them in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from models.instancetype import InstanceType
from models.policies import Policies
from scheduling.disruption.engine import decide
from scheduling.disruption.prepare import RoundInputs, prepare_round
from scheduling.disruption.types import RoundDecision
from scheduling.inputs import Document, Parsed
from scheduling.solver import Plan, Solver


@dataclass
class RoundResult:
    inputs: RoundInputs
    decision: RoundDecision

    @property
    def parsed(self) -> Parsed:
        return self.inputs.parsed

    @property
    def solver(self) -> Solver:
        return self.inputs.solver

    @property
    def plan(self) -> Plan:
        return self.inputs.plan


def run_round(
    documents: Iterable[Document],
    instance_types: list[InstanceType],
    now: datetime,
    pool_instance_types: Mapping[str, list[InstanceType]] | None = None,
    policies: Policies | None = None,
) -> RoundResult:
    """Prepare the round, then let the engine decide it (``prepare_round`` says what the
    catalogs are for)."""
    i = prepare_round(documents, instance_types, now, pool_instance_types, policies)
    decision = decide(
        i.parsed.problem,
        i.plan,
        i.cluster.managed,
        i.candidates,
        i.blocked,
        i.budgets,
        i.pdbs,
        i.cluster.pools,
    )
    return RoundResult(i, decision)
