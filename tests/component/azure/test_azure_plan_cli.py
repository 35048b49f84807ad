"""`joinery plan` on AKSNodeClass pools, end to end: the catalog read from the emulator by
the command itself (`--provider azure --region … --endpoint …`) or written by
`joinery catalog --provider azure`; the usual plan checks (test_azure_plan.check_plan) on
every Azure scenario; `--disruption` on a cluster of AKS nodes; and bad inputs (a bad
AKSNodeClass field, an unimplemented one, EC2 and AKS classes mixed) as one line, exit 2."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from activities.azure.clients import TOKEN_ENV
from sandbox.azure.server import AzureServer
from tests.component.azure.conftest import SUBSCRIPTION
from tests.component.azure.test_azure_plan import NODECLASS, SCENARIOS, _pod, _pool, check_plan
from tests.support.disruption import check_disruption_rules
from tests.support.labels import CAPACITY_TYPE, INSTANCE_TYPE, ZONE
from tests.support.manifests import node
from worker.cli import main

REGION = "southcentralus"


def _run(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


def _azure(azure: AzureServer, region: str = REGION) -> list[str]:
    return [
        "--provider",
        "azure",
        "--region",
        region,
        "--endpoint",
        azure.endpoint,
        "--ca-file",
        azure.ca_file,
        "--subscription-id",
        SUBSCRIPTION,
    ]


@pytest.fixture(autouse=True)
def _token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_ENV, "emulator-token")


@pytest.fixture(scope="module")
def cli_catalog(azure_server: AzureServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The region's catalog as `joinery catalog --provider azure` writes it (once)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(TOKEN_ENV, "emulator-token")
        code, out, err = _run(["catalog", *_azure(azure_server)])
    assert code == 0 and err == "", err
    path = tmp_path_factory.mktemp("azure-cli") / "catalog.yaml"
    path.write_text(out)
    return path


def _inputs(tmp_path: Path, docs: list[dict[str, Any]]) -> str:
    path = tmp_path / "inputs.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def _plan(args: list[str]) -> dict[str, Any]:
    code, out, err = _run(["plan", *args, "-o", "json"])
    assert code == 0, err
    result: dict[str, Any] = json.loads(out)
    return result


@pytest.mark.parametrize(("name", "requirements", "pods"), SCENARIOS, ids=[s[0] for s in SCENARIOS])
def test_plan_reads_the_region_and_passes_the_plan_checks(
    name: str,
    requirements: list[dict[str, Any]],
    pods: list[dict[str, Any]],
    azure: AzureServer,
    cli_catalog: Path,
    tmp_path: Path,
) -> None:
    inputs = _inputs(tmp_path, [_pool(requirements), NODECLASS, *pods])
    plan = _plan(["-f", inputs, *_azure(azure)])
    check_plan(name, requirements, pods, plan, cli_catalog)
    # The region read by `plan` and the file `catalog` wrote give the very same plan.
    assert plan == _plan(["-f", inputs, "--catalog", str(cli_catalog)])


def test_a_node_class_gets_its_own_catalog(
    azure: AzureServer, cli_catalog: Path, tmp_path: Path
) -> None:
    """maxPods: 30 on the class caps every claim at 30 pods (the region's default is 250),
    read from the region and from a `--catalog NAME=FILE` written with `--nodeclass`."""
    small = {**NODECLASS, "spec": {"imageFamily": "Ubuntu2204", "maxPods": 30}}
    pods = [_pod(f"tiny{i}", {"cpu": "10m", "memory": "16Mi"}) for i in range(70)]
    inputs = _inputs(tmp_path, [_pool([]), small, *pods])
    plan = _plan(["-f", inputs, *_azure(azure)])
    assert plan["unschedulable"] == []
    assert len(plan["nodeClaims"]) == 3
    assert max(len(c["pods"]) for c in plan["nodeClaims"]) == 30

    class_file = tmp_path / "small.yaml"
    class_file.write_text(yaml.safe_dump(small))
    code, out, err = _run(["catalog", *_azure(azure), "--nodeclass", str(class_file)])
    assert code == 0, err
    own = tmp_path / "small-catalog.yaml"
    own.write_text(out)
    by_file = _plan(["-f", inputs, "--catalog", str(cli_catalog), "--catalog", f"default={own}"])
    assert by_file == plan


def _aks_node(name: str, instance_type: str, catalog: dict[str, Any], zone: str) -> dict[str, Any]:
    entry = next(t for t in catalog["instanceTypes"] if t["name"] == instance_type)
    cap = entry["capacity"]
    body = node(
        name,
        cap["cpu"],
        cap["memory"],
        cap["pods"],
        zone=zone,
        instance_type=instance_type,
        nodepool="default",
        labels={"karpenter.sh/initialized": "true"},
    )
    body["spec"]["providerID"] = (
        f"azure:///subscriptions/{SUBSCRIPTION}/resourceGroups/mc_rg/providers/"
        f"Microsoft.Compute/virtualMachines/{name}"
    )
    body["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    body["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    return body


def _price(catalog: dict[str, Any], node_body: dict[str, Any]) -> float:
    labels = node_body["metadata"]["labels"]
    entry = next(t for t in catalog["instanceTypes"] if t["name"] == labels[INSTANCE_TYPE])
    return min(
        o["price"]
        for o in entry["offerings"]
        if o["zone"] == labels[ZONE] and o["capacityType"] == labels[CAPACITY_TYPE]
    )


def test_disruption_round_on_aks_nodes(
    azure: AzureServer, cli_catalog: Path, tmp_path: Path
) -> None:
    """An empty node is removed, a big node holding one small pod is replaced by a cheaper
    one (or its pod moved), priced from the Azure catalog."""
    catalog = yaml.safe_load(cli_catalog.read_text())
    pool = _pool([])
    pool["spec"]["disruption"] = {
        "consolidationPolicy": "WhenEmptyOrUnderutilized",
        "consolidateAfter": "0s",
        "budgets": [{"nodes": "100%"}],
    }
    empty = _aks_node("aks-empty", "Standard_D2_v5", catalog, f"{REGION}-1")
    big = _aks_node("aks-big", "Standard_D64s_v3", catalog, f"{REGION}-2")
    web = _pod("web", {"cpu": "500m", "memory": "1Gi"})
    web["spec"]["nodeName"] = "aks-big"
    web["metadata"]["ownerReferences"] = [
        {"kind": "ReplicaSet", "name": "web-rs", "controller": True, "apiVersion": "apps/v1"}
    ]
    web["status"] = {"phase": "Running", "startTime": "2026-01-01T00:00:00Z"}
    docs = [pool, NODECLASS, empty, big, web]
    out = _plan(
        [
            "-f",
            _inputs(tmp_path, docs),
            *_azure(azure),
            "--disruption",
            "--now",
            "2026-11-23T12:00:00Z",
        ]
    )
    check_disruption_rules(docs, out)
    d = out["disruption"]
    reasons = {n: c["reason"] for c in d["commands"] for n in c["nodes"]}
    assert reasons.get("aks-empty") == "Empty"
    assert reasons.get("aks-big") == "Underutilized"
    prices = {"aks-empty": _price(catalog, empty), "aks-big": _price(catalog, big)}
    assert d["costPerHour"]["before"] == pytest.approx(sum(prices.values()))
    for command in d["commands"]:
        replaced = sum(r["price"] for r in command["replacements"])
        expected = sum(prices[n] for n in command["nodes"]) - replaced
        assert command["savingsPerHour"] == pytest.approx(expected, abs=1e-6)
        for r in command["replacements"]:
            assert r["nodePool"] == "default" and r["price"] < prices["aks-big"]


def _refused(args: list[str]) -> str:
    code, out, err = _run(["plan", *args])
    assert code == 2 and out == "", (code, err)
    assert len(err.splitlines()) == 1, err
    return err


SUBNET = (
    "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg"
    "/providers/Microsoft.Network/virtualNetworks/vnet/subnets/nodes"
)


@pytest.mark.parametrize(
    ("spec", "fragments"),
    [
        ({"maxPods": 300}, ["spec.maxPods", "250"]),
        ({"imageFamily": "Windows2022"}, ["spec.imageFamily"]),
        ({"vnetSubnetID": "/subscriptions/x/subnets/y"}, ["spec.vnetSubnetID"]),
        ({"osDiskSizeGB": "big"}, ["spec.osDiskSizeGB"]),
        ({"fipsMode": "FIPS", "imageFamily": "Ubuntu2404"}, ["fipsMode", "Ubuntu2404"]),
        ({"vnetSubnetID": SUBNET, "tags": {"a" * 600: "x"}}, ["spec.tags"]),
        (
            {"localDNS": {"mode": "Required", "vnetDNSOverrides": [], "kubeDNSOverrides": []}},
            ["spec.localDNS"],
        ),
        (
            {"artifactStreaming": {"enabled": True}},
            ["spec.artifactStreaming", "would not be Ready", "ValidationSucceeded"],
        ),
    ],
    ids=[
        "max-pods",
        "image-family",
        "subnet-id",
        "disk-not-int",
        "fips-2404",
        "tag-key",
        "local-dns",
        "unimplemented",
    ],
)
def test_bad_aks_node_class_is_one_line_naming_it_and_the_field(
    spec: dict[str, Any], fragments: list[str], cli_catalog: Path, tmp_path: Path
) -> None:
    bad = {**NODECLASS, "spec": spec}
    inputs = _inputs(tmp_path, [_pool([]), bad, _pod("a", {"cpu": "1"})])
    err = _refused(["-f", inputs, "--catalog", str(cli_catalog)])
    assert "document 2 (AKSNodeClass default)" in err, err
    for fragment in fragments:
        assert fragment in err, err
    assert "Traceback" not in err


def test_bad_node_class_is_refused_on_the_region_path_too(
    azure: AzureServer, tmp_path: Path
) -> None:
    bad = {**NODECLASS, "spec": {"maxPods": 5}}
    inputs = _inputs(tmp_path, [_pool([]), bad])
    assert "spec.maxPods" in _refused(["-f", inputs, *_azure(azure)])


def test_aks_node_classes_need_names(cli_catalog: Path, tmp_path: Path) -> None:
    twice = _inputs(tmp_path, [_pool([]), NODECLASS, NODECLASS])
    err = _refused(["-f", twice, "--catalog", str(cli_catalog)])
    assert "document 3 (AKSNodeClass default): metadata.name: duplicate" in err


def _ec2_class() -> dict[str, Any]:
    return {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "ec2"},
        "spec": {"amiSelectorTerms": [{"alias": "al2023@latest"}]},
    }


def _ec2_pool() -> dict[str, Any]:
    pool = _pool([])
    pool["metadata"] = {"name": "ec2-pool"}
    pool["spec"]["template"]["spec"]["nodeClassRef"] = {
        "group": "karpenter.k8s.aws",
        "kind": "EC2NodeClass",
        "name": "ec2",
    }
    return pool


@pytest.mark.parametrize(
    "extra", [[_ec2_class()], [_ec2_pool()], [_ec2_pool(), _ec2_class()]], ids=str
)
def test_mixed_providers_are_refused(
    extra: list[dict[str, Any]], cli_catalog: Path, tmp_path: Path
) -> None:
    inputs = _inputs(tmp_path, [_pool([]), NODECLASS, *extra])
    err = _refused(["-f", inputs, "--catalog", str(cli_catalog)])
    assert "inputs mix providers" in err and "one provider per cluster" in err
    assert "AKSNodeClass" in err or "NodePool default" in err


def test_ec2_inputs_with_provider_azure_are_refused(azure: AzureServer, tmp_path: Path) -> None:
    inputs = _inputs(tmp_path, [_ec2_pool(), _ec2_class()])
    err = _refused(["-f", inputs, *_azure(azure)])
    assert "belongs to aws, not to --provider azure" in err


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--provider", "azure", "--subscription-id", "s"], "--region"),
        (["--provider", "azure", "--region", "eastus", "--subscription-id", ""], "subscription"),
        ([], "--catalog: required"),
    ],
    ids=["no-region", "no-subscription", "no-catalog"],
)
def test_missing_catalog_source_is_one_line(args: list[str], fragment: str, tmp_path: Path) -> None:
    inputs = _inputs(tmp_path, [_pool([]), NODECLASS])
    assert fragment in _refused(["-f", inputs, *args])


def test_catalog_and_region_together_are_refused(cli_catalog: Path, tmp_path: Path) -> None:
    inputs = _inputs(tmp_path, [_pool([]), NODECLASS])
    err = _refused(["-f", inputs, "--catalog", str(cli_catalog), "--region", "eastus"])
    assert "not both" in err
