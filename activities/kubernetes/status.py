"""Writing the status subresource of Karpenter's custom resources.

Each write starts from the object the caller read and carries its resourceVersion, so two
writers never silently undo each other: the loser gets ``Conflict``, re-reads and retries.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from activities.kubernetes import conditions as cond
from activities.kubernetes import custom_objects
from activities.kubernetes.client import Kube
from activities.kubernetes.custom_objects import Obj
from activities.kubernetes.resources import CustomResource


def set_conditions(
    kube: Kube,
    crd: CustomResource,
    obj: Mapping[str, Any],
    updates: Iterable[cond.Condition],
    *,
    ready_dependents: Sequence[str] = (),
    at: str | None = None,
) -> Obj:
    """Apply ``updates`` to ``obj``'s conditions; recompute ``Ready`` from ``ready_dependents``.

    Conditions are stamped with the object's ``metadata.generation`` as observedGeneration.
    """
    meta = obj["metadata"]
    generation = meta.get("generation")
    existing = (obj.get("status") or {}).get("conditions") or []
    merged = cond.merge(existing, updates, observed_generation=generation, at=at)
    if ready_dependents:
        merged = cond.merge(
            merged,
            [cond.ready_from(merged, ready_dependents)],
            observed_generation=generation,
            at=at,
        )
    return custom_objects.merge_patch(
        kube,
        crd,
        meta["name"],
        {"status": {"conditions": merged}},
        resource_version=meta["resourceVersion"],
        status=True,
    )


def patch_status(
    kube: Kube,
    crd: CustomResource,
    obj: Mapping[str, Any],
    fields: Mapping[str, Any],
    *,
    conditions: Iterable[cond.Condition] = (),
    ready_dependents: Sequence[str] = (),
) -> Obj:
    """Set top-level status fields (e.g. providerID, nodeName, capacity) on ``obj``, and
    with ``conditions`` apply those as ``set_conditions`` does, in the same write."""
    meta = obj["metadata"]
    body = dict(fields)
    updates = list(conditions)
    if updates:
        generation = meta.get("generation")
        existing = (obj.get("status") or {}).get("conditions") or []
        merged = cond.merge(existing, updates, observed_generation=generation)
        if ready_dependents:
            merged = cond.merge(
                merged, [cond.ready_from(merged, ready_dependents)], observed_generation=generation
            )
        body["conditions"] = merged
    return custom_objects.merge_patch(
        kube,
        crd,
        meta["name"],
        {"status": body},
        resource_version=meta["resourceVersion"],
        status=True,
    )
