"""Nodes: finding the one an instance registered as, tainting, cordoning, deleting."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from activities.kubernetes import finalizers, raw
from activities.kubernetes.client import Kube
from activities.kubernetes.errors import Conflict, Invalid, NotFound
from activities.kubernetes.raw import Obj
from models import labels as L

PATCH_TYPE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"


def get(kube: Kube, name: str) -> Obj:
    return raw.call(kube.core.read_node, name)


def list_(kube: Kube, *, label_selector: str = "") -> list[Obj]:
    return raw.list_all(kube.core.list_node, label_selector=label_selector)


def by_provider_id(kube: Kube, provider_id: str, *, label_selector: str = "") -> Obj | None:
    """The Node whose ``spec.providerID`` is ``provider_id``, if it has registered.

    Nodes have no field selector on providerID, so this lists (narrowed by
    ``label_selector`` when the caller knows e.g. the NodePool) and filters.
    """
    for node in list_(kube, label_selector=label_selector):
        if (node.get("spec") or {}).get("providerID") == provider_id:
            return node
    return None


def _patch(kube: Kube, name: str, body: Mapping[str, Any]) -> Obj:
    return raw.call(kube.core.patch_node, name, dict(body), _content_type=PATCH_TYPE)


def patch_tested(kube: Kube, name: str, ops: list[dict[str, Any]]) -> Obj:
    """Apply a JSON patch (RFC 6902) whose ``test`` operations guard exactly the fields it
    writes. A failed test is a lost race on those fields and raises ``Conflict`` (re-read,
    retry): the API server answers it with a 422 that names no field, where a refused value
    names its field (then ``Invalid`` stays). Unlike a resourceVersion precondition, a
    change elsewhere on the Node (kwok's status, another controller's annotation) does not
    refuse the write."""
    try:
        return raw.call(kube.core.patch_node, name, ops, _content_type=JSON_PATCH)
    except Invalid as exc:
        if not exc.causes:
            raise Conflict(exc.message, status=exc.status, reason=exc.reason) from exc
        raise


def cordon(kube: Kube, name: str, unschedulable: bool = True) -> Obj:
    return _patch(kube, name, {"spec": {"unschedulable": unschedulable}})


def _taint_key(taint: Mapping[str, Any]) -> tuple[str, str]:
    return str(taint["key"]), str(taint["effect"])


def add_taint(kube: Kube, node: Mapping[str, Any], taint: Mapping[str, Any]) -> Obj:
    """Add ``taint`` (key, effect, optional value) unless one with that key and effect exists.

    The taint list is written whole with the read's resourceVersion, so taints another
    controller added meanwhile are never lost: that write is a ``Conflict`` instead.
    """
    taints = list((node.get("spec") or {}).get("taints") or [])
    if any(_taint_key(t) == _taint_key(taint) for t in taints):
        return dict(node)
    meta = node["metadata"]
    return _patch(
        kube,
        meta["name"],
        {
            "metadata": {"resourceVersion": meta["resourceVersion"]},
            "spec": {"taints": [*taints, dict(taint)]},
        },
    )


def remove_taint(kube: Kube, node: Mapping[str, Any], key: str, effect: str | None = None) -> Obj:
    taints = list((node.get("spec") or {}).get("taints") or [])
    kept = [
        t for t in taints if not (t["key"] == key and (effect is None or t["effect"] == effect))
    ]
    if len(kept) == len(taints):
        return dict(node)
    meta = node["metadata"]
    return _patch(
        kube,
        meta["name"],
        {"metadata": {"resourceVersion": meta["resourceVersion"]}, "spec": {"taints": kept}},
    )


def patch_metadata(
    kube: Kube,
    name: str,
    *,
    labels: Mapping[str, str | None] | None = None,
    annotations: Mapping[str, str | None] | None = None,
) -> Obj:
    return _patch(kube, name, finalizers.metadata_patch(labels, annotations))


def _write_finalizers(kube: Kube) -> finalizers.Write:
    def write(node: Mapping[str, Any], updated: list[str]) -> Obj:
        meta = node["metadata"]
        body = {"metadata": {"finalizers": updated, "resourceVersion": meta["resourceVersion"]}}
        return _patch(kube, meta["name"], body)

    return write


def add_finalizer(
    kube: Kube, node: Mapping[str, Any], finalizer: str = L.TERMINATION_FINALIZER
) -> Obj:
    return finalizers.add(node, finalizer, _write_finalizers(kube))


def remove_finalizer(
    kube: Kube, node: Mapping[str, Any], finalizer: str = L.TERMINATION_FINALIZER
) -> Obj | None:
    """Drop ``finalizer``; None when the node is gone (or went with it)."""
    return finalizers.remove(node, finalizer, _write_finalizers(kube))


def delete(kube: Kube, name: str, *, uid: str | None = None) -> None:
    """Request deletion of the Node; absent already counts as done."""
    body: dict[str, Any] = {"preconditions": {"uid": uid}} if uid else {}
    try:
        raw.call(kube.core.delete_node, name, body=body)
    except NotFound:
        return
