"""A disruption round decides the same with the solver as shipped and with every memo and
shortcut undone (``DirectSolver``, tests/support/direct_solver.py).

Consolidation simulations are where most pods fit nowhere: the solver remembers a class's
failure until something changes, and does not retry a pod that failed after the last
change. Clusters from the disruption benchmark (its Deployments on the EC2-shaped catalog,
and the diverse shape), a few dozen nodes, some with their pods' Deployments carrying
preferences that relax; the whole decision (commands, destinations, blocked and kept nodes
with their reasons, costs) must be equal, and the memories must have answered.
"""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.disruption import NOW, _docs, apply, build_cluster
from scheduling.disruption import simulate
from scheduling.disruption.report import decision_to_dict
from scheduling.disruption.round import run_round
from scheduling.pods import Pod
from scheduling.solver import Solver
from scheduling.solving.podclass import PodClass, RelaxState
from tests.support.direct_solver import DirectSolver


class CountingSolver(Solver):
    """The solver as shipped, counting the failures it remembered instead of working out
    (a pod answered whole, or one relaxation step answered for its class)."""

    remembered = 0
    not_retried = 0
    _worked = False

    def _schedule(self, pod: Pod) -> str | None:
        self._worked = False
        why = super()._schedule(pod)
        CountingSolver.remembered += why is not None and not self._worked
        return why

    def _schedule_from(
        self, pod: Pod, state: RelaxState, first: PodClass | None = None
    ) -> str | None:
        self._worked = True
        return super()._schedule_from(pod, state, first)

    def _place(self, pod: Pod, cls: PodClass) -> str | None:
        known = cls.failed_at
        hit = known is not None and known[0] == self.progress.changes
        CountingSolver.remembered += hit and not self.problem.volumes.get(pod.key)
        return super()._place(pod, cls)

    def _fails_again(self, at: int) -> bool:
        again = super()._fails_again(at)
        CountingSolver.not_retried += again
        return again


def _decide(docs: list[dict[str, Any]], types: Any, solver: type[Solver]) -> dict[str, Any]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(simulate, "Solver", solver)
        result = run_round(_docs(docs), types, NOW)
    return decision_to_dict(result.decision)


@pytest.mark.parametrize(
    ("workload", "nodes", "seed"),
    [("deployments", 30, 7), ("deployments", 60, 3), ("diverse", 60, 5), ("plain", 40, 2)],
)
def test_rounds_decide_the_same_as_with_the_direct_solver(
    workload: str, nodes: int, seed: int
) -> None:
    """Three rounds, each applied before the next: the later rounds, on a cluster already
    consolidated, are the ones whose simulations mostly fail."""
    docs, types = build_cluster(workload, nodes, seed=seed)
    CountingSolver.remembered = CountingSolver.not_retried = 0
    for rnd in range(1, 4):
        shipped = _decide(docs, types, CountingSolver)
        assert shipped == _decide(docs, types, DirectSolver)
        assert shipped["commands"] or shipped["kept"]
        decision = run_round(_docs(docs), types, NOW).decision
        docs = apply(docs, decision, types, rnd)
    if workload == "deployments":
        assert CountingSolver.remembered > 300
        assert CountingSolver.not_retried > 20
