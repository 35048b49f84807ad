"""The provisioning simulation: place pending pods on existing capacity or on new NodeClaims.

It follows Karpenter's scheduler (pods largest first; existing and in-flight nodes, then
claims opened in this run, then a new claim from each NodePool by weight; preferences
relaxed one step at a time) with two changes that matter at scale and for cost:

* Pods with identical constraints form a *class*. A target that rejects a class for a
  monotone reason (resources, labels, taints, ports, anti-affinity) is never tried again for
  that class, so a Deployment's replicas cost little more than one pod.
* Claims are tried first-fit in creation order, and a zonal decision always pins one zone
  (the cheapest among the equally good), so recorded topology counts are exact.
* A failure is remembered until the solver changes (a pod placed, a pool turned tight): the
  next pod of the class, or alike in every relaxation step, gets the same answer, and a
  failed pod is not retried while nothing changed (solving/scheduler.py). A consolidation
  simulation, where most pods fit nowhere, is mostly answered so.

The solver is a few parts in ``scheduling.solving``, each owning its state: the problem as
the solve reads it (``view``), topology domains and counts (``domains``), pod classes
(``classes``), existing nodes (``existing``), claims with their limits (``claims``,
``limits``), pricing and slack filling, and the placement loop that drives them
(``scheduler``). This module is the entry point callers import.
"""

from __future__ import annotations

from scheduling.problem import Problem
from scheduling.solving.catalog import CatalogCache
from scheduling.solving.podclass import PodClass, RelaxState
from scheduling.solving.pricing import MAX_INSTANCE_TYPES
from scheduling.solving.rejections import NodeRejections
from scheduling.solving.result import Plan, PlannedClaim
from scheduling.solving.scheduler import Scheduler

__all__ = [
    "MAX_INSTANCE_TYPES",
    "CatalogCache",
    "NodeRejections",
    "Plan",
    "PlannedClaim",
    "PodClass",
    "RelaxState",
    "Solver",
    "solve",
]

# The solver is the placement loop over its parts (``Scheduler``), under the name callers know.
Solver = Scheduler


def solve(problem: Problem, order: str = "balanced") -> Plan:
    return Solver(problem, order).solve()
