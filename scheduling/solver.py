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
  failed pod is not retried while nothing changed (solving/placement.py). A consolidation
  simulation, where most pods fit nowhere, is mostly answered so.
"""

from __future__ import annotations

from models.resources import CPU, MEMORY
from scheduling.pods import Pod
from scheduling.problem import Problem
from scheduling.solving.catalog import CatalogCache
from scheduling.solving.podclass import PodClass, RelaxState
from scheduling.solving.pricing import MAX_INSTANCE_TYPES
from scheduling.solving.rejections import NodeRejections
from scheduling.solving.result import Plan, PlannedClaim
from scheduling.solving.slack import SlackFilling

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


class Solver(SlackFilling):
    """One scheduling run over a Problem. Deterministic for a given input.

    The layers it stacks live in ``scheduling.solving``; this class only runs them."""

    def solve(self) -> Plan:
        self._memory_per_cpu = self.catalog.memory_per_cpu(self.all_types)
        demand = [0] * len(self.dims)
        for p in self.problem.pending:
            for i, v in enumerate(self.vec(p.requests)):
                demand[i] += v
        self._demand = demand
        self._existing()
        self._declare_groups()
        self._bound_pods_topology()
        pending = [p for p in self.problem.pending if p.key not in self.problem.rejected]
        unschedulable = dict(self.problem.rejected)
        queue = []
        for p in pending:
            if p.invalid:
                unschedulable[p.key] = p.invalid
            else:
                queue.append(p)
        if self.order == "balanced":
            queue = self._balanced_order(queue)
        else:
            queue.sort(key=lambda p: (-p.requests.get(CPU, 0), -p.requests.get(MEMORY, 0), p.key))
        failed: list[tuple[Pod, str, int]] = []
        for p in queue:
            self._schedule_or_note(p, failed)
        # Pods that failed may fit now that others placed (pod affinity); retry until stable.
        while failed:
            retry, failed = failed, []
            for p, why, at in retry:
                if self._fails_again(at):
                    failed.append((p, why, at))
                    continue
                self.states.pop(id(p), None)
                self._schedule_or_note(p, failed)
            if len(failed) == len(retry):
                break
        for p, why, _ in failed:
            unschedulable[p.key] = why
        scheduled = [p for p in queue if p.key not in unschedulable]
        if self.order == "balanced":
            self._fill_slack()
        claims = [self._finalize(c) for c in self.claims if c.pods]
        existing = {t.name: list(t.new_pods) for t in self.existing if t.new_pods}
        return Plan(claims, existing, unschedulable, scheduled)

    def _schedule_or_note(self, pod: Pod, failed: list[tuple[Pod, str, int]]) -> None:
        """Schedule a pod from its first relaxation step; if it fits nowhere, note it in
        ``failed`` with the solver's changes count when it failed (-1 if its own attempt
        changed the solver, say by turning a pool tight)."""
        before = self._changes
        why = self._schedule(pod)
        if why is not None:
            failed.append((pod, why, before if self._changes == before else -1))

    def _fails_again(self, at: int) -> bool:
        """Whether a pod that failed when the solver's changes count was ``at`` would fail
        again now, for the same reason and at the same relaxation step: nothing it can see
        has changed since (a retry starts from the first step, as its attempt did). On a
        consolidation simulation most failed pods failed after the last placement."""
        return at == self._changes


def solve(problem: Problem, order: str = "balanced") -> Plan:
    return Solver(problem, order).solve()
