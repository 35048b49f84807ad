"""What the status reports share: deciding whether conditions need a write, which of them
newly turned False, telling users about those with a Warning event, and refusing fields
Joinery does not implement."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from activities.kubernetes import conditions as cond
from activities.kubernetes import events
from activities.kubernetes.client import Kube
from activities.kubernetes.errors import NotFound
from models import conditions, unimplemented

Obj = dict[str, Any]


def live(read: Callable[[], Obj]) -> Obj | None:
    """The object ``read`` returns, or None when it is gone or going (nothing to report)."""
    try:
        obj = read()
    except NotFound:
        return None
    return None if (obj.get("metadata") or {}).get("deletionTimestamp") else obj


def needs_write(existing: Sequence[Mapping[str, Any]], wanted: Sequence[cond.Condition]) -> bool:
    """A write only when something a user sees changes (status writes wake every watcher)."""
    if cond.find(existing, conditions.READY) is None:
        return True
    return any(
        (found := cond.find(existing, c.type)) is None
        or (found.get("status"), found.get("reason"), found.get("message"))
        != (c.status, c.reason, c.message)
        for c in wanted
    )


def newly_false(
    existing: Sequence[Mapping[str, Any]], wanted: Sequence[cond.Condition]
) -> list[cond.Condition]:
    return [
        c
        for c in wanted
        if c.status == "False" and (cond.find(existing, c.type) or {}).get("status") != "False"
    ]


def warn(
    kube: Kube, kind: str, name: str, failed: Sequence[cond.Condition], api_version: str
) -> None:
    for c in failed:
        events.record(
            kube,
            kind=kind,
            name=name,
            reason=c.reason,
            message=f"{c.type}=False: {c.message}",
            warning=True,
            api_version=api_version,
        )


def refusal(found: Sequence[unimplemented.Unimplemented]) -> cond.Condition:
    """``ValidationSucceeded`` for a spec that parses: False naming each field Joinery does
    not implement (``models.unimplemented``), so the object is not Ready and never half-used."""
    if found:
        return cond.Condition(
            conditions.VALIDATION_SUCCEEDED,
            "False",
            unimplemented.REASON,
            unimplemented.message(found),
        )
    return cond.Condition(conditions.VALIDATION_SUCCEEDED, "True", conditions.VALIDATION_SUCCEEDED)
