"""Fixtures every tier shares, and the order the suite runs in."""

from __future__ import annotations

import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.support.activity_deps import deps, deps_pool
from tests.support.cloud import cloud
from tests.support.control_plane import admin, cluster, kube

# The real parts the activity tests (tests/component/activities) and the workflow tests share:
# one control plane and one emulated cloud per process. tests/component/kubernetes and
# tests/e2e start their own control plane (their conftests name ``cluster`` again).
__all__ = ["admin", "cloud", "cluster", "deps", "deps_pool", "kube"]


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
    from worker.running.health import HealthServer

    server = HealthServer(0, lambda: True, host="127.0.0.1").start()
    yield f"http://127.0.0.1:{server.port}/metrics"
    server.stop()


# -- running the suite on several processes (pytest-xdist: `make test TEST_WORKERS=2`) ----------
#
# Tests go to the workers a file at a time (module fixtures, e.g. the dev scenarios started
# together, run once), and the whole production tier as one unit (one temporal-server with
# PostgreSQL per run, not one per worker). Within the order below, the slowest units are
# handed out first, so the two workers end together instead of one starting a long file
# when the other is done.

# Units that take minutes on the 2-core CI machine, slowest first (seconds, last measured run
# on two processes, session 26).
SLOW_UNITS = (
    ("tests/component/kubernetes/test_scheduler_oracle.py", 170),  # issue 35, alone
    ("tests/component/ec2", 290),
    ("tests/workflows/production", 270),
    ("tests/e2e/test_dev_scenarios.py", 265),
    ("tests/e2e/test_crash.py", 205),
    ("tests/e2e/test_crash_azure.py", 260),  # issue 32, measured with another sandbox up
    ("tests/e2e/test_dev_azure.py", 90),
    ("tests/unit/fuzz/test_plan_fuzz.py", 170),
    ("tests/workflows/test_worker_integration.py", 85),
    ("tests/workflows/test_two_workers.py", 60),
    ("tests/e2e/test_dev_command.py", 41),
    ("tests/workflows/test_garbage_collection_worker.py", 40),
)
# Some state is global to a test process: moto's backends and the EC2 emulation's patches
# of them. The EC2 component tests reset the backends before each test, the e2e tests' stacks
# seed and patch them and undo it when they stop, and the session fixture ``cloud``
# (tests.support.cloud: the activity tests in tests/component/activities, and tests/workflows)
# seeds a region once and relies on it to the end. They run in that order (``PHASES``), which
# is what keeps them apart: in one process the collected tests are put in it, and units are
# handed out in it, so each process, taking units in queue order, meets them in the same
# order. Within a phase, slowest first.
PHASES = (
    "tests/component/ec2/",
    "tests/component/kubernetes/",
    "tests/e2e/",
    "tests/component/",
    "tests/unit/",
    "tests/workflows/",
)
ONE_UNIT_DIRS = ("tests/workflows/production/", "tests/component/ec2/")


def unit_of(nodeid: str) -> str:
    """The work unit a test belongs to: its file, or a directory run as one."""
    path = nodeid.split("::", 1)[0]
    return next((d.rstrip("/") for d in ONE_UNIT_DIRS if path.startswith(d)), path)


def phase_of(path: str) -> int:
    """Where a test file (or a unit) comes in ``PHASES``."""
    return next((i for i, d in enumerate(PHASES) if path.startswith(d)), len(PHASES))


def unit_rank(unit: str, tests: int) -> tuple[int, float, int]:
    """Sort key: the phases' order (``PHASES``), then known slow units by their time, then the
    rest by how many tests they hold."""
    seconds = next((s for u, s in SLOW_UNITS if unit == u), 0)
    return (phase_of(unit), -seconds, -tests)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """In one process too, the tests meet moto's global state in the phases' order (a stable
    sort: within a phase, the collection order)."""
    items.sort(key=lambda item: phase_of(item.nodeid))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SlowestFirst(LoadFileScheduling):
        ordered = False

        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid)

        def _assign_work_unit(self, node: Any) -> None:
            if not self.ordered:
                ranked = sorted(self.workqueue.items(), key=lambda u: unit_rank(u[0], len(u[1])))
                self.workqueue.clear()
                self.workqueue.update(ranked)
                self.ordered = True
            super()._assign_work_unit(node)

    return SlowestFirst(config, log)
