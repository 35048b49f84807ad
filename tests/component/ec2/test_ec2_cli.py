"""``joinery catalog`` end to end against the emulator, including bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from activities.ec2.pricing import offline_table
from models.catalog import load_catalog
from worker.cli import main

NODECLASS = """
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  role: KarpenterNodeRole
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: test-cluster}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: test-cluster}}]
  kubelet: {maxPods: 50}
"""


def test_catalog_json_with_nodeclass(
    env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "nc.yaml"
    path.write_text(NODECLASS)
    code = main(
        [
            "catalog",
            "--region",
            "us-east-1",
            "--endpoint-url",
            env.server.endpoint_url,
            "--nodeclass",
            str(path),
            "-o",
            "json",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    # the in-process moto prints a notice about the Pricing API it lacks; skip to the document
    types = {t.name: t for t in load_catalog(json.loads(out[out.index("{") :]))}
    assert len(types) >= 800
    assert types["m5.large"].capacity["pods"] == 50_000


def test_region_the_price_table_lacks_is_priced_as_us_east_1(
    env: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """No Pricing API (moto has none) and a region the offline table lacks: us-east-1's
    prices stand in, as Karpenter's do, so no on-demand offering is dropped for want of a
    price (it used to be a "no prices" error)."""
    env.emulation.spot_disabled_regions.add("eu-west-1")
    env.emulation.on_demand = {}
    assert "eu-west-1" not in offline_table()
    url = env.server.endpoint_url
    code = main(["catalog", "--region", "eu-west-1", "--endpoint-url", url, "-o", "json"])
    out = capsys.readouterr().out
    assert code == 0
    types = {t.name: t for t in load_catalog(json.loads(out[out.index("{") :]))}
    on_demand = [o for o in types["m5.large"].offerings if o.capacity_type == "on-demand"]
    us_east_1 = offline_table()["us-east-1"]["m5.large"]
    assert on_demand and {o.price for o in on_demand} == {us_east_1}


def test_bad_nodeclass_inputs_exit_2(
    env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nomatch = tmp_path / "nomatch.yaml"
    nomatch.write_text(
        NODECLASS.replace("test-cluster}}]\n  securityGroup", "other}}]\n  securityGroup")
    )
    code = main(
        [
            "catalog",
            "--region",
            "us-east-1",
            "--endpoint-url",
            env.server.endpoint_url,
            "--nodeclass",
            str(nomatch),
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "SubnetsNotFound" in err[0]
    invalid = tmp_path / "invalid.yaml"
    doc = yaml.safe_load(NODECLASS)
    doc["spec"]["amiSelectorTerms"] = [{"alias": "ubuntu@latest"}]
    invalid.write_text(yaml.safe_dump(doc))
    code = main(["catalog", "--region", "us-east-1", "--nodeclass", str(invalid)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "amiSelectorTerms" in err[0]
