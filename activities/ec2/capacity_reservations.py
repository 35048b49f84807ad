"""Capacity reservations an EC2NodeClass selects, and how many instances each has left.

Karpenter resolves ``capacityReservationSelectorTerms`` with DescribeCapacityReservations
(active reservations only, one query per id and one per tag term), keeps those that have not
ended, and reports them in ``status.capacityReservations``. A capacity block within 40
minutes of its end is ``expiring``: nothing launches into it any more and its nodes are
drained (:func:`expiring`). The count of free instances is EC2's, lowered by each launch this
worker makes and zeroed by a ``ReservationCapacityExceeded`` answer, until EC2's next answer
(:class:`ReservationAvailability`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from activities.ec2.errors import aws_errors
from models.ec2nodeclass import CapacityReservationSelectorTerm

DEFAULT = "default"
CAPACITY_BLOCK = "capacity-block"
ACTIVE = "active"
# EC2's answer to a launch targeted at a reservation with no free place
RESERVATION_FULL = "ReservationCapacityExceeded"
EXPIRING = "expiring"
# EC2 starts reclaiming a capacity block's instances 30 minutes before its end; Karpenter
# stops launching and drains 10 minutes before that.
EXPIRATION_PERIOD = timedelta(minutes=40)


@dataclass(frozen=True, slots=True)
class CapacityReservation:
    id: str
    instance_type: str
    zone: str
    owner_id: str
    reservation_type: str
    instance_match_criteria: str
    available: int
    end_time: datetime | None
    state: str
    interruptible: bool = False

    def to_status(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "availabilityZone": self.zone,
            "id": self.id,
            "instanceMatchCriteria": self.instance_match_criteria,
            "instanceType": self.instance_type,
            "ownerID": self.owner_id,
            "reservationType": self.reservation_type,
            "interruptible": self.interruptible,
            "state": self.state,
        }
        if self.end_time is not None:
            out["endTime"] = self.end_time.strftime("%Y-%m-%dT%H:%M:%SZ")
        return out


def query_params(term: CapacityReservationSelectorTerm) -> list[dict[str, Any]]:
    """The DescribeCapacityReservations calls one term makes, each for active ones only."""
    active = {"Name": "state", "Values": [ACTIVE]}
    out: list[dict[str, Any]] = []
    if term.id:
        out.append({"CapacityReservationIds": [term.id], "Filters": [active]})
    if term.tags or term.instance_match_criteria:
        filters = [active]
        if term.owner_id:
            filters.append({"Name": "owner-id", "Values": [term.owner_id]})
        for key, value in sorted((term.tags or {}).items()):
            if value == "*":
                filters.append({"Name": "tag-key", "Values": [key]})
            else:
                filters.append({"Name": f"tag:{key}", "Values": [value]})
        if term.instance_match_criteria:
            filters.append(
                {"Name": "instance-match-criteria", "Values": [term.instance_match_criteria]}
            )
        out.append({"Filters": filters})
    return out


def from_ec2(raw: dict[str, Any], now: datetime) -> CapacityReservation | None:
    """One of EC2's answers as Karpenter reads it; None for a kind it does not know."""
    criteria = str(raw.get("InstanceMatchCriteria", ""))
    kind = str(raw.get("ReservationType") or DEFAULT)
    if criteria not in ("open", "targeted") or kind not in (DEFAULT, CAPACITY_BLOCK):
        return None
    end = raw.get("EndDate")
    if isinstance(end, str):
        end = datetime.fromisoformat(end.replace("Z", "+00:00"))
    if isinstance(end, datetime) and end.tzinfo is None:
        end = end.replace(tzinfo=UTC)
    state = ACTIVE
    if kind == CAPACITY_BLOCK and end is not None and now >= end - EXPIRATION_PERIOD:
        state = EXPIRING
    return CapacityReservation(
        id=str(raw["CapacityReservationId"]),
        instance_type=str(raw["InstanceType"]),
        zone=str(raw["AvailabilityZone"]),
        owner_id=str(raw.get("OwnerId", "")),
        reservation_type=kind,
        instance_match_criteria=criteria,
        available=int(raw.get("AvailableInstanceCount", 0)),
        end_time=end,
        state=state,
        interruptible=bool(raw.get("Interruptible", False)),
    )


def list_reservations(
    ec2: Any, terms: list[CapacityReservationSelectorTerm], now: datetime | None = None
) -> list[CapacityReservation]:
    """The active reservations the terms select, by id, those already ended left out."""
    at = now or datetime.now(UTC)
    found: dict[str, CapacityReservation] = {}
    for term in terms:
        for params in query_params(term):
            with aws_errors("DescribeCapacityReservations"):
                try:
                    pages = list(
                        ec2.get_paginator("describe_capacity_reservations").paginate(**params)
                    )
                except Exception as exc:  # an unknown id is "none", as Karpenter reads it
                    if "InvalidCapacityReservationId" in str(exc):
                        continue
                    raise
            for page in pages:
                for raw in page.get("CapacityReservations", []):
                    cr = from_ec2(raw, at)
                    if cr is not None and (cr.end_time is None or cr.end_time > at):
                        found[cr.id] = cr
    return [found[k] for k in sorted(found)]


def expiring(reservations: list[CapacityReservation]) -> set[str]:
    return {r.id for r in reservations if r.state == EXPIRING}


class ReservationAvailability:
    """Free instances per reservation: EC2's last count, less this worker's launches since."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}
        self._lock = threading.Lock()

    def sync(self, reservations: list[CapacityReservation]) -> None:
        with self._lock:
            for r in reservations:
                self._counts[r.id] = r.available

    def count(self, reservation_id: str) -> int:
        with self._lock:
            return self._counts.get(reservation_id, 0)

    def mark_launched(self, reservation_id: str) -> None:
        with self._lock:
            if self._counts.get(reservation_id, 0) > 0:
                self._counts[reservation_id] -= 1

    def mark_unavailable(self, reservation_id: str) -> None:
        with self._lock:
            self._counts[reservation_id] = 0
