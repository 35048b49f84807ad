"""NodeClaims: the API side of one node's life (the workflow holds the rest)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from activities.kubernetes import conditions as cond
from activities.kubernetes import custom_objects, finalizers, status
from activities.kubernetes.client import Kube
from activities.kubernetes.custom_objects import Obj, WatchEvent
from activities.kubernetes.resources import NODECLAIM
from models import conditions
from models import labels as L


def get(kube: Kube, name: str) -> Obj:
    return custom_objects.get(kube, NODECLAIM, name)


def list_(kube: Kube, *, nodepool: str | None = None) -> tuple[list[Obj], str]:
    """NodeClaims (of one NodePool when given) and the resourceVersion to watch from."""
    selector = f"{L.NODEPOOL}={nodepool}" if nodepool else ""
    return custom_objects.list_(kube, NODECLAIM, label_selector=selector)


def watch(kube: Kube, *, resource_version: str, timeout_seconds: int = 300) -> Iterator[WatchEvent]:
    return custom_objects.watch_(
        kube, NODECLAIM, resource_version=resource_version, timeout_seconds=timeout_seconds
    )


def create(kube: Kube, body: Mapping[str, Any]) -> Obj:
    """Create a NodeClaim; ``AlreadyExists`` tells a retried create that the first one won."""
    return custom_objects.create(kube, NODECLAIM, body)


def delete(kube: Kube, name: str, *, uid: str | None = None) -> None:
    """Request deletion; the termination finalizer keeps the claim until the instance is gone."""
    custom_objects.delete(kube, NODECLAIM, name, uid=uid)


def _write_finalizers(kube: Kube) -> finalizers.Write:
    def write(claim: Mapping[str, Any], updated: list[str]) -> Obj:
        meta = claim["metadata"]
        return custom_objects.merge_patch(
            kube,
            NODECLAIM,
            meta["name"],
            {"metadata": {"finalizers": updated}},
            resource_version=meta["resourceVersion"],
        )

    return write


def add_finalizer(
    kube: Kube, claim: Mapping[str, Any], finalizer: str = L.TERMINATION_FINALIZER
) -> Obj:
    return finalizers.add(claim, finalizer, _write_finalizers(kube))


def add_first_finalizer(kube: Kube, name: str, finalizer: str = L.TERMINATION_FINALIZER) -> Obj:
    """Give a claim that holds no finalizer yet ``finalizer``, in one call that answers with
    the claim. Raises ``Invalid`` when the claim holds any finalizer already (the patch tests
    for their absence, so another controller's is never overwritten): then read and
    ``add_finalizer``."""
    return custom_objects.json_patch(
        kube,
        NODECLAIM,
        name,
        [
            {"op": "test", "path": "/metadata/finalizers", "value": None},
            {"op": "add", "path": "/metadata/finalizers", "value": [finalizer]},
        ],
    )


def remove_finalizer(
    kube: Kube, claim: Mapping[str, Any], finalizer: str = L.TERMINATION_FINALIZER
) -> Obj | None:
    """Drop ``finalizer``; returns None when that let the API server delete the claim."""
    return finalizers.remove(claim, finalizer, _write_finalizers(kube))


def set_conditions(
    kube: Kube,
    claim: Mapping[str, Any],
    updates: Iterable[cond.Condition],
    *,
    at: str | None = None,
) -> Obj:
    """Record lifecycle conditions; ``Ready`` follows Launched, Registered and Initialized."""
    return status.set_conditions(
        kube, NODECLAIM, claim, updates, ready_dependents=conditions.NODECLAIM_READINESS, at=at
    )


def record_launch(
    kube: Kube,
    claim: Mapping[str, Any],
    *,
    provider_id: str,
    image_id: str,
    capacity: Mapping[str, str],
    allocatable: Mapping[str, str],
    launched: cond.Condition | None = None,
) -> Obj:
    """Status after a successful launch: which instance, which image, what it offers; with
    ``launched``, that condition too (and ``Ready`` recomputed), in the same write."""
    return status.patch_status(
        kube,
        NODECLAIM,
        claim,
        {
            "providerID": provider_id,
            "imageID": image_id,
            "capacity": dict(capacity),
            "allocatable": dict(allocatable),
        },
        conditions=[launched] if launched is not None else [],
        ready_dependents=conditions.NODECLAIM_READINESS,
    )


def record_node(
    kube: Kube,
    claim: Mapping[str, Any],
    node_name: str,
    conditions_: Iterable[cond.Condition] = (),
) -> Obj:
    """Status once the instance's Node has registered; with ``conditions_`` (Registered, and
    Initialized when the Node is ready at once), those too and ``Ready`` recomputed, in the
    same write."""
    return status.patch_status(
        kube,
        NODECLAIM,
        claim,
        {"nodeName": node_name},
        conditions=conditions_,
        ready_dependents=conditions.NODECLAIM_READINESS,
    )


def patch_metadata(
    kube: Kube,
    name: str,
    *,
    labels: Mapping[str, str | None] | None = None,
    annotations: Mapping[str, str | None] | None = None,
) -> Obj:
    """Merge labels/annotations (a None value removes the key); no precondition needed."""
    body = finalizers.metadata_patch(labels, annotations)
    return custom_objects.merge_patch(kube, NODECLAIM, name, body)
