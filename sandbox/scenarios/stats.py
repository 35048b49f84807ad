"""The two summaries the scenarios' reports share: a percentile and the length of a union.

Percentiles are nearest-rank (the value at rank ceil-ish ``q * n``, never interpolated), so a
reported p99 is a time some pod or call really took.
"""

from __future__ import annotations

from collections.abc import Iterable


def percentile(values: Iterable[float], q: float) -> float:
    """The nearest-rank ``q`` quantile of ``values`` (not empty)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


def union_length(spans: Iterable[tuple[float, float]]) -> float:
    """Seconds covered by at least one ``(start, end)`` span."""
    total, end = 0.0, float("-inf")
    for a, b in sorted(spans):
        if b <= end:
            continue
        total += b - max(a, end)
        end = b
    return total
