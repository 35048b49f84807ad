"""Azure's "no room" answers to a VM create, and the offerings each one makes unavailable.

As Karpenter Azure reads them (its ``offerings`` response-error handlers): the code, and for
``OperationNotAllowed`` the words of the message, say which quota or capacity ran out; the
refused offerings are kept out of the next plans for the unavailable-offerings TTL, and the
launch fails as insufficient capacity so the provisioner plans again without them.

| refusal | marked unavailable |
|---|---|
| LowPriorityCores quota | every spot offering |
| a family's Cores quota | the size, every zone, this capacity type |
| Total Regional Cores quota | every offering of this capacity type |
| ``SkuNotAvailable`` | the size, every zone, this capacity type |
| ``ZonalAllocationFailed`` | the size in this zone, both capacity types (Karpenter Azure also marks the family's larger sizes there) |
| ``AllocationFailed`` | the size, every zone, both capacity types |
| ``OverconstrainedZonalAllocationRequest`` | the size in this zone, this capacity type |
| ``OverconstrainedAllocationRequest`` | the size, every zone, this capacity type |
"""  # noqa: E501

from __future__ import annotations

from activities.cloud.errors import InsufficientCapacity, Pool
from activities.cloud.unavailable_offerings import ANY, UnavailableOfferings
from models import labels as L

OPERATION_NOT_ALLOWED = "OperationNotAllowed"
LOW_PRIORITY_QUOTA = "LowPriorityQuota"
FAMILY_QUOTA = "FamilyQuota"
REGIONAL_QUOTA = "RegionalQuota"
SKU_NOT_AVAILABLE = "SkuNotAvailable"
ZONAL_ALLOCATION_FAILED = "ZonalAllocationFailed"
ALLOCATION_FAILED = "AllocationFailed"
OVERCONSTRAINED_ZONAL = "OverconstrainedZonalAllocationRequest"
OVERCONSTRAINED = "OverconstrainedAllocationRequest"
_BY_CODE = (SKU_NOT_AVAILABLE, ZONAL_ALLOCATION_FAILED, ALLOCATION_FAILED)
_OVERCONSTRAINED = (OVERCONSTRAINED_ZONAL, OVERCONSTRAINED)


def kind_of(code: str, message: str) -> str | None:
    """Which refusal an ARM error is, or None when it is not about capacity or quota."""
    if code == OPERATION_NOT_ALLOWED:
        if "LowPriorityCores quota" in message:
            return LOW_PRIORITY_QUOTA
        if "Family Cores quota" in message:
            return FAMILY_QUOTA
        if "Total Regional Cores quota" in message:
            return REGIONAL_QUOTA
        return None
    if code in _BY_CODE or code in _OVERCONSTRAINED:
        return code
    return None


def mark(
    kind: str, unavailable: UnavailableOfferings, size: str, zone: str, capacity_type: str
) -> list[Pool]:
    """Mark what ``kind`` says is out, for a create of ``size`` in ``zone``; the pools marked."""
    both = (L.CAPACITY_TYPE_ON_DEMAND, L.CAPACITY_TYPE_SPOT)
    if kind == LOW_PRIORITY_QUOTA:
        pools = [Pool(L.CAPACITY_TYPE_SPOT, ANY, ANY)]
    elif kind == REGIONAL_QUOTA:
        pools = [Pool(capacity_type, ANY, ANY)]
    elif kind in (FAMILY_QUOTA, SKU_NOT_AVAILABLE, OVERCONSTRAINED):
        pools = [Pool(capacity_type, size, ANY)]
    elif kind == ZONAL_ALLOCATION_FAILED:
        pools = [Pool(ct, size, zone) for ct in both]
    elif kind == ALLOCATION_FAILED:
        pools = [Pool(ct, size, ANY) for ct in both]
    elif kind == OVERCONSTRAINED_ZONAL:
        pools = [Pool(capacity_type, size, zone)]
    else:
        return []
    for p in pools:
        unavailable.mark_unavailable(p.capacity_type, p.instance_type, p.zone)
    return pools


def insufficient_capacity(
    kind: str,
    message: str,
    unavailable: UnavailableOfferings,
    size: str,
    zone: str,
    capacity_type: str,
    nodeclaim: str,
) -> InsufficientCapacity:
    """Mark the refused offerings and the error the launch raises for them."""
    pools = mark(kind, unavailable, size, zone, capacity_type)
    return InsufficientCapacity(
        f"NodeClaim {nodeclaim}: {capacity_type} {size} in {zone} refused ({kind}): {message}",
        tuple(pools),
        kind,
    )
