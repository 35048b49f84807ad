"""Get, list, watch, create, patch and delete Karpenter's cluster-scoped custom resources.

Objects travel as plain dicts (the JSON the API serves), which is what the CRDs define;
``models/`` parses them where a typed view is wanted. Every write that depends on what was
read carries that read's ``resourceVersion`` so a concurrent change fails with ``Conflict``
instead of being overwritten.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, cast

from kubernetes import watch
from kubernetes.client.exceptions import ApiException

from activities.kubernetes.client import Kube
from activities.kubernetes.errors import api_errors, translate
from activities.kubernetes.resources import CustomResource

Obj = dict[str, Any]

MERGE_PATCH = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"


@dataclass(frozen=True)
class WatchEvent:
    type: str  # ADDED, MODIFIED, DELETED, BOOKMARK
    object: Obj


def get(kube: Kube, crd: CustomResource, name: str) -> Obj:
    with api_errors():
        return cast(
            Obj, kube.custom.get_cluster_custom_object(crd.group, crd.version, crd.plural, name)
        )


def list_(
    kube: Kube, crd: CustomResource, *, label_selector: str = "", limit: int = 500
) -> tuple[list[Obj], str]:
    """All objects (following ``continue`` pages) and the list's resourceVersion to watch from."""
    items: list[Obj] = []
    token: str | None = None
    resource_version = ""
    while True:
        with api_errors():
            page = cast(
                Obj,
                kube.custom.list_cluster_custom_object(
                    crd.group,
                    crd.version,
                    crd.plural,
                    label_selector=label_selector,
                    limit=limit,
                    _continue=token,
                ),
            )
        items.extend(page.get("items") or [])
        meta = page.get("metadata") or {}
        resource_version = str(meta.get("resourceVersion") or resource_version)
        token = meta.get("continue") or None
        if not token:
            return items, resource_version


def watch_(
    kube: Kube,
    crd: CustomResource,
    *,
    resource_version: str,
    timeout_seconds: int = 300,
    label_selector: str = "",
) -> Iterator[WatchEvent]:
    """Changes after ``resource_version`` until the server ends the watch.

    Raises ``Expired`` when that version has been compacted away: list again and resume.
    """
    stream = watch.Watch().stream(
        kube.custom.list_cluster_custom_object,
        crd.group,
        crd.version,
        crd.plural,
        resource_version=resource_version,
        timeout_seconds=timeout_seconds,
        label_selector=label_selector,
        allow_watch_bookmarks=True,
    )
    try:
        for event in stream:
            if event.get("type") == "ERROR":
                status = cast(Mapping[str, Any], event.get("raw_object") or {})
                raise _watch_error(status)
            yield WatchEvent(str(event["type"]), cast(Obj, event["object"]))
    except Exception as exc:  # the client raises ApiException / urllib3 errors mid-stream
        raise translate(exc) from exc


def _watch_error(status: Mapping[str, Any]) -> Exception:
    """A watch ``ERROR`` event carries a metav1.Status; type it like a failed call."""
    exc = ApiException(status=int(status.get("code") or 500), reason=str(status.get("reason")))
    exc.body = json.dumps(status)
    return translate(exc)


def create(kube: Kube, crd: CustomResource, body: Mapping[str, Any]) -> Obj:
    full = {"apiVersion": crd.api_version, "kind": crd.kind, **body}
    with api_errors():
        return cast(
            Obj, kube.custom.create_cluster_custom_object(crd.group, crd.version, crd.plural, full)
        )


def replace(kube: Kube, crd: CustomResource, body: Mapping[str, Any]) -> Obj:
    """PUT the whole object; its ``metadata.resourceVersion`` is the precondition."""
    name = body["metadata"]["name"]
    with api_errors():
        return cast(
            Obj,
            kube.custom.replace_cluster_custom_object(
                crd.group, crd.version, crd.plural, name, body
            ),
        )


def merge_patch(
    kube: Kube,
    crd: CustomResource,
    name: str,
    patch: Mapping[str, Any],
    *,
    resource_version: str | None = None,
    status: bool = False,
) -> Obj:
    """Apply a JSON merge patch, to the status subresource when ``status``.

    With ``resource_version`` the patch carries it, which makes the API server reject the
    write with 409 (``Conflict``) if the object changed since it was read.
    """
    body: Obj = dict(patch)
    if resource_version is not None:
        body["metadata"] = {**(body.get("metadata") or {}), "resourceVersion": resource_version}
    call = (
        kube.custom.patch_cluster_custom_object_status
        if status
        else kube.custom.patch_cluster_custom_object
    )
    with api_errors():
        return cast(
            Obj,
            call(crd.group, crd.version, crd.plural, name, body, _content_type=MERGE_PATCH),
        )


def json_patch(kube: Kube, crd: CustomResource, name: str, ops: list[Obj]) -> Obj:
    """Apply a JSON patch (RFC 6902): its ``test`` operations make it all-or-nothing, a
    failed test answering ``Invalid``."""
    with api_errors():
        return cast(
            Obj,
            kube.custom.patch_cluster_custom_object(
                crd.group, crd.version, crd.plural, name, ops, _content_type=JSON_PATCH
            ),
        )


def delete(kube: Kube, crd: CustomResource, name: str, *, uid: str | None = None) -> Obj:
    """Ask for deletion (finalizers may hold the object); with ``uid``, only that incarnation."""
    kwargs: dict[str, Any] = {}
    if uid:
        kwargs["body"] = {"preconditions": {"uid": uid}}
    with api_errors():
        return cast(
            Obj,
            kube.custom.delete_cluster_custom_object(
                crd.group, crd.version, crd.plural, name, **kwargs
            ),
        )
