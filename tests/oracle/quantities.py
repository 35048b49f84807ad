"""Kubernetes resource quantities as the kube-scheduler compares them: cpu in millicores,
everything else in whole units, both rounded up (``MilliValue`` / ``Value``)."""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "k": Decimal(1000),
    "M": Decimal(10) ** 6,
    "G": Decimal(10) ** 9,
    "T": Decimal(10) ** 12,
    "P": Decimal(10) ** 15,
    "E": Decimal(10) ** 18,
}


def quantity(raw: Any) -> Decimal:
    """The exact value of a quantity string (or number)."""
    text = str(raw).strip()
    for suffix, factor in _BINARY.items():
        if text.endswith(suffix):
            return Decimal(text[: -len(suffix)]) * factor
    if text and text[-1] in _DECIMAL:
        return Decimal(text[:-1]) * _DECIMAL[text[-1]]
    return Decimal(text)  # plain number, possibly with an exponent (1e3)


def amount(resource: str, raw: Any) -> int:
    """The integer the scheduler compares for ``resource``."""
    value = quantity(raw)
    if resource == "cpu":
        value *= 1000
    return math.ceil(value)


def amounts(raw: Any) -> dict[str, int]:
    """A resource list (``{cpu: 100m, memory: 1Gi}``) as integers."""
    return {str(k): amount(str(k), v) for k, v in (raw or {}).items()}
