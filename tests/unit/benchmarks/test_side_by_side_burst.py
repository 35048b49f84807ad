"""The Karpenter side-by-side burst's own parts: the instance-types file Karpenter's kwok
provider reads (same types and prices as Joinery's catalog, and the same room for pods) and
the command's arguments."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import side_by_side_burst as sbs
from benchmarks.catalogs import ec2_like_catalog
from benchmarks.karpenter_kwok import instance_types
from models.instancetype import InstanceType, Offering

MI = 1024 * 1024


def _cpu_milli(text: str) -> int:
    return int(text[:-1]) if text.endswith("m") else int(float(text) * 1000)


def test_the_file_offers_exactly_the_catalogs_types_and_prices(tmp_path: Path) -> None:
    catalog = ec2_like_catalog()
    path = tmp_path / "types.json"
    assert instance_types.write(path, catalog) == len(catalog)
    entries = json.loads(path.read_text())

    def offers(entry: dict[str, object]) -> set[tuple[str, str, float]]:
        out = set()
        for o in entry["offerings"]:  # type: ignore[attr-defined]
            req = {r["key"]: r["values"] for r in o["Requirements"]}
            assert o["Available"] is True
            out.add(
                (
                    req["karpenter.sh/capacity-type"][0],
                    req["topology.kubernetes.io/zone"][0],
                    o["Price"],
                )
            )
        return out

    got = {e["name"]: offers(e) for e in entries}
    want = {t.name: {(o.capacity_type, o.zone, o.price) for o in t.offerings} for t in catalog}
    assert got == want
    by_name = {t.name: t for t in catalog}
    for e in entries:
        t = by_name[e["name"]]
        # kwok takes 100m CPU and 10Mi off; what is left must be Joinery's allocatable
        assert _cpu_milli(e["resources"]["cpu"]) - 100 == t.allocatable["cpu"]
        assert int(e["resources"]["memory"]) - 10 * MI == t.allocatable["memory"] // 1000
        assert int(e["resources"]["pods"]) * 1000 == t.allocatable["pods"]
        arch = "arm64" if "arm64" in t.requirements["kubernetes.io/arch"].values else "amd64"
        assert e["architecture"] == arch


def test_unavailable_offerings_and_types_without_any_are_left_out() -> None:
    cap = {"cpu": 2000, "memory": 4096 * MI * 1000, "pods": 29000}
    some = InstanceType.build(
        "m5.large", cap, [Offering("z1", "on-demand", 0.096), Offering("z2", "spot", 0.03, False)]
    )
    none = InstanceType.build("m5.xlarge", cap, [Offering("z1", "spot", 0.05, False)])
    entries = instance_types.kwok_instance_types([none, some])
    assert [e["name"] for e in entries] == ["m5.large"]
    assert len(entries[0]["offerings"]) == 1
    assert entries[0]["offerings"][0]["Price"] == 0.096


def test_arguments() -> None:
    args = sbs.parse_args(["--shape", "one-per-node", "--pods", "100", "--pairs", "2", "--json"])
    assert (args.shape, args.pods, args.pairs, args.json) == ("one-per-node", 100, 2, True)
    assert sbs.parse_args(["--shape", "packed", "--pods", "5"]).pairs == 3


@pytest.mark.parametrize(
    "argv",
    [
        ["--shape", "wide", "--pods", "100"],
        ["--shape", "packed", "--pods", "0"],
        ["--shape", "packed", "--pods", "ten"],
        ["--shape", "packed"],
        ["--shape", "two-cpu", "--pods", "10", "--pairs", "-1"],
    ],
)
def test_bad_arguments_exit_2_with_one_line(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        sbs.parse_args(argv)
    assert exc.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith("python -m benchmarks")


def test_both_sides_get_the_same_nodepool_but_for_the_nodeclass() -> None:
    kwok = {"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass", "name": "default"}
    ec2 = {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}
    a = sbs.nodepool("p", sbs.SHAPES["two-cpu"], kwok)
    b = sbs.nodepool("p", sbs.SHAPES["two-cpu"], ec2)
    assert a["spec"]["template"]["spec"].pop("nodeClassRef") == kwok
    assert b["spec"]["template"]["spec"].pop("nodeClassRef") == ec2
    assert a == b
    assert a["spec"]["disruption"]["consolidateAfter"] == "Never"
    reqs = {r["key"]: r["values"] for r in a["spec"]["template"]["spec"]["requirements"]}
    assert reqs["node.kubernetes.io/instance-type"] == ["m5.large", "m5.xlarge"]
    packed = sbs.nodepool("p", sbs.SHAPES["packed"], ec2)["spec"]["template"]["spec"]
    assert "node.kubernetes.io/instance-type" not in {r["key"] for r in packed["requirements"]}
