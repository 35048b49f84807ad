"""Status conditions in the shape Karpenter (and ``metav1.Condition``) uses.

A condition is ``{type, status, reason, message, lastTransitionTime, observedGeneration}``.
``lastTransitionTime`` moves only when ``status`` changes, so it tells how long a NodeClaim
has been, say, not Registered; ``Ready`` summarises the lifecycle conditions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from models.conditions import READY

Status = Literal["True", "False", "Unknown"]


def now() -> str:
    """The current time as the API writes it (RFC 3339, seconds, UTC)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class Condition:
    type: str
    status: Status
    reason: str
    message: str = ""

    def to_dict(self, *, transition_time: str, observed_generation: int | None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": self.type,
            "status": self.status,
            "reason": self.reason,
            "message": self.message,
            "lastTransitionTime": transition_time,
        }
        if observed_generation is not None:
            out["observedGeneration"] = observed_generation
        return out


def find(conditions: Iterable[Mapping[str, Any]], type_: str) -> Mapping[str, Any] | None:
    return next((c for c in conditions if c.get("type") == type_), None)


def is_true(obj: Mapping[str, Any], type_: str) -> bool:
    found = find((obj.get("status") or {}).get("conditions") or [], type_)
    return found is not None and found.get("status") == "True"


def merge(
    existing: Sequence[Mapping[str, Any]],
    updates: Iterable[Condition],
    *,
    observed_generation: int | None = None,
    at: str | None = None,
) -> list[dict[str, Any]]:
    """``existing`` with ``updates`` applied; untouched conditions keep their order and times."""
    stamp = at or now()
    merged = [dict(c) for c in existing]
    for update in updates:
        index = next((i for i, c in enumerate(merged) if c.get("type") == update.type), None)
        if index is None:
            merged.append(
                update.to_dict(transition_time=stamp, observed_generation=observed_generation)
            )
            continue
        old = merged[index]
        changed = old.get("status") != update.status
        merged[index] = update.to_dict(
            transition_time=stamp if changed else str(old.get("lastTransitionTime") or stamp),
            observed_generation=observed_generation,
        )
    return merged


def ready_from(conditions: Sequence[Mapping[str, Any]], dependents: Sequence[str]) -> Condition:
    """The ``Ready`` condition implied by ``dependents``: True only when all of them are.

    Like Karpenter, the first dependent that is not True gives Ready its reason, so
    ``kubectl get nodeclaims`` shows why a claim is stuck.
    """
    for type_ in dependents:
        found = find(conditions, type_)
        if found is None or found.get("status") != "True":
            if found is None:
                return Condition(READY, "Unknown", f"{type_}NotSet", f"{type_} is not set")
            status: Status = "False" if found.get("status") == "False" else "Unknown"
            reason = str(found.get("reason") or f"Not{type_}")
            message = str(found.get("message") or f"{type_}={found.get('status')}")
            return Condition(READY, status, reason, message)
    return Condition(READY, "True", READY)
