"""One disruption round from a cluster's objects: the entry point ``joinery plan
--disruption`` and the durable DisruptionWorkflow's compute activity share.

Pending pods are simulated first (the plan), then the engine decides on the cluster as the
plan leaves it. Everything here is pure: the caller reads the objects (files or a live
cluster) and the clock, and passes them in.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from models.instancetype import InstanceType
from scheduling.disruption.budgets import BudgetLedger
from scheduling.disruption.candidates import classify
from scheduling.disruption.cluster import read_cluster
from scheduling.disruption.engine import decide
from scheduling.disruption.pdb import PdbLedger
from scheduling.disruption.types import RoundDecision
from scheduling.inputs import Document, Parsed, build_problem
from scheduling.solver import Plan, Solver


@dataclass
class RoundResult:
    parsed: Parsed
    solver: Solver
    plan: Plan
    decision: RoundDecision


def run_round(
    documents: Iterable[Document], instance_types: list[InstanceType], now: datetime
) -> RoundResult:
    """Plan the pending pods, then decide the round. Raises ``InputError`` (one line naming
    the document and field) for invalid input."""
    docs = list(documents)
    parsed = build_problem(docs, instance_types)
    problem = parsed.problem
    solver = Solver(problem)
    plan = solver.solve()
    cluster = read_cluster(docs, problem, instance_types)
    budgets = BudgetLedger.build(cluster.pools.values(), cluster.managed, now)
    bound = [p for pods in cluster.node_pods.values() for p in pods]
    healthy = {key for key, facts in cluster.pods.items() if facts.healthy}
    pdbs = PdbLedger(cluster.pdbs, bound + problem.pending, healthy)
    nominated = {name: [p.key for p in pods] for name, pods in plan.existing.items() if pods}
    candidates, blocked = classify(cluster, nominated, budgets, pdbs, instance_types, now)
    decision = decide(
        problem, plan, cluster.managed, candidates, blocked, budgets, pdbs, cluster.pools
    )
    return RoundResult(parsed, solver, plan, decision)


def decide_round(
    documents: Iterable[Document], instance_types: list[InstanceType], now: datetime
) -> RoundDecision:
    """The round's decision alone (what the durable workflow acts on)."""
    return run_round(documents, instance_types, now).decision
