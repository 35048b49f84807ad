"""EC2NodeClasses: read them and publish what their selectors resolved to."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from activities.kubernetes import conditions as cond
from activities.kubernetes import custom_objects, status
from activities.kubernetes.client import Kube
from activities.kubernetes.custom_objects import Obj, WatchEvent
from activities.kubernetes.resources import EC2NODECLASS
from models import conditions

# Each resolved selector is a condition; Ready needs them all.
EC2NODECLASS_READINESS = (
    conditions.AMIS_READY,
    conditions.SUBNETS_READY,
    conditions.SECURITY_GROUPS_READY,
    conditions.INSTANCE_PROFILE_READY,
    conditions.VALIDATION_SUCCEEDED,
)


def get(kube: Kube, name: str) -> Obj:
    return custom_objects.get(kube, EC2NODECLASS, name)


def list_(kube: Kube) -> tuple[list[Obj], str]:
    return custom_objects.list_(kube, EC2NODECLASS)


def watch(kube: Kube, *, resource_version: str, timeout_seconds: int = 300) -> Iterator[WatchEvent]:
    return custom_objects.watch_(
        kube, EC2NODECLASS, resource_version=resource_version, timeout_seconds=timeout_seconds
    )


def set_conditions(
    kube: Kube,
    nodeclass: Mapping[str, Any],
    updates: Iterable[cond.Condition],
    *,
    at: str | None = None,
) -> Obj:
    return status.set_conditions(
        kube, EC2NODECLASS, nodeclass, updates, ready_dependents=EC2NODECLASS_READINESS, at=at
    )


def record_resolved(kube: Kube, nodeclass: Mapping[str, Any], resolved: Mapping[str, Any]) -> Obj:
    """Publish resolved subnets / securityGroups / amis / instanceProfile in status."""
    return status.patch_status(kube, EC2NODECLASS, nodeclass, resolved)


def annotate(kube: Kube, nodeclass: Mapping[str, Any], annotations: Mapping[str, str]) -> Obj:
    """Set ``annotations`` on the class (what its status has no field for), if unchanged
    since read (a conflict otherwise)."""
    meta = nodeclass.get("metadata") or {}
    return custom_objects.merge_patch(
        kube,
        EC2NODECLASS,
        str(meta.get("name")),
        {"metadata": {"annotations": dict(annotations)}},
        resource_version=meta.get("resourceVersion"),
    )
