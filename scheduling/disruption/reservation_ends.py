"""What a capacity reservation's end does to the claims launched into it, as Karpenter does.

- A capacity block within 40 minutes of its end (``expiring``): its claims are deleted, so
  their nodes drain before EC2 starts reclaiming the instances 30 minutes before the end
  (Karpenter's ``capacityreservation.expiration`` controller).
- An on-demand capacity reservation that is no longer active (cancelled, or ended): its
  instances keep running as plain on-demand, so their claims and nodes are relabelled
  ``karpenter.sh/capacity-type: on-demand`` without the reservation labels (Karpenter's
  ``capacityreservation.capacitytype`` controller). A capacity block that has ended is left
  alone: EC2 terminates its instances and the garbage collector removes their claims.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from models import labels as L

CAPACITY_BLOCK = "capacity-block"
EXPIRING = "expiring"


@dataclass
class ReservationEnds:
    drain: list[str] = field(default_factory=list)  # claims to delete
    on_demand: list[str] = field(default_factory=list)  # claims to relabel on-demand


def _labels(claim: Mapping[str, Any]) -> Mapping[str, str]:
    return (claim.get("metadata") or {}).get("labels") or {}


def _live_reserved(claims: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [
        c
        for c in claims
        if not (c.get("metadata") or {}).get("deletionTimestamp")
        and _labels(c).get(L.CAPACITY_TYPE) == L.CAPACITY_TYPE_RESERVED
        and _labels(c).get(L.CAPACITY_RESERVATION_ID)
    ]


def reserved_ids(claims: Iterable[Mapping[str, Any]]) -> set[str]:
    """The reservations live reserved claims run in."""
    return {_labels(c)[L.CAPACITY_RESERVATION_ID] for c in _live_reserved(claims)}


def reservation_ends(
    claims: Iterable[Mapping[str, Any]], states: Mapping[str, str]
) -> ReservationEnds:
    """``states``: each still active reservation's state (``active`` or ``expiring``); a
    reservation absent from it is no longer active."""
    out = ReservationEnds()
    for claim in _live_reserved(claims):
        labels = _labels(claim)
        name = str(claim["metadata"]["name"])
        state = states.get(labels[L.CAPACITY_RESERVATION_ID])
        if state == EXPIRING:
            out.drain.append(name)
        elif state is None and labels.get(L.CAPACITY_RESERVATION_TYPE) != CAPACITY_BLOCK:
            out.on_demand.append(name)
    return out


def on_demand_labels() -> dict[str, str | None]:
    """The label patch of a claim (and its node) whose reservation has ended."""
    patch: dict[str, str | None] = {L.CAPACITY_TYPE: L.CAPACITY_TYPE_ON_DEMAND}
    patch.update({k: None for k in L.RESERVATION_LABELS})
    return patch
