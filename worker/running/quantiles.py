"""A Prometheus summary that exports quantiles, as Karpenter's summaries do.

prometheus_client's ``Summary`` exports only ``_sum`` and ``_count``; Karpenter's dashboards
read ``karpenter_pods_startup_duration_seconds{quantile="0.9"}`` and the node termination
latency the same way. Like Go's client (objectives 0, 0.5, 0.9, 0.99, 1; a ten-minute
window), the quantiles cover the observations of the last ``max_age`` seconds, computed
exactly at scrape time from the kept observations (at most ``keep`` per series).
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence

from prometheus_client import CollectorRegistry
from prometheus_client.core import Metric, SummaryMetricFamily
from prometheus_client.registry import Collector

OBJECTIVES = (0.0, 0.5, 0.9, 0.99, 1.0)


def quantile(sorted_values: Sequence[float], q: float) -> float:
    """The nearest-rank quantile of a sorted, non-empty sequence."""
    if not sorted_values:
        return math.nan
    rank = max(0, math.ceil(q * len(sorted_values)) - 1)
    return sorted_values[min(rank, len(sorted_values) - 1)]


class _Series:
    def __init__(self, owner: QuantileSummary) -> None:
        self._owner = owner
        self.window: deque[tuple[float, float]] = deque(maxlen=owner.keep)
        self.sum = 0.0
        self.count = 0

    def observe(self, value: float) -> None:
        with self._owner.lock:
            self.window.append((self._owner.clock(), value))
            self.sum += value
            self.count += 1


class QuantileSummary(Collector):
    """``labels(...).observe(v)`` and ``remove(...)`` as prometheus_client's metrics."""

    def __init__(
        self,
        name: str,
        documentation: str,
        labelnames: Iterable[str],
        registry: CollectorRegistry | None = None,
        *,
        max_age: float = 600.0,
        keep: int = 5000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self.documentation = documentation
        self.labelnames = tuple(labelnames)
        self.max_age = max_age
        self.keep = keep
        self.clock = clock
        self.lock = threading.Lock()
        self._series: dict[tuple[str, ...], _Series] = {}
        if registry is not None:
            registry.register(self)

    def labels(self, *values: str) -> _Series:
        if len(values) != len(self.labelnames):
            raise ValueError(f"{self.name}: expected labels {self.labelnames}")
        key = tuple(str(v) for v in values)
        with self.lock:
            series = self._series.get(key)
            if series is None:
                series = self._series[key] = _Series(self)
        return series

    def observe(self, value: float) -> None:
        """For a summary without labels."""
        self.labels().observe(value)

    def remove(self, *values: str) -> None:
        with self.lock:
            self._series.pop(tuple(str(v) for v in values), None)

    def describe(self) -> list[Metric]:
        return [SummaryMetricFamily(self.name, self.documentation, labels=self.labelnames)]

    def collect(self) -> Iterator[Metric]:
        family = SummaryMetricFamily(self.name, self.documentation, labels=self.labelnames)
        now = self.clock()
        with self.lock:
            items = [
                (key, [v for t, v in s.window if now - t <= self.max_age], s.sum, s.count)
                for key, s in self._series.items()
            ]
        if not items and not self.labelnames:
            items = [((), [], 0.0, 0)]  # an unlabeled summary exists from the start
        for key, values, total, count in items:
            family.add_metric(list(key), count_value=count, sum_value=total)
            ordered = sorted(values)
            for q in OBJECTIVES:
                family.add_sample(
                    self.name,
                    {**dict(zip(self.labelnames, key, strict=True)), "quantile": _fmt(q)},
                    quantile(ordered, q),
                )
        yield family


def _fmt(q: float) -> str:
    """As Go formats objectives: ``0``, ``0.5``, ``1``."""
    return f"{q:g}"
