"""A node class's status: what its selectors resolved to, and whether it can be used.

The provider resolves it (``CloudProvider.nodeclass_status``; for an EC2NodeClass,
``subnets``, ``securityGroups`` and ``amis`` list what the selector terms matched, as
Karpenter publishes them, with one condition per selector and ``InstanceProfileReady``);
``ValidationSucceeded`` is for the spec (False naming any field Joinery does not
implement yet, ``models.unimplemented``) and ``Ready`` over all of them. A condition turning
False records a Warning event, and NodePools referring to the class report
``NodeClassReady=False``. Resolution calls the cloud (EC2 and SSM), so it runs on changes
and on a slow resync, not per launch.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from activities.cloud.provider import CloudProvider
from activities.kubernetes import conditions as cond
from activities.kubernetes import nodeclasses
from activities.kubernetes.client import Kube
from activities.kubernetes.retries import retry_conflicts
from activities.status import reporting
from models import conditions, unimplemented
from models.errors import field_error

Obj = dict[str, Any]


def desired(
    body: Mapping[str, Any], cloud: CloudProvider
) -> tuple[list[cond.Condition], dict[str, Any]]:
    """The conditions and resolved fields ``body`` should have (calls the cloud when it is
    valid)."""
    try:
        nodeclass = cloud.nodeclass_kind.parse(body)
    except ValidationError as exc:
        invalid = cond.Condition(
            conditions.VALIDATION_SUCCEEDED, "False", "Invalid", field_error(exc)
        )
        return [invalid], {}
    resolved = cloud.nodeclass_status(nodeclass)
    out = [c for c in resolved.conditions if c.type != conditions.VALIDATION_SUCCEEDED]
    # the provider's own verdict on the spec (the AKSNodeClass's), else the fields Joinery
    # does not implement (models.unimplemented)
    out.append(
        next(
            (c for c in resolved.conditions if c.type == conditions.VALIDATION_SUCCEEDED),
            reporting.refusal(unimplemented.nodeclass_fields(body)),
        )
    )
    return out, dict(resolved.fields)


def report(kube: Kube, cloud: CloudProvider, name: str) -> list[cond.Condition]:
    """Bring ``name``'s status up to date; return the conditions that newly turned False."""
    kind = cloud.nodeclass_kind
    resource = kind.resource
    body = reporting.live(lambda: nodeclasses.get(kube, name, resource))
    if body is None:
        return []
    wanted, fields = desired(body, cloud)

    def write() -> list[cond.Condition]:
        current = nodeclasses.get(kube, name, resource)
        status = current.get("status") or {}
        existing = status.get("conditions") or []
        turned_false = reporting.newly_false(existing, wanted)
        if reporting.needs_write(existing, wanted):
            current = nodeclasses.set_conditions(
                kube, current, wanted, resource=resource, readiness=kind.readiness
            )
        if fields and any(status.get(k) != v for k, v in fields.items()):
            nodeclasses.record_resolved(kube, current, fields, resource)
        return turned_false

    turned_false = retry_conflicts(write)
    reporting.warn(kube, resource.kind, name, turned_false, resource.api_version)
    return turned_false
