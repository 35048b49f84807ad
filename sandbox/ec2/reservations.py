"""Capacity reservations, which moto does not emulate at all (no action answers).

Emulated here, as EC2 behaves:

* CreateCapacityReservation makes an on-demand capacity reservation (``default``), open or
  targeted, tagged from its TagSpecifications; :meth:`EmulatedReservations.add` also makes
  capacity blocks (``capacity-block``, with an end date), which EC2 sells through
  PurchaseCapacityBlock instead;
* DescribeCapacityReservations by id (an unknown one: ``InvalidCapacityReservationId.NotFound``)
  or by the filters Karpenter sends (``state``, ``owner-id``, ``tag:K``, ``tag-key``,
  ``instance-match-criteria``); a reservation past its end date is ``expired``;
* a launch targeted at a reservation (its launch template's CapacityReservationSpecification)
  counts against the reservation's available instances: once none is left, the override is
  refused with ``ReservationCapacityExceeded`` (a full ODCR); a terminated instance gives its
  place back (:meth:`EmulatedReservations.available`);
* :meth:`EmulatedReservations.cancel` ends an ODCR early (its instances keep running, now
  plain on-demand) and :meth:`EmulatedReservations.end` ends a capacity block (EC2 then
  reclaims its instances: they are terminated here).
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

ACCOUNT = "123456789012"  # moto's default account
EXCEEDED = "ReservationCapacityExceeded"


@dataclass
class Reservation:
    id: str
    instance_type: str
    zone: str
    total: int
    match_criteria: str = "open"
    reservation_type: str = "default"
    end: datetime | None = None
    tags: dict[str, str] = field(default_factory=dict)
    owner_id: str = ACCOUNT
    state: str = "active"
    instances: set[str] = field(default_factory=set)


@dataclass
class EmulatedReservations:
    by_id: dict[str, Reservation] = field(default_factory=dict)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def reset(self) -> None:
        with self._lock:
            self.by_id.clear()

    def add(
        self,
        instance_type: str,
        zone: str,
        count: int,
        match_criteria: str = "targeted",
        reservation_type: str = "default",
        end: datetime | None = None,
        tags: dict[str, str] | None = None,
    ) -> str:
        with self._lock:
            rid = f"cr-{next(self._ids):017x}"
            self.by_id[rid] = Reservation(
                rid, instance_type, zone, count, match_criteria, reservation_type, end, tags or {}
            )
        return rid

    def cancel(self, reservation_id: str) -> None:
        """An ODCR cancelled: no more launches; its instances stay, as on-demand."""
        with self._lock:
            r = self.by_id[reservation_id]
            r.state = "cancelled"
            r.instances.clear()

    def end(self, reservation_id: str, backend: Any) -> list[str]:
        """A capacity block reaches its end: EC2 reclaims (terminates) its instances."""
        with self._lock:
            r = self.by_id[reservation_id]
            r.state, r.end = "expired", datetime.now(UTC)
            ids, r.instances = sorted(r.instances), set()
        if ids:
            backend.terminate_instances(ids)
        return ids

    def available(self, r: Reservation, backend: Any) -> int:
        """Free places: the size less the instances in it that are still running."""
        running = 0
        for instance_id in list(r.instances):
            try:
                state = backend.get_instance(instance_id).state
            except Exception:
                state = "terminated"
            if state in ("terminated", "shutting-down"):
                r.instances.discard(instance_id)
            else:
                running += 1
        return max(0, r.total - running)

    def _state(self, r: Reservation) -> str:
        if r.state == "active" and r.end is not None and r.end <= datetime.now(UTC):
            r.state = "expired"
        return r.state

    def describe(
        self, ids: list[str], filters: dict[str, list[str]], backend: Any
    ) -> list[dict[str, Any]]:
        with self._lock:
            for rid in ids:
                if rid not in self.by_id:
                    raise KeyError(rid)
            chosen = [self.by_id[i] for i in ids] if ids else list(self.by_id.values())
            out = []
            for r in chosen:
                state = self._state(r)
                if not _matches(r, state, filters):
                    continue
                entry: dict[str, Any] = {
                    "CapacityReservationId": r.id,
                    "OwnerId": r.owner_id,
                    "InstanceType": r.instance_type,
                    "InstancePlatform": "Linux/UNIX",
                    "AvailabilityZone": r.zone,
                    "Tenancy": "default",
                    "TotalInstanceCount": r.total,
                    "AvailableInstanceCount": self.available(r, backend),
                    "State": state,
                    "InstanceMatchCriteria": r.match_criteria,
                    "ReservationType": r.reservation_type,
                    "EndDateType": "limited" if r.end else "unlimited",
                    "Tags": [{"Key": k, "Value": v} for k, v in sorted(r.tags.items())],
                }
                if r.end is not None:
                    entry["EndDate"] = r.end
                out.append(entry)
            return out

    def take(self, reservation_id: str, instance_type: str, zone: str, backend: Any) -> int:
        """How many instances the reservation can still take for (type, zone): 0 when full,
        ended, or for another type or zone."""
        with self._lock:
            r = self.by_id.get(reservation_id)
            if r is None or self._state(r) != "active":
                return 0
            if (r.instance_type, r.zone) != (instance_type, zone):
                return 0
            return self.available(r, backend)

    def record(self, reservation_id: str, instance_ids: list[str]) -> None:
        with self._lock:
            self.by_id[reservation_id].instances.update(instance_ids)

    def holding(self, instance_id: str) -> str | None:
        """The reservation an instance runs in (None: plain on-demand or spot)."""
        with self._lock:
            for r in self.by_id.values():
                if instance_id in r.instances:
                    return r.id
        return None


def _matches(r: Reservation, state: str, filters: dict[str, list[str]]) -> bool:
    for name, values in filters.items():
        if name == "state":
            ok = state in values
        elif name == "owner-id":
            ok = r.owner_id in values
        elif name == "instance-match-criteria":
            ok = r.match_criteria in values
        elif name == "tag-key":
            ok = any(k in r.tags for k in values)
        elif name.startswith("tag:"):
            ok = r.tags.get(name[4:]) in values
        elif name == "instance-type":
            ok = r.instance_type in values
        elif name == "availability-zone":
            ok = r.zone in values
        else:
            ok = True
        if not ok:
            return False
    return True
