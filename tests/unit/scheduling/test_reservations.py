"""Reserved offerings in a plan: preferred while a reservation has places, then on-demand.

The oracle here is counting: a reservation with N free places holds at most N claims, and
every claim beyond them is priced on what else its pool allows (Karpenter's fallback mode).
"""

from __future__ import annotations

from typing import Any

from tests.support.catalogs import ZA, ZB, catalog, od_price
from tests.support.labels import CAPACITY_TYPE, INSTANCE_TYPE
from tests.support.manifests import nodepool, pod, req
from tests.support.plans import plan

RID = "cr-0123456789abcdef0"
DIVISOR = 10_000_000


def _with_reservation(places: int, zone: str = ZA) -> dict[str, Any]:
    doc = catalog(["m5.large", "m5.xlarge"])
    m5 = next(t for t in doc["instanceTypes"] if t["name"] == "m5.large")
    m5["offerings"].append(
        {
            "zone": zone,
            "capacityType": "reserved",
            "price": od_price("m5.large") / DIVISOR,
            "reservationID": RID,
            "reservationCapacity": places,
        }
    )
    return doc


def _pods(n: int) -> list[dict[str, Any]]:
    # each pod needs a node of its own (1500m on a 2-cpu m5.large)
    return [pod(f"p{i}", "1500m", "1Gi") for i in range(n)]


POOL = [
    req(CAPACITY_TYPE, "In", "reserved", "on-demand"),
    req(INSTANCE_TYPE, "In", "m5.large"),
]


def test_claims_take_the_reservation_then_fall_back_to_on_demand() -> None:
    out = plan([nodepool(requirements=POOL), *_pods(3)], _with_reservation(2))
    kinds = sorted(c["capacityTypes"][0] for c in out["nodeClaims"])
    assert kinds == ["on-demand", "reserved", "reserved"]
    reserved = [c for c in out["nodeClaims"] if c["capacityTypes"] == ["reserved"]]
    assert all(c["zones"] == [ZA] for c in reserved)
    fallback = next(c for c in out["nodeClaims"] if c["capacityTypes"] == ["on-demand"])
    assert fallback["price"] == od_price("m5.large", ZA)
    assert out["cost"]["perHour"] == round(
        2 * od_price("m5.large") / DIVISOR + od_price("m5.large", ZA), 6
    )


def test_a_reservation_with_no_place_left_is_not_used() -> None:
    out = plan([nodepool(requirements=POOL), *_pods(1)], _with_reservation(0))
    assert [c["capacityTypes"] for c in out["nodeClaims"]] == [["on-demand"]]


def test_a_pool_without_reserved_never_uses_the_reservation() -> None:
    pool = [req(CAPACITY_TYPE, "In", "on-demand"), req(INSTANCE_TYPE, "In", "m5.large")]
    out = plan([nodepool(requirements=pool), *_pods(2)], _with_reservation(5))
    assert all(c["capacityTypes"] == ["on-demand"] for c in out["nodeClaims"])


def test_reserved_zone_is_preferred_over_a_cheaper_on_demand_zone() -> None:
    out = plan([nodepool(requirements=POOL), *_pods(1)], _with_reservation(1, ZB))
    (claim,) = out["nodeClaims"]
    assert claim["capacityTypes"] == ["reserved"] and claim["zones"] == [ZB]
