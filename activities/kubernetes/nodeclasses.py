"""Node classes (EC2NodeClasses unless a ``resource`` says otherwise): read them and publish
what they resolved to."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from activities.kubernetes import conditions as cond
from activities.kubernetes import custom_objects, status
from activities.kubernetes.client import Kube
from activities.kubernetes.custom_objects import Obj, WatchEvent
from activities.kubernetes.resources import EC2NODECLASS, CustomResource
from models import conditions

# Each resolved selector is a condition; Ready needs them all.
EC2NODECLASS_READINESS = (
    conditions.AMIS_READY,
    conditions.SUBNETS_READY,
    conditions.SECURITY_GROUPS_READY,
    conditions.INSTANCE_PROFILE_READY,
    conditions.VALIDATION_SUCCEEDED,
)


def get(kube: Kube, name: str, resource: CustomResource = EC2NODECLASS) -> Obj:
    return custom_objects.get(kube, resource, name)


def list_(kube: Kube, resource: CustomResource = EC2NODECLASS) -> tuple[list[Obj], str]:
    return custom_objects.list_(kube, resource)


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
    resource: CustomResource = EC2NODECLASS,
    readiness: tuple[str, ...] = EC2NODECLASS_READINESS,
) -> Obj:
    return status.set_conditions(
        kube, resource, nodeclass, updates, ready_dependents=readiness, at=at
    )


def record_resolved(
    kube: Kube,
    nodeclass: Mapping[str, Any],
    resolved: Mapping[str, Any],
    resource: CustomResource = EC2NODECLASS,
) -> Obj:
    """Publish what the class resolved to in status (an EC2NodeClass's subnets /
    securityGroups / amis / instanceProfile, an AKSNodeClass's images / kubernetesVersion)."""
    return status.patch_status(kube, resource, nodeclass, resolved)
