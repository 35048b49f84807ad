"""`joinery explain` on a cluster of AKSNodeClass pools (the cluster read replaced by
manifests, Temporal unreachable): with `--catalog` it explains a node as on EC2; without one
it refuses in one line instead of reading EC2's catalog."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from models.nodepool import NodePool
from scheduling.inputs import Document
from tests.support.disruption import pool
from tests.support.manifests import node
from worker.cli import explain_command, main
from worker.cli.explain_command import LiveCluster, WorkflowFacts

ZONE = "eastus-1"
AKS_REF = {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "default"}
CATALOG = {
    "instanceTypes": [
        {
            "name": name,
            "capacity": {"cpu": cpu, "memory": mem, "pods": "250"},
            "requirements": [
                {"key": "karpenter.azure.com/sku-cpu", "operator": "In", "values": [cpu]}
            ],
            "offerings": [{"zone": ZONE, "capacityType": "on-demand", "price": price}],
        }
        for name, cpu, mem, price in (
            ("Standard_D2_v5", "2", "7Gi", 0.096),
            ("Standard_D4s_v3", "4", "14Gi", 0.192),
        )
    ]
}


def _cluster() -> list[dict[str, Any]]:
    p = pool()
    p["spec"]["template"]["spec"]["nodeClassRef"] = dict(AKS_REF)
    empty = node(
        "aks-empty",
        "4",
        "14Gi",
        "250",
        zone=ZONE,
        instance_type="Standard_D4s_v3",
        nodepool="default",
        labels={"karpenter.sh/initialized": "true"},
    )
    empty["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    empty["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    return [p, empty]


def _live(docs: Sequence[Mapping[str, Any]]) -> LiveCluster:
    documents = [Document(copy.deepcopy(dict(d)), f"doc {i}") for i, d in enumerate(docs)]
    pools = [NodePool.model_validate(d) for d in docs if d.get("kind") == "NodePool"]
    return LiveCluster(documents, [], pools, {})


@pytest.fixture
def cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(explain_command, "read_cluster", lambda kubeconfig: _live(_cluster()))

    async def no_temporal(args: Any) -> WorkflowFacts:
        return WorkflowFacts(None, False, [], "cannot reach Temporal at localhost:1")

    monkeypatch.setattr(explain_command, "ask_temporal", no_temporal)


@pytest.mark.usefixtures("cluster")
def test_without_a_catalog_an_aks_cluster_is_refused_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["explain", "aks-empty", "--kubeconfig", "k", "--region", "eastus"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert "NodePool default" in err and "AKSNodeClass default" in err and "--catalog" in err


@pytest.mark.usefixtures("cluster")
def test_with_a_catalog_an_aks_node_is_explained(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "azure.yaml"
    path.write_text(yaml.safe_dump(CATALOG))
    argv = ["explain", "aks-empty", "--kubeconfig", "k", "--catalog", str(path), "-o", "json"]
    # Exit 2 only because the workflow part is unavailable; the engine's answer is printed.
    assert main(argv) == 2
    out, err = capsys.readouterr()
    answer = yaml.safe_load(out)
    assert answer["node"] == "aks-empty" and answer["nodePool"] == "default"
    assert answer["now"]["verdict"] == "disrupt" and answer["now"]["method"] == "Empty"
    assert answer["now"]["savingsPerHour"] == pytest.approx(0.192)  # Standard_D4s_v3's price
    assert "workflow part unavailable" in err
