"""Karpenter's SpotToSpotConsolidation gate: off (its default), a spot node whose pods need
a new node stays; on, it is replaced from the 15 cheapest cheaper spot types (more when the
pool's minValues needs more), never from fewer than 15."""

from __future__ import annotations

from typing import Any

from models.policies import FeatureGates, Policies
from tests.support.catalogs import ZA
from tests.support.disruption import ALL, bound, commands, disrupt, kept, node_and_claim, pool
from tests.support.labels import CAPACITY_TYPE, INSTANCE_TYPE
from tests.support.manifests import req

GATE_ON = Policies(gates=FeatureGates(spot_to_spot_consolidation=True))
SMALL = [f"s{i:02d}.large" for i in range(20)]


def _type(name: str, cpu: str, spot: float, memory: str = "16Gi") -> dict[str, Any]:
    return {
        "name": name,
        "capacity": {"cpu": cpu, "memory": memory, "pods": "58"},
        "offerings": [
            {"zone": ZA, "capacityType": "spot", "price": spot},
            {"zone": ZA, "capacityType": "on-demand", "price": spot * 3},
        ],
    }


CATALOG = {
    "instanceTypes": [
        _type("m7i.4xlarge", "16", 1.0, "64Gi"),
        *(_type(name, "2", 0.02 + i / 100) for i, name in enumerate(SMALL)),
    ]
}


def _cluster(min_values: int | None = None) -> list[dict[str, Any]]:
    reqs = [req(CAPACITY_TYPE, "In", "spot")]
    if min_values:
        reqs.append(req(INSTANCE_TYPE, "In", "m7i.4xlarge", *SMALL, min_values=min_values))
    return [
        pool(requirements=reqs, budgets=ALL),
        *node_and_claim("s", "m7i.4xlarge", capacity_type="spot"),
        bound("w", "s", "1", "2Gi"),
    ]


def test_gate_off_keeps_the_spot_node() -> None:
    out = disrupt(_cluster(), CATALOG)
    assert commands(out) == []
    assert "SpotToSpotConsolidation is disabled" in kept(out)["s"]


def test_gate_on_replaces_it_from_the_fifteen_cheapest() -> None:
    out = disrupt(_cluster(), CATALOG, policies=GATE_ON)
    (cmd,) = commands(out)
    (rep,) = cmd["replacements"]
    assert rep["capacityTypes"] == ["spot"]
    assert rep["instanceTypes"] == SMALL[:15]


def test_gate_on_keeps_as_many_types_as_min_values_needs() -> None:
    out = disrupt(_cluster(min_values=18), CATALOG, policies=GATE_ON)
    (cmd,) = commands(out)
    (rep,) = cmd["replacements"]
    assert rep["instanceTypes"] == SMALL[:18]


def test_min_values_the_cheaper_types_cannot_give_blocks_the_replacement() -> None:
    """Karpenter re-checks minValues once the price has narrowed the replacement's types:
    21 types asked for, 20 cheaper than the node."""
    out = disrupt(_cluster(min_values=21), CATALOG, policies=GATE_ON)
    assert commands(out) == []
    assert "minValues 21" in kept(out)["s"]
