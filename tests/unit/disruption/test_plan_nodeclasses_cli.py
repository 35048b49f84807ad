"""``joinery plan`` with several EC2NodeClasses, as users run it (files on disk, the
installed ``joinery``): each pool plans on its own NodeClass's catalog, as the worker's
rounds do: the zones of its resolved subnets (``status.subnets``), and a catalog file of
its own with ``--catalog NODECLASS=FILE``; with ``--disruption`` its nodes are priced from
that catalog too. Bad input exits 2 with one line naming the object and field."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from tests.support.catalogs import ZA, ZB, catalog, od_price
from tests.support.disruption import ALL, OD_AMD, bound, node_and_claim, pool
from tests.support.labels import NODEPOOL, ZONE
from tests.support.manifests import nodepool, pod
from tests.support.plan_cli import JOINERY, nodeclass, on_class, run

NOW = "2026-11-23T12:00:00Z"


def _zoned(zones_a: Sequence[str] | None, zones_b: Sequence[str] | None) -> list[Any]:
    """Pool ``a`` (weight 50, tried first) on class ``class-a``, pool ``b`` on ``class-b``;
    a pod that needs zone b and one that needs nothing."""
    return [
        nodeclass("class-a", zones_a),
        nodeclass("class-b", zones_b),
        on_class(nodepool("a", OD_AMD, weight=50), "class-a"),
        on_class(nodepool("b", OD_AMD), "class-b"),
        pod("web-b", "1", "1Gi", node_selector={ZONE: ZB}),
        pod("web-any", "1", "1Gi"),
    ]


def test_each_pool_buys_only_in_its_nodeclass_subnets_zones(tmp_path: Path) -> None:
    code, out, err = run(tmp_path, _zoned([ZA], [ZB]))
    assert code == 0, err
    assert "EC2NodeClass" not in err  # read, not "ignored"
    where = {(c["nodePool"], tuple(c["zones"])): c["pods"] for c in out["nodeClaims"]}
    assert where == {("a", (ZA,)): ["default/web-any"], ("b", (ZB,)): ["default/web-b"]}


def test_nodeclasses_without_resolved_subnets_keep_every_zone_as_before(tmp_path: Path) -> None:
    """Hand-written NodeClasses (no status): their selectors cannot be resolved offline, so
    the plan is the one-catalog plan: both pods on the heavier pool, in zone b."""
    code, out, err = run(tmp_path, _zoned(None, None))
    assert code == 0, err
    (claim,) = out["nodeClaims"]
    assert claim["nodePool"] == "a" and claim["zones"] == [ZB]
    assert sorted(claim["pods"]) == ["default/web-any", "default/web-b"]


def test_a_nodeclass_given_its_own_catalog_file_sizes_its_pools_claims(tmp_path: Path) -> None:
    """``--catalog class-b=FILE`` (a NodeClass with ``maxPods: 8``): pool ``b``'s ten pods
    need two nodes; on the catalog for every pool, one."""
    small = catalog()
    for entry in small["instanceTypes"]:
        entry["capacity"]["pods"] = "8"
    docs = [
        nodeclass("class-a", [ZA, ZB]),
        nodeclass("class-b", [ZA, ZB]),
        on_class(nodepool("a", OD_AMD), "class-a"),
        on_class(nodepool("b", OD_AMD), "class-b"),
        *(pod(f"p{i}", "100m", "128Mi", node_selector={NODEPOOL: "b"}) for i in range(10)),
    ]
    code, out, err = run(tmp_path, docs, catalogs={"class-b": small})
    assert code == 0, err
    assert sorted(len(c["pods"]) for c in out["nodeClaims"]) == [2, 8]
    code, out, err = run(tmp_path, docs)
    assert code == 0, err
    assert [len(c["pods"]) for c in out["nodeClaims"]] == [10]


def test_disruption_prices_a_node_from_its_nodeclass_catalog(tmp_path: Path) -> None:
    """Pool ``win``'s NodeClass has a catalog at twice the price: its m5.xlarge costs
    0.384/h, so an m5.large of its own (0.192/h) replaces it."""
    doubled = catalog()
    for entry in doubled["instanceTypes"]:
        for o in entry["offerings"]:
            o["price"] = round(o["price"] * 2, 6)
    docs = [
        nodeclass("linux", [ZA, ZB]),
        nodeclass("windows", [ZA, ZB]),
        on_class(pool("win", requirements=OD_AMD, budgets=ALL), "windows"),
        on_class(pool("lin", requirements=OD_AMD, budgets=ALL), "linux"),
        *node_and_claim("w", "m5.xlarge", nodepool_name="win"),
        bound("w0", "w", "1", "5Gi", node_selector={NODEPOOL: "win"}),
    ]
    code, out, err = run(tmp_path, docs, "--disruption", "--now", NOW)
    assert code == 0, err
    assert out["disruption"]["costPerHour"]["before"] == od_price("m5.xlarge")
    code, out, err = run(
        tmp_path, docs, "--disruption", "--now", NOW, catalogs={"windows": doubled}
    )
    assert code == 0, err
    assert out["disruption"]["costPerHour"]["before"] == 2 * od_price("m5.xlarge")
    (cmd,) = out["disruption"]["commands"]
    assert cmd["nodes"] == ["w"] and cmd["replacements"][0]["instanceTypes"][0] == "m5.large"
    assert cmd["replacements"][0]["nodePool"] == "win"


def _error(code: int, err: str) -> str:
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def test_bad_nodeclass_input_is_one_line_naming_the_object_and_field(tmp_path: Path) -> None:
    broken = nodeclass("class-b", [ZB])
    del broken["status"]["subnets"][0]["zone"]
    docs = [nodeclass("class-a", [ZA]), broken, *_zoned([ZA], [ZB])[2:]]
    line = _error(*run(tmp_path, docs)[::2])
    assert "EC2NodeClass class-b" in line and "status.subnets[0].zone" in line

    docs = [nodeclass("class-a", [ZA]), *_zoned([ZA], [ZB])]
    line = _error(*run(tmp_path, docs)[::2])
    assert "EC2NodeClass class-a" in line and "metadata.name: duplicate EC2NodeClass" in line

    line = _error(*run(tmp_path, _zoned([ZA], [ZB]), catalogs={"class-x": catalog()})[::2])
    assert "--catalog class-x=" in line and "no EC2NodeClass class-x" in line

    m = tmp_path / "m.yaml"
    m.write_text(yaml.safe_dump_all(_zoned([ZA], [ZB])))
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(catalog()))
    c = str(tmp_path / "c.yaml")
    done = subprocess.run(
        [str(JOINERY), "plan", "-f", str(m), "--catalog", c, "--catalog", c],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "--catalog: expected one catalog file" in _error(done.returncode, done.stderr)
