"""benchmarks/side_by_side.py: the inputs both tools get, and the same-problem check."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.side_by_side import (
    BENCHMARK_LIMITS,
    Workload,
    deployments_of,
    joinery_summary,
    same_problem,
    write_inputs,
)
from benchmarks.workloads import diverse_pods


def test_deployments_scaled_to_exact_count_keep_all_fifty() -> None:
    pods = deployments_of(5000)
    assert len(pods) == 5000
    assert len({p["metadata"]["labels"]["app"] for p in pods}) == 50
    assert len({p["metadata"]["name"] for p in pods}) == 5000


def test_both_tools_get_the_same_pods_pool_and_catalog(tmp_path: Path) -> None:
    w = Workload("tiny", "tiny", "fake", lambda: diverse_pods(10))
    inputs = write_inputs(tmp_path, [w])["tiny"]
    karpenter = json.loads(inputs.karpenter.read_text())
    assert [p["metadata"]["name"] for p in karpenter["pods"]] == [
        p["metadata"]["name"] for p in diverse_pods(10)
    ]
    assert karpenter["nodePools"][0]["spec"]["limits"] == BENCHMARK_LIMITS
    assert len(karpenter["catalog"]["instanceTypes"]) == 400
    summary = joinery_summary(inputs.manifests, inputs.catalog)
    assert summary["pods"] == 10
    assert summary["instanceTypes"] == 400
    assert summary["offerings"] == 2400
    # Joinery's reading agrees with itself and a changed field is reported by name.
    assert same_problem(summary, dict(summary)) == []
    other = {**summary, "requestsMilliCpu": summary["requestsMilliCpu"] + 1}
    assert [d.split(":")[0] for d in same_problem(summary, other)] == ["requestsMilliCpu"]
    limits = {k: str(float(v) * (1 + 1e-12)) for k, v in summary["poolLimits"].items()}
    assert same_problem(summary, {**summary, "poolLimits": limits}) == []
