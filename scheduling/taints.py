"""Taints and tolerations, with the rules the kube-scheduler applies."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

PREFER_NO_SCHEDULE = "PreferNoSchedule"


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str
    effect: str

    @staticmethod
    def from_dict(raw: Mapping[str, object]) -> Taint:
        return Taint(
            str(raw.get("key", "")), str(raw.get("value") or ""), str(raw.get("effect", ""))
        )

    def describe(self) -> str:
        return (
            f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"
        )

    def to_dict(self) -> dict[str, str]:
        out = {"key": self.key, "effect": self.effect}
        if self.value:
            out["value"] = self.value
        return out


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str
    operator: str
    value: str
    effect: str

    @staticmethod
    def from_dict(raw: Mapping[str, object]) -> Toleration:
        op = str(raw.get("operator") or "Equal")
        if op not in ("Equal", "Exists"):
            raise ValueError(f"toleration operator {op!r} must be Equal or Exists")
        return Toleration(
            str(raw.get("key") or ""), op, str(raw.get("value") or ""), str(raw.get("effect") or "")
        )

    def tolerates(self, taint: Taint) -> bool:
        if self.effect and self.effect != taint.effect:
            return False
        if not self.key:
            return self.operator == "Exists"
        if self.key != taint.key:
            return False
        return self.operator == "Exists" or self.value == taint.value


TOLERATE_ALL_PREFER_NO_SCHEDULE = Toleration("", "Exists", "", PREFER_NO_SCHEDULE)


def untolerated(taints: Iterable[Taint], tolerations: Iterable[Toleration]) -> Taint | None:
    """The first NoSchedule/NoExecute/PreferNoSchedule taint no toleration covers, else None.

    PreferNoSchedule taints count: Karpenter treats them as hard until it relaxes the pod.
    """
    tols = tuple(tolerations)
    for t in taints:
        if not any(tol.tolerates(t) for tol in tols):
            return t
    return None
