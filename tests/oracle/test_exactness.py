"""Exactness on small clusters, a CI-sized sample of ``python -m tests.oracle.exactness``:
Joinery's disruption rounds run to a fixpoint, against the brute-force cheapest cluster one
step reaches (feasibility by the oracle). The figures are printed; the floors below are a
ratchet at the measured values (raise them as gaps are closed, docs/disruption.md)."""

from __future__ import annotations

from tests.oracle.exactness import run_one, small_cluster, summarize
from tests.oracle.rounds import cluster_cost

CLUSTERS = 150
# Measured on seeds 0..149 (session of issue 35): the share of clusters whose fixpoint is at
# or below the one-step optimum. Karpenter-shaped gaps (exactness.KNOWN) and heuristic
# bin packing keep it below 100%.
REACHED_FLOOR = 0.70


def test_small_clusters_reach_the_brute_force_optimum() -> None:
    outcomes = [run_one(seed) for seed in range(CLUSTERS)]
    summary = summarize(outcomes)
    for line in summary.lines():
        print(line)
    for o in outcomes:
        # A round the oracle refuses stops the fixpoint; only open defects (defects.py) may.
        assert o.invalid is None or "UNEXPLAINED" not in o.invalid, (o.seed, o.invalid)
        start = cluster_cost(small_cluster(o.seed).objects, small_cluster(o.seed).catalog)
        assert o.joinery <= start + 1e-9, f"seed {o.seed}: the fixpoint costs more than the start"
    assert summary.unknown == 0
    assert summary.reached >= REACHED_FLOOR * summary.compared
