"""The label-selector algebra: one Requirement per key, Requirements per node or pod.

A Requirement is a set of allowed values, written either directly (``In``) or as a complement
(``NotIn``/``Exists``), optionally bounded for integer labels (``Gt``/``Lt``). Intersection is
closed over this shape, so narrowing a NodeClaim as pods join it stays cheap and exact.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from models.labels import WELL_KNOWN_LABELS, normalize

IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT, GTE, LTE = (
    "In",
    "NotIn",
    "Exists",
    "DoesNotExist",
    "Gt",
    "Lt",
    "Gte",
    "Lte",
)
OPERATORS = (IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT, GTE, LTE)
_INFINITE = 1 << 62


def _as_int(value: str) -> int | None:
    try:
        return int(value)
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class Requirement:
    """Allowed values for one label key."""

    key: str
    complement: bool
    values: frozenset[str]
    gt: int | None = None
    lt: int | None = None
    min_values: int | None = None

    @staticmethod
    def create(
        key: str, operator: str, values: Iterable[str] = (), min_values: int | None = None
    ) -> Requirement:
        """Build from a NodeSelectorRequirement; raises ValueError for an unusable one."""
        key = normalize(key)
        vals = frozenset(str(v) for v in values)
        if operator == IN:
            return Requirement(key, False, vals, min_values=min_values)
        if operator == NOT_IN:
            return Requirement(key, True, vals, min_values=min_values)
        if operator == EXISTS:
            return Requirement(key, True, frozenset(), min_values=min_values)
        if operator == DOES_NOT_EXIST:
            return Requirement(key, False, frozenset(), min_values=min_values)
        if operator in (GT, LT, GTE, LTE):
            if len(vals) != 1 or _as_int(next(iter(vals))) is None:
                raise ValueError(f"operator {operator} takes exactly one integer value")
            n = int(next(iter(vals)))
            if operator == GT:
                return Requirement(key, True, frozenset(), gt=n, min_values=min_values)
            if operator == GTE:
                return Requirement(key, True, frozenset(), gt=n - 1, min_values=min_values)
            if operator == LT:
                return Requirement(key, True, frozenset(), lt=n, min_values=min_values)
            return Requirement(key, True, frozenset(), lt=n + 1, min_values=min_values)
        raise ValueError(f"unsupported operator {operator!r}")

    @property
    def operator(self) -> str:
        if self.complement:
            if self.gt is not None:
                return GT
            if self.lt is not None:
                return LT
            return NOT_IN if self.values else EXISTS
        return IN if self.values else DOES_NOT_EXIST

    def __len__(self) -> int:
        if self.complement:
            if self.gt is not None and self.lt is not None:
                excluded = sum(1 for v in self.values if self._within(v))
                return max(0, self.lt - self.gt - 1 - excluded)
            return _INFINITE
        return len(self.values)

    def _within(self, value: str) -> bool:
        if self.gt is None and self.lt is None:
            return True
        n = _as_int(value)
        if n is None:
            return False
        return (self.gt is None or n > self.gt) and (self.lt is None or n < self.lt)

    def has(self, value: str) -> bool:
        if self.complement:
            return value not in self.values and self._within(value)
        return value in self.values and self._within(value)

    def intersection(self, other: Requirement) -> Requirement:
        if self is other:
            return self
        gt = _max_opt(self.gt, other.gt)
        lt = _min_opt(self.lt, other.lt)
        mv = _max_opt(self.min_values, other.min_values)
        if self.complement and other.complement:
            values = self.values | other.values
            complement = True
        elif self.complement:
            values = other.values - self.values
            complement = False
        elif other.complement:
            values = self.values - other.values
            complement = False
        else:
            values = self.values & other.values
            complement = False
        if not complement and (gt is not None or lt is not None):
            values = frozenset(
                v
                for v in values
                if (n := _as_int(v)) is not None
                and (gt is None or n > gt)
                and (lt is None or n < lt)
            )
            gt = lt = None
        if complement and gt is not None and lt is not None and gt + 1 >= lt:
            return Requirement(self.key, False, frozenset(), min_values=mv)
        return Requirement(self.key, complement, values, gt, lt, mv)

    def any_value(self) -> str | None:
        if not self.complement:
            return min(self.values) if self.values else None
        return None

    def to_dicts(self) -> list[dict[str, object]]:
        """NodeSelectorRequirements (ANDed) that allow exactly what this requirement allows.

        One entry says it all except for integer bounds: a small bounded range becomes an
        ``In`` list, otherwise each bound and the excluded values get an entry of their own.
        """
        out: list[dict[str, object]] = []
        if self.complement and (self.gt is not None or self.lt is not None):
            if self.gt is not None and self.lt is not None and self.lt - self.gt - 1 <= 256:
                vals = [str(n) for n in range(self.gt + 1, self.lt) if str(n) not in self.values]
                out.append(
                    {"key": self.key, "operator": IN, "values": vals}
                    if vals
                    else {"key": self.key, "operator": DOES_NOT_EXIST}
                )
            else:
                if self.gt is not None:
                    out.append({"key": self.key, "operator": GT, "values": [str(self.gt)]})
                if self.lt is not None:
                    out.append({"key": self.key, "operator": LT, "values": [str(self.lt)]})
                if self.values:
                    out.append({"key": self.key, "operator": NOT_IN, "values": sorted(self.values)})
        else:
            entry: dict[str, object] = {"key": self.key, "operator": self.operator}
            if self.values:
                entry["values"] = sorted(self.values)
            out.append(entry)
        if self.min_values is not None:
            out[0]["minValues"] = self.min_values
        return out

    def to_dict(self) -> dict[str, object]:
        """The single most telling entry (see ``to_dicts`` for the exact set)."""
        return self.to_dicts()[0]

    def describe(self) -> str:
        parts = []
        for d in self.to_dicts():
            vals = d.get("values")
            shown = f" [{', '.join(str(v) for v in vals)}]" if isinstance(vals, list) else ""
            parts.append(f"{d['operator']}{shown}")
        return f"{self.key} {' and '.join(parts)}"


def _max_opt(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b)


def _min_opt(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)


class Requirements(Mapping[str, Requirement]):
    """Requirements keyed by label; adding a requirement for a present key intersects."""

    __slots__ = ("_items",)

    def __init__(self, items: Iterable[Requirement] = ()) -> None:
        self._items: dict[str, Requirement] = {}
        for r in items:
            self._add(r)

    def _add(self, req: Requirement) -> None:
        cur = self._items.get(req.key)
        self._items[req.key] = req if cur is None else cur.intersection(req)

    @staticmethod
    def from_labels(labels: Mapping[str, str]) -> Requirements:
        return Requirements(
            Requirement(normalize(k), False, frozenset((v,))) for k, v in labels.items()
        )

    @staticmethod
    def from_selector_terms(terms: Iterable[Mapping[str, object]]) -> Requirements:
        out = []
        for t in terms:
            raw_values = t.get("values") or []
            mv = t.get("minValues")
            out.append(
                Requirement.create(
                    str(t["key"]),
                    str(t["operator"]),
                    [str(v) for v in raw_values],  # type: ignore[attr-defined]
                    int(mv) if mv is not None else None,  # type: ignore[call-overload]
                )
            )
        return Requirements(out)

    def __getitem__(self, key: str) -> Requirement:
        return self._items[key]

    # Mapping's own get and ``in`` go through __getitem__ and a caught KeyError: several
    # times slower, and the solver asks them for every pod on every target it tries.
    def get(self, key: str, default: Any = None) -> Any:
        return self._items.get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"Requirements({', '.join(r.describe() for r in self._items.values())})"

    def get_or_exists(self, key: str) -> Requirement:
        """The requirement for a key; an undefined key allows anything."""
        r = self._items.get(key)
        return r if r is not None else Requirement(key, True, frozenset())

    def with_requirements(self, *others: Iterable[Requirement] | Requirements) -> Requirements:
        """A new Requirements narrowed by the others (self is not changed)."""
        out = Requirements()
        out._items = dict(self._items)
        for other in others:
            items: Iterable[Requirement] = (
                other.values() if isinstance(other, Requirements) else other
            )
            for r in items:
                out._add(r)
        return out

    def intersects(self, other: Requirements) -> str | None:
        """None when every shared key has a common value, else a reason naming the key."""
        small, large = (self, other) if len(self) <= len(other) else (other, self)
        for key in small._items:
            if key not in large._items:
                continue
            existing = self._items[key]
            incoming = other._items[key]
            if len(existing.intersection(incoming)) == 0:
                if incoming.operator in (NOT_IN, DOES_NOT_EXIST) and existing.operator in (
                    NOT_IN,
                    DOES_NOT_EXIST,
                ):
                    continue
                return f"{incoming.describe()} conflicts with {existing.describe()}"
        return None

    def compatible(
        self, other: Requirements, allow_undefined: frozenset[str] = WELL_KNOWN_LABELS
    ) -> str | None:
        """Karpenter's Compatible: custom keys the other requires must be defined here."""
        for key, req in other._items.items():
            if key in allow_undefined or key in self._items:
                continue
            if req.operator in (NOT_IN, DOES_NOT_EXIST):
                continue
            return f"label {key!r} is not offered (required: {req.describe()})"
        return self.intersects(other)

    def labels(self) -> dict[str, str]:
        """Labels a node with these requirements will certainly carry (single-valued In keys)."""
        return {
            k: next(iter(r.values))
            for k, r in self._items.items()
            if not r.complement and len(r.values) == 1
        }

    def to_list(self) -> list[dict[str, object]]:
        return [d for k in sorted(self._items) for d in self._items[k].to_dicts()]
