"""Finalizer lists, computed from the object as read.

The adapter writes the whole list back with the read's resourceVersion as precondition
(a JSON merge patch), so adding or removing one finalizer never drops another controller's
finalizer that was added in between: that write fails with ``Conflict`` instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


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
