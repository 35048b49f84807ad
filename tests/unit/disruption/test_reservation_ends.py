"""A reservation's end, decided as Karpenter's capacity-reservation controllers decide it."""

from __future__ import annotations

from typing import Any

from models import labels as L
from scheduling.disruption.reservation_ends import on_demand_labels, reservation_ends


def claim(name: str, rid: str, kind: str = "default", **meta: Any) -> dict[str, Any]:
    labels = {
        L.CAPACITY_TYPE: "reserved",
        L.CAPACITY_RESERVATION_ID: rid,
        L.CAPACITY_RESERVATION_TYPE: kind,
    }
    return {"metadata": {"name": name, "labels": labels, **meta}}


def test_each_end_has_its_own_answer() -> None:
    claims = [
        claim("kept", "cr-a"),
        claim("block-soon", "cr-b", "capacity-block"),
        claim("odcr-gone", "cr-c"),
        claim("block-gone", "cr-d", "capacity-block"),  # EC2 reclaims it: the GC's business
        claim("deleting", "cr-b", "capacity-block", deletionTimestamp="2026-01-01T00:00:00Z"),
        {"metadata": {"name": "on-demand", "labels": {L.CAPACITY_TYPE: "on-demand"}}},
    ]
    got = reservation_ends(claims, {"cr-a": "active", "cr-b": "expiring"})
    assert got.drain == ["block-soon"]
    assert got.on_demand == ["odcr-gone"]


def test_the_relabel_drops_every_reservation_label() -> None:
    patch = on_demand_labels()
    assert patch[L.CAPACITY_TYPE] == "on-demand"
    assert all(patch[k] is None for k in L.RESERVATION_LABELS)
