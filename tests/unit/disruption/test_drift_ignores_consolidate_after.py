"""``consolidateAfter`` gates Empty and Underutilized only, as in Karpenter: a drifted node of a
pool that never consolidates (or inside its window) is still rolled, within its budgets.

The test catalog's on-demand prices in zone a: c5.large 0.085, m5.large 0.096, m5.xlarge 0.192.
A spot node in a pool that admits only on-demand is drifted (RequirementsDrifted)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.support.catalogs import catalog
from tests.support.disruption import (
    ALL,
    OD_AMD,
    blocked,
    bound,
    commands,
    disrupt,
    disrupted,
    kept,
    node_and_claim,
    pool,
)
from worker.cli import main

RECENT = "2026-11-23T11:55:00Z"  # five minutes before NOW


def test_a_drifted_node_of_a_never_pool_is_replaced() -> None:
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=ALL, consolidate_after="Never"),
            *node_and_claim("drift", "c5.large", capacity_type="spot"),
            bound("d", "drift", "1500m", "2Gi"),
            *node_and_claim("big", "m5.xlarge"),
            bound("b", "big", "500m", "1Gi"),
        ]
    )
    assert disrupted(out) == {"drift": "Drifted"}
    assert blocked(out)["big"] == "nodepool default has consolidateAfter: Never"


def test_an_empty_drifted_node_of_a_never_pool_goes_by_drift_not_emptiness() -> None:
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=ALL, consolidate_after="Never"),
            *node_and_claim("drift", "c5.large", capacity_type="spot"),
            *node_and_claim("empty", "m5.large"),
        ]
    )
    assert disrupted(out) == {"drift": "Drifted"}
    assert "consolidateAfter: Never" in blocked(out)["empty"]


def test_a_drifted_node_inside_its_window_is_replaced_but_never_consolidated() -> None:
    """Inside ``consolidateAfter`` a drifted node may still be rolled; when its budget stops
    the drift it is blocked by the budget, and no Underutilized command takes it meanwhile."""
    docs = [
        pool(
            requirements=OD_AMD,
            consolidate_after="1h",
            budgets=[{"nodes": "0", "reasons": ["Drifted"]}],
        ),
        *node_and_claim("drift", "m5.xlarge", capacity_type="spot", last_pod_event=RECENT),
        bound("d", "drift", "200m", "256Mi"),
        *node_and_claim("other", "m5.xlarge", last_pod_event=RECENT),
        bound("o", "other", "200m", "256Mi"),
    ]
    out = disrupt(docs)
    assert commands(out) == []
    assert "budget" in blocked(out)["drift"]
    assert "consolidateAfter is 1h" in blocked(out)["other"]
    docs[0] = pool(requirements=OD_AMD, consolidate_after="1h", budgets=ALL)
    out = disrupt(docs)
    assert disrupted(out) == {"drift": "Drifted"}


def test_a_drifted_node_whose_pods_fit_nowhere_is_kept_with_the_drift_finding() -> None:
    out = disrupt(
        [
            pool(
                requirements=[
                    *OD_AMD,
                    {
                        "key": "node.kubernetes.io/instance-type",
                        "operator": "In",
                        "values": ["c5.large"],
                    },
                ],
                budgets=ALL,
                consolidate_after="Never",
            ),
            *node_and_claim("drift", "m5.xlarge"),
            bound("huge", "drift", "3", "12Gi"),
        ]
    )
    assert commands(out) == []
    assert kept(out)["drift"].startswith("drifted (RequirementsDrifted")


def test_joinery_plan_disruption_shows_the_drift_of_a_never_pool(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = [
        pool(requirements=OD_AMD, budgets=ALL, consolidate_after="Never"),
        *node_and_claim("drift", "c5.large", capacity_type="spot"),
        bound("d", "drift", "1500m", "2Gi"),
    ]
    m, cat = tmp_path / "cluster.yaml", tmp_path / "catalog.yaml"
    m.write_text(yaml.safe_dump_all(docs))
    cat.write_text(yaml.safe_dump(catalog()))
    code = main(
        [
            "plan",
            "-f",
            str(m),
            "--catalog",
            str(cat),
            "--disruption",
            "--now",
            "2026-11-23T12:00:00Z",
            "-o",
            "json",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    cmds = out["disruption"]["commands"]
    assert [(c["reason"], c["nodes"]) for c in cmds] == [("Drifted", ["drift"])]
    assert out["disruption"]["blocked"] == []


def test_consolidation_does_not_take_a_drifted_node_inside_its_window() -> None:
    """Deleting the drifted m5.xlarge would save most (its pod fits on the m5.large), but it
    is inside ``consolidateAfter``: only the Drifted method may take it, and its budget says
    no. The m5.large, outside its window, is consolidated onto it instead."""
    out = disrupt(
        [
            pool(
                requirements=OD_AMD,
                consolidate_after="1h",
                budgets=[{"nodes": "0", "reasons": ["Drifted"]}, {"nodes": "100%"}],
            ),
            *node_and_claim("drift", "m5.xlarge", capacity_type="spot", last_pod_event=RECENT),
            bound("d", "drift", "100m", "128Mi"),
            *node_and_claim("small", "m5.large"),
            bound("s", "small", "1", "2Gi"),
        ]
    )
    assert disrupted(out) == {"small": "Underutilized"}
    assert "budget" in blocked(out)["drift"]
