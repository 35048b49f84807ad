"""Exactness on small clusters, a CI-sized sample of ``python -m tests.oracle.exactness``:
Joinery's disruption rounds run to a fixpoint, against the brute-force cheapest cluster one
step reaches (feasibility by the oracle). The figures are printed; the floors below are a
ratchet at the measured values (raise them as gaps are closed, docs/disruption.md)."""

from __future__ import annotations

from tests.oracle.exactness import run_one, small_cluster, summarize
from tests.oracle.rounds import cluster_cost

CLUSTERS = 150
# Measured on seeds 0..149 (issue 35): the share of clusters whose fixpoint is at or below
# the one-step optimum (136 of 150), the optimum Karpenter's pool order allows (140), and
# the optimum Karpenter's rules allow (150, since small moves are also tried in other pod
# orders, destinations and zones; 149 before). Karpenter's rules, which Joinery follows on
# purpose, keep the first two below 100% (docs/disruption.md, "Exactness", by class).
REACHED_FLOOR = 0.90
REACHABLE_FLOOR = 0.93
KARPENTER_FLOOR = 1.0
KARPENTER_WORST_GAP = 0.05


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
    reachable = summarize([o.against_reachable() for o in outcomes])
    for line in reachable.lines():
        print("in Karpenter's pool order: " + line)
    assert reachable.reached >= REACHABLE_FLOOR * reachable.compared
    karpenter = summarize([o.against_karpenter() for o in outcomes])
    for line in karpenter.lines():
        print("in Karpenter's rules: " + line)
    assert karpenter.reached >= KARPENTER_FLOOR * karpenter.compared
    assert karpenter.worst_gap <= KARPENTER_WORST_GAP and not karpenter.above_zero


def test_a_round_keeps_the_pods_its_moved_pods_need_by_affinity() -> None:
    """Seeds whose rounds once moved a pod next to the pod its required affinity selects,
    then, in a later command of the same round, moved that pod away (the first pod, evicted
    and scheduled again, would have found none): the oracle refused them."""
    for seed in (2837, 6319, 7144):
        o = run_one(seed)
        assert o.invalid is None, (seed, o.invalid)
