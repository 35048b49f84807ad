"""An EC2NodeClass's status: what its selectors resolved to, and whether it can be used.

``subnets``, ``securityGroups`` and ``amis`` list what the selector terms matched (as
Karpenter publishes them); one condition per selector, ``ValidationSucceeded`` for the spec,
``InstanceProfileReady`` and ``Ready`` over all of them. A condition turning False records a
Warning event, and NodePools referring to the class report ``NodeClassReady=False``.
Resolution calls EC2 and SSM, so it runs on changes and on a slow resync, not per launch.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from activities.ec2.provider import EC2Provider
from activities.kubernetes import conditions as cond
from activities.kubernetes import nodeclasses
from activities.kubernetes.client import Kube
from activities.kubernetes.resources import EC2NODECLASS
from activities.kubernetes.retries import retry_conflicts
from activities.status import reporting
from models import conditions
from models.ec2nodeclass import EC2NodeClass
from models.errors import field_error

Obj = dict[str, Any]


def desired(
    body: Mapping[str, Any], ec2: EC2Provider
) -> tuple[list[cond.Condition], dict[str, Any]]:
    """The conditions and resolved fields ``body`` should have (calls EC2 when it is valid)."""
    try:
        nodeclass = EC2NodeClass.model_validate(body)
    except ValidationError as exc:
        invalid = cond.Condition(
            conditions.VALIDATION_SUCCEEDED, "False", "Invalid", field_error(exc)
        )
        return [invalid], {}
    resolved = ec2.resolve_nodeclass(nodeclass)
    out = [
        cond.Condition(c.type, c.status, c.reason, c.message or "")
        for c in resolved.conditions
        if c.type != conditions.READY
    ]
    out.append(
        cond.Condition(conditions.VALIDATION_SUCCEEDED, "True", conditions.VALIDATION_SUCCEEDED)
    )
    status = resolved.status()
    fields: dict[str, Any] = {
        "subnets": status.subnets,
        "securityGroups": status.security_groups,
        "amis": status.amis,
    }
    if status.instance_profile:
        fields["instanceProfile"] = status.instance_profile
    if nodeclass.spec.capacity_reservation_selector_terms:
        # drift reads it (CapacityReservationDrift): written even when empty
        fields["capacityReservations"] = status.capacity_reservations or []
    return out, fields


def report(kube: Kube, ec2: EC2Provider, name: str) -> list[cond.Condition]:
    """Bring ``name``'s status up to date; return the conditions that newly turned False."""
    body = reporting.live(lambda: nodeclasses.get(kube, name))
    if body is None:
        return []
    wanted, fields = desired(body, ec2)

    def write() -> list[cond.Condition]:
        current = nodeclasses.get(kube, name)
        status = current.get("status") or {}
        existing = status.get("conditions") or []
        turned_false = reporting.newly_false(existing, wanted)
        if reporting.needs_write(existing, wanted):
            current = nodeclasses.set_conditions(kube, current, wanted)
        if fields and any(status.get(k) != v for k, v in fields.items()):
            nodeclasses.record_resolved(kube, current, fields)
        return turned_false

    turned_false = retry_conflicts(write)
    reporting.warn(
        kube, EC2NODECLASS.kind, name, turned_false, f"{EC2NODECLASS.group}/{EC2NODECLASS.version}"
    )
    return turned_false
