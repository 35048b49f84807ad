"""Everything a disruption round decides on, before any method runs: the pending pods'
plan, the cluster's managed nodes, budgets and PDBs, and the candidates with the blocked
nodes' reasons. Pure: the caller reads the objects and the clock."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from models.instancetype import InstanceType
from models.policies import Policies
from scheduling.disruption.aks_drift_reasons import KIND as AKS_NODECLASS_KIND
from scheduling.disruption.budgets import BudgetLedger
from scheduling.disruption.candidates import classify
from scheduling.disruption.cluster import ClusterView, read_cluster
from scheduling.disruption.nodeclass_drift_reasons import KIND as NODECLASS_KIND
from scheduling.disruption.pdb import PdbLedger
from scheduling.disruption.types import Candidate, NodeVerdict
from scheduling.inputs import Document, Parsed, build_problem
from scheduling.solver import Plan, Solver

# Read by the round alone (``read_cluster``), not by the planner (which would warn of them).
_ROUND_KINDS = frozenset({"PodDisruptionBudget", NODECLASS_KIND, AKS_NODECLASS_KIND})


@dataclass
class RoundInputs:
    """Everything a round decides on, before any method runs."""

    parsed: Parsed
    solver: Solver
    plan: Plan
    cluster: ClusterView
    budgets: BudgetLedger
    pdbs: PdbLedger
    candidates: list[Candidate]
    blocked: list[NodeVerdict]


def prepare_round(
    documents: Iterable[Document],
    instance_types: list[InstanceType],
    now: datetime,
    pool_instance_types: Mapping[str, list[InstanceType]] | None = None,
    policies: Policies | None = None,
) -> RoundInputs:
    """Plan the pending pods, read the cluster, count budgets and PDBs, and sort the managed
    nodes into candidates and blocked ones. Raises ``InputError`` (one line naming the
    document and field) for invalid input. ``pool_instance_types`` gives pools their own
    catalogs for the plan, the round's simulations (``Problem.pool_instance_types``) and
    their nodes' prices and drift; a pool without one uses ``instance_types``. EC2NodeClass
    documents among ``documents`` give their pools' nodes the AWS provider's drift checks."""
    docs = list(documents)
    parsed = build_problem(
        [d for d in docs if d.body.get("kind") not in _ROUND_KINDS],
        instance_types,
        pool_instance_types,
        policies,
    )
    problem = parsed.problem
    solver = Solver(problem)
    plan = solver.solve()
    cluster = read_cluster(docs, problem)
    budgets = BudgetLedger.build(cluster.pools.values(), cluster.managed, now)
    bound = [p for pods in cluster.node_pods.values() for p in pods]
    healthy = {key for key, facts in cluster.pods.items() if facts.healthy}
    pdbs = PdbLedger(cluster.pdbs, bound + problem.pending, healthy)
    nominated = {name: [p.key for p in pods] for name, pods in plan.existing.items() if pods}
    candidates, blocked = classify(cluster, nominated, budgets, pdbs, now)
    return RoundInputs(parsed, solver, plan, cluster, budgets, pdbs, candidates, blocked)
