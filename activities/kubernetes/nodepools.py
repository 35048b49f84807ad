"""NodePools: read them, and report on them through status (Joinery never edits their spec)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from activities.kubernetes import conditions as cond
from activities.kubernetes import custom_objects, status
from activities.kubernetes.client import Kube
from activities.kubernetes.custom_objects import Obj, WatchEvent
from activities.kubernetes.resources import NODEPOOL
from models import conditions


def get(kube: Kube, name: str) -> Obj:
    return custom_objects.get(kube, NODEPOOL, name)


def list_(kube: Kube) -> tuple[list[Obj], str]:
    return custom_objects.list_(kube, NODEPOOL)


def watch(kube: Kube, *, resource_version: str, timeout_seconds: int = 300) -> Iterator[WatchEvent]:
    return custom_objects.watch_(
        kube, NODEPOOL, resource_version=resource_version, timeout_seconds=timeout_seconds
    )


def set_conditions(
    kube: Kube, pool: Mapping[str, Any], updates: Iterable[cond.Condition], *, at: str | None = None
) -> Obj:
    return status.set_conditions(
        kube, NODEPOOL, pool, updates, ready_dependents=conditions.NODEPOOL_READINESS, at=at
    )


def record_usage(
    kube: Kube, pool: Mapping[str, Any], *, nodes: int, resources: Mapping[str, str | None]
) -> Obj:
    """How many nodes the pool has and their summed capacity (what limits are checked against);
    a resource mapped to None is removed (a merge patch keeps keys it does not mention)."""
    return status.patch_status(kube, NODEPOOL, pool, {"nodes": nodes, "resources": dict(resources)})


def record_nodeclass_generation(kube: Kube, pool: Mapping[str, Any], generation: int) -> Obj:
    """``status.nodeClassObservedGeneration``: the NodeClass generation the pool's
    NodeRegistrationHealthy condition was last reset for."""
    return status.patch_status(kube, NODEPOOL, pool, {"nodeClassObservedGeneration": generation})
