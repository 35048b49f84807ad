"""``joinery convert`` on old-API manifests written from Karpenter's docs: every output applies
to our CRDs (a server-side dry run on the real control plane) and plans with ``joinery plan``,
placing every pod the manifest holds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from activities.kubernetes.client import Kube
from activities.kubernetes.resources import EC2NODECLASS, NODEPOOL
from worker.cli import main

OLD_API = Path(__file__).parent / "old_api"
CATALOG = OLD_API / "catalog.yaml"
KINDS = {
    ("karpenter.sh/v1", "NodePool"): NODEPOOL,
    ("karpenter.k8s.aws/v1", "EC2NodeClass"): EC2NODECLASS,
}
MANIFESTS = sorted(p.name for p in OLD_API.glob("[0-9]*.yaml"))
OLD_KINDS = {"Provisioner", "AWSNodeTemplate"}


def test_at_least_ten_old_manifests_cover_each_api() -> None:
    versions = set()
    for name in MANIFESTS:
        versions |= {d["apiVersion"] for d in yaml.safe_load_all((OLD_API / name).read_text()) if d}
    assert len(MANIFESTS) >= 10
    assert {
        "karpenter.sh/v1alpha5",
        "karpenter.k8s.aws/v1alpha1",
        "karpenter.sh/v1beta1",
        "karpenter.k8s.aws/v1beta1",
    } <= versions


def _convert(tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]) -> Path:
    out = tmp_path / f"v1-{name}"
    assert main(["convert", "-f", str(OLD_API / name), "-o", str(out)]) == 0
    capsys.readouterr()
    return out


@pytest.mark.parametrize("name", MANIFESTS)
def test_converted_manifest_applies_and_plans(
    name: str, tmp_path: Path, admin: Kube, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _convert(tmp_path, name, capsys)
    docs: list[dict[str, Any]] = [d for d in yaml.safe_load_all(out.read_text()) if d]
    assert not {d["kind"] for d in docs} & OLD_KINDS
    karpenter = [d for d in docs if (d["apiVersion"], d["kind"]) in KINDS]
    assert {d["kind"] for d in karpenter} == {"NodePool", "EC2NodeClass"}
    for doc in karpenter:
        crd = KINDS[(doc["apiVersion"], doc["kind"])]
        # Server-side dry run: admission, schema and CEL validation run; nothing is stored.
        admin.custom.create_cluster_custom_object(
            crd.group, crd.version, crd.plural, doc, dry_run="All"
        )

    code = main(["plan", "-f", str(out), "--catalog", str(CATALOG), "-o", "json"])
    plan = json.loads(capsys.readouterr().out)
    assert code == 0
    pods = {
        f"{d['metadata']['namespace']}/{d['metadata']['name']}" for d in docs if d["kind"] == "Pod"
    }
    placed = {p for claim in plan["nodeClaims"] for p in claim["pods"]}
    assert pods and placed == pods, plan["unschedulable"]
