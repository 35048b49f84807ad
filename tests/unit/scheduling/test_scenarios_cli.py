"""`joinery plan` end to end through ``worker.cli.main``: exit codes, one-line errors, warnings."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.catalogs import catalog, od_price
from tests.support.labels import CAPACITY_TYPE
from tests.support.manifests import nodepool, pod, req
from worker.cli import main

OD = [req(CAPACITY_TYPE, "In", "on-demand"), req("kubernetes.io/arch", "In", "amd64")]


def write(tmp_path: Path, name: str, docs: Sequence[Any]) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(list(docs)))
    return str(path)


def run(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    docs: Sequence[Any] | None,
    text: str | None = None,
) -> tuple[int, str, str]:
    cat = write(tmp_path, "catalog.yaml", [catalog()])
    if text is not None:
        manifests = tmp_path / "m.yaml"
        manifests.write_text(text)
        mpath = str(manifests)
    else:
        mpath = write(tmp_path, "m.yaml", docs or [])
    code = main(["plan", "-f", mpath, "--catalog", cat, "-o", "json"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_plan_with_unschedulable_pods_exits_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        tmp_path, capsys, [nodepool(requirements=OD), pod("a", "1", "1Gi"), pod("huge", "64")]
    )
    assert code == 0
    doc = json.loads(out)
    assert doc["nodeClaims"][0]["pods"] == ["default/a"]
    assert doc["nodeClaims"][0]["price"] == od_price("c5.large")
    assert [u["pod"] for u in doc["unschedulable"]] == ["default/huge"]
    assert err == ""


def test_list_kind_is_expanded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lst = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [nodepool(requirements=OD), pod("a", "1", "1Gi")],
    }
    code, out, _ = run(tmp_path, capsys, [lst])
    assert code == 0
    assert json.loads(out)["nodeClaims"][0]["pods"] == ["default/a"]


def test_malformed_yaml_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(tmp_path, capsys, None, text="kind: Pod\nmetadata: {name: [unclosed\n")
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert "m.yaml" in err and "YAML" in err


def test_in_without_values_exits_2_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = nodepool(requirements=[{"key": "kubernetes.io/arch", "operator": "In"}])
    code, out, err = run(tmp_path, capsys, [bad, pod("a")])
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert "document 1" in lines[0] and "requirements" in lines[0] and "In" in lines[0]


def test_garbage_quantity_exits_2_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(tmp_path, capsys, [nodepool(requirements=OD), pod("a", "abc")])
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert "document 2" in lines[0] and "cpu" in lines[0] and "abc" in lines[0]


def test_garbage_catalog_quantity_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cat = catalog()
    cat["instanceTypes"][0]["capacity"]["memory"] = "lots"
    cpath = write(tmp_path, "catalog.yaml", [cat])
    mpath = write(tmp_path, "m.yaml", [nodepool(), pod("a")])
    code = main(["plan", "-f", mpath, "--catalog", cpath])
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "memory" in err


def test_unknown_kind_is_ignored_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}, "spec": {}}
    code, out, err = run(tmp_path, capsys, [nodepool(requirements=OD), svc, pod("a", "1", "1Gi")])
    assert code == 0
    assert json.loads(out)["nodeClaims"][0]["pods"] == ["default/a"]
    assert "warning" in err and "Service" in err


def test_yaml_and_table_outputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cat = write(tmp_path, "catalog.yaml", [catalog()])
    m = write(tmp_path, "m.yaml", [nodepool(requirements=OD), pod("a", "1", "1Gi")])
    assert main(["plan", "-f", m, "--catalog", cat, "-o", "yaml"]) == 0
    doc = yaml.safe_load(capsys.readouterr().out)
    assert doc["nodeClaims"][0]["instanceTypes"][0] == "c5.large"
    assert main(["plan", "-f", m, "--catalog", cat, "-o", "table"]) == 0
    assert "c5.large" in capsys.readouterr().out
