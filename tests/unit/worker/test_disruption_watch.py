"""What the consolidation and drift scenarios count from their samples: the nodes a budget
caps, when the fleet last changed, and samples above the budget."""

from __future__ import annotations

from typing import Any

from sandbox.scenarios.consolidation import budget_excess
from sandbox.scenarios.disruption_watch import (
    RoundState,
    Sample,
    disrupting_nodes,
    last_change,
    round_timeline,
)


def node(name: str, pool: str = "p", *, tainted: bool = False, deleting: bool = False) -> Any:
    meta: dict[str, Any] = {"name": name, "labels": {"karpenter.sh/nodepool": pool}}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    taints = [{"key": "karpenter.sh/disrupted", "effect": "NoSchedule"}] if tainted else []
    return {"metadata": meta, "spec": {"taints": taints}}


def claim(name: str, node_name: str, *, deleting: bool = False) -> Any:
    meta: dict[str, Any] = {"name": name}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": meta, "status": {"nodeName": node_name}}


def test_disrupting_counts_tainted_deleting_and_claim_deleting_nodes_of_the_pool() -> None:
    nodes = [
        node("a", tainted=True),
        node("b", deleting=True),
        node("c"),  # its claim is being deleted
        node("d"),
        node("e", "other", tainted=True),  # another pool
    ]
    claims = [claim("ca", "a"), claim("cc", "c", deleting=True), claim("cd", "d")]
    assert disrupting_nodes(nodes, claims, "p") == {"a", "b", "c"}


def sample(
    at: float,
    claims: set[str],
    *,
    disrupting: int = 0,
    deleting: int = 0,
    rounds: RoundState | None = None,
) -> Sample:
    return Sample(
        at=at,
        running=4,
        pods=4,
        claims=frozenset(claims),
        deleting_claims=deleting,
        uninitialized_claims=0,
        instances=frozenset(claims),
        cost=0.1 * len(claims),
        disrupting=frozenset(f"n{i}" for i in range(disrupting)),
        rounds=rounds or RoundState(),
    )


def test_last_change_is_the_first_sample_of_the_final_value() -> None:
    samples = [
        sample(0, {"a", "b"}),
        sample(1, {"a"}),
        sample(2, {"a", "b"}),
        sample(3, {"c"}),
        sample(4, {"c"}),
    ]
    found = last_change(samples, lambda s: s.claims)
    assert found is samples[3]
    assert last_change([], lambda s: s.claims) is None
    assert last_change(samples[:1], lambda s: s.claims) is samples[0]


def test_budget_excess_counts_samples_over_the_rounded_up_percentage() -> None:
    # 10% of 12 nodes rounds up to 2; of 5 nodes to 1.
    ok = sample(0, {f"c{i}" for i in range(12)}, disrupting=2)
    over = sample(1, {f"c{i}" for i in range(12)}, disrupting=3)
    small_over = sample(2, {f"c{i}" for i in range(4)}, disrupting=2, deleting=1)
    assert budget_excess([ok], 10) == 0
    assert budget_excess([ok, over, small_over], 10) == 2


def test_the_timeline_has_each_round_phase_once_and_every_fleet_change() -> None:
    idle, computing = RoundState("Idle", 1), RoundState("Computing", 2)
    executing = RoundState("Executing", 2)
    samples = [
        sample(10, {"a", "b"}, rounds=idle),
        sample(11, {"a", "b"}, rounds=computing),
        sample(12, {"a", "b"}, rounds=computing),
        sample(13, {"a", "b", "c"}, rounds=executing),
        sample(14, {"a", "c"}, rounds=executing),
        sample(15, {"a", "b", "c"}, rounds=executing),
        sample(16, {"a", "c"}, rounds=executing),
    ]
    assert round_timeline(samples, 10) == {
        "r1 Idle": 0,
        "r2 Computing": 1,
        "r2 Executing": 3,
        "claims 2→3, instances 2→3": 3,
        "claims 3→2, instances 3→2": 4,
        "claims 2→3, instances 2→3 #2": 5,
        "claims 3→2, instances 3→2 #2": 6,
    }
