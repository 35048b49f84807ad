"""Metadata writes Nodes and NodeClaims share: finalizer lists, computed from the object as
read, and label/annotation patches.

The adapter writes the whole list back with the read's resourceVersion as precondition
(a JSON merge patch), so adding or removing one finalizer never drops another controller's
finalizer that was added in between: that write fails with ``Conflict`` instead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from activities.kubernetes.errors import NotFound

Obj = dict[str, Any]
# Writes ``finalizers`` onto the object, preconditioned on the resourceVersion it was read at.
Write = Callable[[Mapping[str, Any], list[str]], Obj]


def current(obj: Mapping[str, Any]) -> list[str]:
    return list((obj.get("metadata") or {}).get("finalizers") or [])


def has(obj: Mapping[str, Any], finalizer: str) -> bool:
    return finalizer in current(obj)


def with_added(obj: Mapping[str, Any], finalizer: str) -> list[str] | None:
    """The list with ``finalizer`` appended, or None when it is already there."""
    existing = current(obj)
    return None if finalizer in existing else [*existing, finalizer]


def with_removed(obj: Mapping[str, Any], finalizer: str) -> list[str] | None:
    """The list without ``finalizer``, or None when it is not there."""
    existing = current(obj)
    return [f for f in existing if f != finalizer] if finalizer in existing else None


def add(obj: Mapping[str, Any], finalizer: str, write: Write) -> Obj:
    """``obj`` with ``finalizer`` (written only when it was missing)."""
    updated = with_added(obj, finalizer)
    return dict(obj) if updated is None else write(obj, updated)


def remove(obj: Mapping[str, Any], finalizer: str, write: Write) -> Obj | None:
    """``obj`` without ``finalizer``; None when the object is gone (or went with it)."""
    updated = with_removed(obj, finalizer)
    if updated is None:
        return dict(obj)
    try:
        result = write(obj, updated)
    except NotFound:
        return None
    if (obj.get("metadata") or {}).get("deletionTimestamp") and not updated:
        return None
    return result


def metadata_patch(
    labels: Mapping[str, str | None] | None, annotations: Mapping[str, str | None] | None
) -> dict[str, Any]:
    """A merge patch for labels/annotations (a None value removes the key)."""
    meta: dict[str, Any] = {}
    if labels:
        meta["labels"] = dict(labels)
    if annotations:
        meta["annotations"] = dict(annotations)
    return {"metadata": meta}
