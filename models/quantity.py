"""Kubernetes resource quantities, held exactly.

A quantity is stored as an integer count of milli-units (``"100m"`` cpu is 100, ``"1Ki"``
memory is 1_024_000), which is exact for every value Kubernetes itself keeps at milli
precision and lets the solver add and compare with plain integer arithmetic. Values finer
than a milli-unit round up, as Kubernetes does when it reads a request as a milli value.
"""

from __future__ import annotations

import re
from decimal import ROUND_CEILING, Context, Decimal, InvalidOperation

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "": Decimal(1),
    "k": Decimal(10**3),
    "M": Decimal(10**6),
    "G": Decimal(10**9),
    "T": Decimal(10**12),
    "P": Decimal(10**15),
    "E": Decimal(10**18),
}
_PATTERN = re.compile(
    r"^(?P<num>[+-]?(?:\d+\.?\d*|\.\d+))(?:(?P<exp>[eE][+-]?\d+)|(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$"
)


# Kubernetes reads requests as 64-bit milli values; anything larger is refused, not wrapped.
MAX_MILLI = 2**63 - 1
# Room for any exponent that can still land in range, whatever the mantissa's length.
_WIDE = Context(prec=60, Emax=999_999, Emin=-999_999)


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity."""


def _to_milli(number: Decimal, value: object, saturate: bool = False) -> int:
    if not number.is_finite():
        raise QuantityError(f"quantity {value!r} is not a finite number")
    if number < 0:
        raise QuantityError(f"quantity {value!r} must not be negative")
    milli = (number * 1000).to_integral_value(ROUND_CEILING, context=_WIDE)
    if milli > MAX_MILLI:
        if saturate:
            return MAX_MILLI
        raise QuantityError(f"quantity {value!r} is too large")
    return int(milli)


def parse_limit(value: str | int | float) -> int:
    """A ceiling (a NodePool limit) in milli-units. Kubernetes keeps quantities of any size and
    Karpenter compares limits exactly, so a limit beyond 64-bit milli-units is valid; no node
    can reach it, so it is held at the largest value (Karpenter's own benchmark NodePool says
    ``memory: 10000000Gi``, 1.07e19 milli-bytes)."""
    return parse_quantity(value, saturate=True)


def parse_quantity(value: str | int | float, saturate: bool = False) -> int:
    """Return the quantity as an integer number of milli-units; one beyond 64-bit milli-units
    is refused unless ``saturate`` holds it at the largest."""
    if isinstance(value, bool):
        raise QuantityError(f"quantity {value!r} is not a number")
    if isinstance(value, int):
        return _to_milli(Decimal(value), value, saturate)
    if isinstance(value, float):
        return _to_milli(Decimal(repr(value)), value, saturate)
    text = str(value).strip()
    match = _PATTERN.match(text)
    if not match:
        raise QuantityError(f"quantity {value!r} is not a valid Kubernetes quantity")
    try:
        number = Decimal(match.group("num"))
    except InvalidOperation as exc:  # pragma: no cover - the regex already filters
        raise QuantityError(f"quantity {value!r} is not a valid Kubernetes quantity") from exc
    exp = match.group("exp")
    if exp:
        digits = exp[1:].lstrip("+-").lstrip("0")
        if len(digits) > 5:  # |exponent| >= 100000: far outside any quantity
            if number == 0 or exp[1] == "-":
                return _to_milli(Decimal("1e-9").copy_sign(number) if number else number, value)
            if saturate and number > 0:
                return MAX_MILLI
            raise QuantityError(f"quantity {value!r} is too large")
        number = number.scaleb(int(exp[1:]), context=_WIDE)
    else:
        suffix = match.group("suffix") or ""
        number = number * (_BINARY[suffix] if suffix in _BINARY else _DECIMAL[suffix])
    return _to_milli(number, value, saturate)


def format_quantity(milli: int, resource: str = "") -> str:
    """Render milli-units the way people write them: ``1100m``, ``2``, ``1Gi``, ``512Mi``."""
    if milli % 1000:
        return f"{milli}m"
    value = milli // 1000
    if resource == "memory" or resource.startswith("hugepages-") or "storage" in resource:
        if value == 0:
            return "0"
        for suffix in ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki"):
            unit = _BINARY[suffix]
            if value % unit == 0:
                return f"{value // unit}{suffix}"
    return str(value)
