"""The VM create refusals Azure gives when it has no room, as the emulator injects them.

What is emulated, by name (the code and the words Karpenter Azure's error matchers look for,
from its ``pkg/providers/instance`` handlers and the SDK extensions' ``pkg/errors``):

- ``SkuNotAvailable`` (409, at the PUT): the size is restricted or out of Spot capacity here;
- ``AllocationFailed`` (the create's operation fails; the VM stays, provisioningState Failed):
  no capacity for the size in the region;
- ``ZonalAllocationFailed`` (operation fails, VM Failed): none in that zone;
- ``OverconstrainedAllocationRequest`` / ``OverconstrainedZonalAllocationRequest``
  (operation fails, VM Failed): the size with these constraints (priority) fits nowhere / not
  in that zone;
- ``family-quota``, ``regional-quota``, ``low-priority-quota`` (409 ``OperationNotAllowed`` at
  the PUT, told apart by their message: "... Family Cores quota", "... Total Regional Cores
  quota", "... LowPriorityCores quota", each with "Submit a request for Quota increase").

A refusal can be narrowed to a size, a zone and a priority (``Regular`` or ``Spot``), and is
used up after ``times`` matching creates.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

QUOTA_TAIL = (
    " Additional details - Deployment Model: Resource Manager, Location: {location}, Current "
    "Limit: 10, Current Usage: 8, Additional Required: {cores}, (Minimum) New Limit Required: "
    "{need}. Submit a request for Quota increase at https://aka.ms/ProdportalCRP/#blade/"
    "Microsoft_Azure_Capacity/UsageAndQuota.ReactView by specifying parameters listed in the "
    "'Details' section for deployment to succeed."
)
ALLOCATION = (
    "Allocation failed. We do not have sufficient capacity for the requested VM size in this "
    "{scope}. Read more about improving likelihood of allocation success at "
    "https://aka.ms/allocation-guidance"
)
OVERCONSTRAINED = (
    "Allocation failed. VM(s) with the following constraints cannot be allocated, because the "
    "condition is too restrictive. Please remove some constraints and try again. Constraints "
    "applied are: - VM Size {size} - Priority {priority}{zone}"
)


@dataclass(frozen=True)
class Refusal:
    """What the create gets: ``synchronous`` ones answer the PUT itself; the others accept
    it, then fail its operation and leave the VM Failed, as Azure does."""

    status: int
    code: str
    message: str
    synchronous: bool


def refusal(
    kind: str, *, size: str, zone: str, priority: str, location: str, cores: int
) -> Refusal:
    """The answer for one refusal ``kind`` (see the module's list), worded for this VM."""
    quota = QUOTA_TAIL.format(location=location, cores=cores, need=8 + cores)
    where = f" - Zone {zone}" if zone else ""
    if kind == "SkuNotAvailable":
        return Refusal(
            409,
            "SkuNotAvailable",
            f"The requested VM size for resource 'Following SKUs have failed for Capacity "
            f"Restrictions: {size}' is currently not available in location '{location}'. Please "
            "try another size or deploy to a different location or different zone. See "
            "https://aka.ms/azureskunotavailable for details.",
            True,
        )
    if kind == "AllocationFailed":
        return Refusal(200, kind, ALLOCATION.format(scope="region"), False)
    if kind == "ZonalAllocationFailed":
        return Refusal(200, kind, ALLOCATION.format(scope="zone"), False)
    if kind in ("OverconstrainedAllocationRequest", "OverconstrainedZonalAllocationRequest"):
        text = OVERCONSTRAINED.format(size=size, priority=priority, zone=where)
        return Refusal(200, kind, text, False)
    if kind == "family-quota":
        family = "standardDSv3Family"
        text = f"Operation could not be completed as it results in exceeding approved {family} "
        return Refusal(409, "OperationNotAllowed", text + "Cores quota." + quota, True)
    if kind == "regional-quota":
        text = (
            "Operation could not be completed as it results in exceeding approved Total "
            "Regional Cores quota."
        )
        return Refusal(409, "OperationNotAllowed", text + quota, True)
    if kind == "low-priority-quota":
        text = (
            "Operation could not be completed as it results in exceeding approved "
            "LowPriorityCores quota."
        )
        return Refusal(409, "OperationNotAllowed", text + quota, True)
    raise ValueError(f"unknown capacity refusal {kind!r}")


KINDS = (
    "SkuNotAvailable",
    "AllocationFailed",
    "ZonalAllocationFailed",
    "OverconstrainedAllocationRequest",
    "OverconstrainedZonalAllocationRequest",
    "family-quota",
    "regional-quota",
    "low-priority-quota",
)


@dataclass
class _Pending:
    kind: str
    size: str | None
    zone: str | None
    priority: str | None
    remaining: int


@dataclass
class CapacityFaults:
    """Refusals injected for the next VM creates that match them."""

    _pending: list[_Pending] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def refuse(
        self,
        kind: str,
        *,
        size: str | None = None,
        zone: str | None = None,
        priority: str | None = None,
        times: int = 1,
    ) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown capacity refusal {kind!r}: one of {', '.join(KINDS)}")
        with self._lock:
            self._pending.append(_Pending(kind, size, zone, priority, times))

    def take(self, size: str, zone: str, priority: str) -> str | None:
        """The kind of the first refusal matching this create, used up by one."""
        with self._lock:
            for p in self._pending:
                if p.remaining <= 0:
                    continue
                if p.size not in (None, size) or p.zone not in (None, zone):
                    continue
                if p.priority not in (None, priority):
                    continue
                p.remaining -= 1
                return p.kind
        return None

    def clear(self) -> None:
        with self._lock:
            self._pending.clear()
