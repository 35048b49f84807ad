"""Fixtures every tier shares."""

from __future__ import annotations

import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
from prometheus_client.parser import text_string_to_metric_families


@dataclass
class Scraped:
    """One scrape of ``/metrics``: the text and its samples, (name, labels) → value."""

    text: str
    samples: dict[tuple[str, tuple[tuple[str, str], ...]], float]

    def value(self, metric: str, /, **labels: str) -> float:
        """Sum over the series of ``name`` whose labels include ``labels`` (0 when none)."""
        want = set(labels.items())
        return sum(v for (n, ls), v in self.samples.items() if n == metric and want <= set(ls))

    def has(self, metric: str, /, **labels: str) -> bool:
        want = set(labels.items())
        return any(n == metric and want <= set(ls) for n, ls in self.samples)

    def names(self) -> set[str]:
        """Series names as they are on the wire (the parser renames ``x`` counters to
        ``x_total``; Prometheus does not)."""
        lines = (line for line in self.text.splitlines() if line and not line.startswith("#"))
        return {line.split("{")[0].split(" ")[0] for line in lines}


def read_metrics(url: str) -> Scraped:
    with urllib.request.urlopen(url, timeout=10) as response:
        text = response.read().decode()
    samples: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return Scraped(text, samples)


@pytest.fixture
def scrape() -> Callable[[str], Scraped]:
    """GET a ``/metrics`` URL and read it."""
    return read_metrics


@pytest.fixture(scope="session")
def metrics_url() -> Iterator[str]:
    """``/metrics`` of a health server on loopback serving this process's registry (the one
    the worker's hooks write)."""
    from worker.health import HealthServer

    server = HealthServer(0, lambda: True, host="127.0.0.1").start()
    yield f"http://127.0.0.1:{server.port}/metrics"
    server.stop()
