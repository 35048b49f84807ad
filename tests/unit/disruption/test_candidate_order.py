"""Which candidate a budget of one lets go first: Karpenter v1.14's order, a node's price over
its disruption cost (its pods' eviction costs), highest first. At equal disruption cost the
dearer node goes (it saves more); a dearer node whose pods cost more to move than its price
makes up for waits behind a cheaper one that is cheap to disrupt (test catalog on-demand
prices in zone a: m5.xlarge 0.192, m5.2xlarge 0.384)."""

from __future__ import annotations

from tests.support.disruption import (
    DO_NOT_DISRUPT,
    OD_AMD,
    blocked,
    bound,
    commands,
    disrupt,
    disrupted,
    node_and_claim,
    pool,
)


def _cluster(big_pods: int) -> list[dict[str, object]]:
    """A keeper node with room that must stay (its pod may not be disrupted), a large node
    holding ``big_pods`` small pods and a small node holding one; either's pods fit on the
    keeper, and the pool's budget allows one node at a time."""
    docs: list[dict[str, object]] = [
        pool(requirements=OD_AMD, budgets=[{"nodes": "1"}]),
        *node_and_claim("keeper", "m5.2xlarge"),
        bound("k0", "keeper", "2", "4Gi", annotations={DO_NOT_DISRUPT: "true"}),
        *node_and_claim("large", "m5.2xlarge"),
        *node_and_claim("small", "m5.xlarge"),
        bound("s0", "small", "200m", "256Mi"),
    ]
    docs += [bound(f"l{i}", "large", "200m", "256Mi") for i in range(big_pods)]
    return docs


def test_at_equal_disruption_cost_the_dearer_node_goes_first() -> None:
    out = disrupt(_cluster(big_pods=1))  # 0.384 / 1 pod against 0.192 / 1 pod
    assert disrupted(out) == {"large": "Underutilized"}
    (cmd,) = commands(out)
    assert cmd["replacements"] == [] and cmd["pods"] == {"default/l0": "keeper"}
    assert "budget" in blocked(out)["small"]


def test_a_dearer_node_that_costs_more_to_disrupt_waits_behind_a_cheap_one() -> None:
    # 0.384 over 5 pods' eviction (0.077 a pod) against 0.192 over one (0.192): small first.
    out = disrupt(_cluster(big_pods=5))
    assert disrupted(out) == {"small": "Underutilized"}
    (cmd,) = commands(out)
    assert cmd["replacements"] == [] and cmd["pods"] == {"default/s0": "keeper"}
    assert "budget" in blocked(out)["large"]
