"""PodDisruptionBudgets: which evictions the API would allow now, counted across a round.

``disruptionsAllowed`` is computed as the disruption controller does: the pods a PDB selects
in its namespace are the expected count; ``minAvailable`` (a count, or a percentage of the
expected count rounded up) or ``maxUnavailable`` (likewise) gives the healthy pods required;
what is healthy beyond that may be evicted. A healthy pod is bound to a node, not deleting,
and not reported otherwise by its status (phase other than Running, or Ready False). The
expected count is taken from the pods themselves because the inputs carry no controller
scale: for a Deployment at its desired size the two agree.

A pod selected by more than one PDB cannot be evicted at all (the eviction API refuses it),
as Karpenter treats it. Within one round the ledger adds up every command's evictions per
PDB, so the round as a whole never takes a budget below its minimum.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from scheduling.pods import LabelSelector, Pod, PodError


class PdbError(ValueError):
    """An invalid PodDisruptionBudget, naming the field."""


@dataclass(frozen=True)
class Pdb:
    namespace: str
    name: str
    selector: LabelSelector
    min_available: int | str | None
    max_unavailable: int | str | None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def selects(self, pod: Pod) -> bool:
        return pod.namespace == self.namespace and self.selector.matches(pod.labels)


def _int_or_percent(value: Any, field: str) -> int | str:
    if isinstance(value, bool):
        raise PdbError(f'{field}: must be an integer or a percentage like "50%"')
    if isinstance(value, int):
        if value < 0:
            raise PdbError(f"{field}: must not be negative")
        return value
    if isinstance(value, str):
        text = value.strip()
        if text.endswith("%") and text[:-1].isdigit():
            return text
        if text.isdigit():
            return int(text)
    raise PdbError(f'{field}: must be an integer or a percentage like "50%", not {value!r}')


def parse_pdb(body: Mapping[str, Any]) -> Pdb:
    """A ``policy/v1`` PodDisruptionBudget; raises PdbError naming the field."""
    meta = body.get("metadata") or {}
    spec = body.get("spec") or {}
    if not isinstance(meta, Mapping) or not meta.get("name"):
        raise PdbError("metadata.name is required")
    if not isinstance(spec, Mapping):
        raise PdbError("spec: must be a mapping")
    has_min = spec.get("minAvailable") is not None
    has_max = spec.get("maxUnavailable") is not None
    if has_min and has_max:
        raise PdbError("spec: minAvailable and maxUnavailable are mutually exclusive")
    raw_selector = spec.get("selector")
    if raw_selector is not None and not isinstance(raw_selector, Mapping):
        raise PdbError("spec.selector: must be a label selector")
    try:
        # policy/v1: an empty selector selects every pod in the namespace; none selects none.
        selector = LabelSelector.parse(raw_selector)
    except PodError as exc:
        raise PdbError(f"spec.selector: {exc}") from None
    return Pdb(
        namespace=str(meta.get("namespace") or "default"),
        name=str(meta["name"]),
        selector=selector,
        min_available=_int_or_percent(spec["minAvailable"], "spec.minAvailable")
        if has_min
        else None,
        max_unavailable=_int_or_percent(spec["maxUnavailable"], "spec.maxUnavailable")
        if has_max
        else None,
    )


def _scaled(value: int | str, expected: int) -> int:
    if isinstance(value, int):
        return value
    return math.ceil(expected * int(value[:-1]) / 100)


def disruptions_allowed(pdb: Pdb, selected: int, healthy: int) -> int:
    """How many of ``pdb``'s pods may be evicted now."""
    if pdb.max_unavailable is not None:
        desired = selected - _scaled(pdb.max_unavailable, selected)
    elif pdb.min_available is not None:
        desired = _scaled(pdb.min_available, selected)
    else:  # neither set: the API defaults minAvailable to 1
        desired = 1
    return max(0, healthy - desired)


class PdbLedger:
    """Evictions each PDB allows now, and those this round has already spent."""

    def __init__(self, pdbs: Iterable[Pdb], pods: Iterable[Pod], healthy: set[str]) -> None:
        self.pdbs = sorted(pdbs, key=lambda p: p.key)
        self.allowed: dict[str, int] = {}
        self.describe: dict[str, str] = {}
        self.taken: dict[str, int] = {}
        self._of: dict[str, list[Pdb]] = {}
        all_pods = list(pods)
        for pdb in self.pdbs:
            mine = [p for p in all_pods if pdb.selects(p)]
            ok = sum(1 for p in mine if p.key in healthy)
            self.allowed[pdb.key] = disruptions_allowed(pdb, len(mine), ok)
            self.taken[pdb.key] = 0
            rule = (
                f"maxUnavailable {pdb.max_unavailable}"
                if pdb.max_unavailable is not None
                else f"minAvailable {pdb.min_available if pdb.min_available is not None else 1}"
            )
            self.describe[pdb.key] = f"{rule}, {ok} of {len(mine)} pod(s) healthy"
            for p in mine:
                self._of.setdefault(p.key, []).append(pdb)

    def of(self, pod: Pod) -> list[Pdb]:
        return self._of.get(pod.key, [])

    def blocking(self, pod: Pod) -> str | None:
        """Why the eviction API would refuse to evict ``pod`` now, or None."""
        pdbs = self.of(pod)
        if len(pdbs) > 1:
            names = ", ".join(p.key for p in pdbs)
            return (
                f"pod {pod.key} is selected by more than one PodDisruptionBudget ({names}), "
                "which the eviction API refuses"
            )
        for pdb in pdbs:
            if self.allowed[pdb.key] - self.taken[pdb.key] <= 0:
                return (
                    f"PodDisruptionBudget {pdb.key} allows no eviction of pod {pod.key} now "
                    f"({self.describe[pdb.key]})"
                )
        return None

    def can_evict(self, pods: Iterable[Pod]) -> bool:
        """Whether evicting all of ``pods``, after this round's evictions so far, keeps every
        PDB at or above its minimum."""
        need: dict[str, int] = {}
        for pod in pods:
            pdbs = self.of(pod)
            if len(pdbs) > 1:
                return False
            for pdb in pdbs:
                need[pdb.key] = need.get(pdb.key, 0) + 1
        return all(self.taken[k] + n <= self.allowed[k] for k, n in need.items())

    def take(self, pods: Iterable[Pod]) -> None:
        batch = list(pods)
        if not self.can_evict(batch):
            raise ValueError("a PodDisruptionBudget would be violated")
        for pod in batch:
            for pdb in self.of(pod):
                self.taken[pdb.key] += 1
