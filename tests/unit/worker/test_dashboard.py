"""The Grafana dashboards in deploy/grafana read only series the worker exports, and between
them show every metric family the worker exports. The names come from the code: the Prometheus
registry (``worker.running.metrics.sample_names``) and the Temporal SDK series Joinery relies on
(``worker.running.sdk_metrics.RELIED_ON``, itself checked against a live worker's scrape in
tests/workflows/test_worker_integration.py)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from worker.running import metrics, sdk_metrics

DASHBOARDS = sorted((Path(__file__).parents[3] / "deploy" / "grafana").glob("*.json"))
DASHBOARD = Path(__file__).parents[3] / "deploy" / "grafana" / "joinery-dashboard.json"
SERIES = re.compile(r"\b(?:karpenter|joinery|temporal|operator)_[a-zA-Z0-9_:]*")


def _panels(panels: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for p in panels:
        yield p
        yield from _panels(p.get("panels") or [])


def _exprs() -> list[str]:
    """Every query, without its ``by (...)`` groupings (label names are not series)."""
    boards = [json.loads(path.read_text()) for path in DASHBOARDS]
    exprs = [
        t["expr"] for b in boards for p in _panels(b["panels"]) for t in p.get("targets") or []
    ]
    return [re.sub(r"\b(?:by|without)\s*\([^)]*\)", "", e) for e in exprs]


def test_every_series_the_dashboard_reads_is_exported() -> None:
    exported = metrics.sample_names() | sdk_metrics.RELIED_ON
    used = {name for expr in _exprs() for name in SERIES.findall(expr)}
    assert used, "the dashboard has no queries"
    assert used <= exported, sorted(used - exported)


def test_every_metric_the_worker_exports_is_on_the_dashboard() -> None:
    used = {name for expr in _exprs() for name in SERIES.findall(expr)}
    families = {f.name for f in metrics.REGISTRY.collect()}
    shown = {f for f in families if any(u.startswith(f) for u in used)}
    assert shown == families, sorted(families - shown)
    assert used >= sdk_metrics.RELIED_ON


def test_joinery_and_karpenters_dashboards_are_there() -> None:
    names = {p.name for p in DASHBOARDS}
    assert {
        "joinery-dashboard.json",
        "karpenter-capacity-dashboard.json",
        "karpenter-performance-dashboard.json",
    } <= names


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda p: p.stem)
def test_the_dashboard_is_importable(path: Path) -> None:
    board = json.loads(path.read_text())
    assert board["uid"] and board["title"]
    variables = {v["name"] for v in board["templating"]["list"]}
    assert {"datasource", "job"} <= variables
    ids = [p["id"] for p in _panels(board["panels"])]
    assert len(ids) == len(set(ids))
    for p in _panels(board["panels"]):
        assert p["title"]
        for t in p.get("targets") or []:
            assert t["datasource"]["uid"] == "${datasource}"
            assert '{job=~"$job"' in t["expr"], t["expr"]
