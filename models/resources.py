"""Resource lists (name → milli-units) and the arithmetic the solver needs on them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from models.quantity import format_quantity, parse_quantity

CPU = "cpu"
MEMORY = "memory"
PODS = "pods"
EPHEMERAL_STORAGE = "ephemeral-storage"

Resources = dict[str, int]


def parse_resources(raw: Mapping[str, object] | None) -> Resources:
    """Parse a Kubernetes ResourceList; raises QuantityError naming the resource."""
    out: Resources = {}
    for name, value in (raw or {}).items():
        try:
            out[str(name)] = parse_quantity(value)  # type: ignore[arg-type]
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from exc
    return out


def add(*lists: Mapping[str, int]) -> Resources:
    out: Resources = {}
    for lst in lists:
        for k, v in lst.items():
            out[k] = out.get(k, 0) + v
    return out


def subtract(a: Mapping[str, int], b: Mapping[str, int]) -> Resources:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) - v
    return out


def maximum(*lists: Mapping[str, int]) -> Resources:
    out: Resources = {}
    for lst in lists:
        for k, v in lst.items():
            if v > out.get(k, 0) or k not in out:
                out[k] = max(v, out.get(k, v))
    return out


def fits(requests: Mapping[str, int], available: Mapping[str, int]) -> bool:
    """True when every requested amount is available (a missing resource counts as zero)."""
    return all(v <= available.get(k, 0) for k, v in requests.items() if v > 0)


def exceeded(requests: Mapping[str, int], available: Mapping[str, int]) -> list[str]:
    return sorted(k for k, v in requests.items() if v > 0 and v > available.get(k, 0))


def render(resources: Mapping[str, int], keys: Iterable[str] | None = None) -> dict[str, str]:
    """Quantity strings for output, cpu/memory/pods first, then the rest by name."""
    order = [CPU, MEMORY, PODS]
    names = list(keys) if keys is not None else list(resources)
    ordered = [k for k in order if k in names] + sorted(k for k in names if k not in order)
    return {k: format_quantity(resources.get(k, 0), k) for k in ordered}
