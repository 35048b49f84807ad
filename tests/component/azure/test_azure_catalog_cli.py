"""`joinery catalog --provider azure` end to end: the command reads the emulator through the
real SDK and writes the catalog file; what it lists is checked against the seed SKUs read
straight from the data file, by plain arithmetic."""

from __future__ import annotations

import contextlib
import io
import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from activities.azure.clients import TOKEN_ENV
from models.quantity import parse_quantity
from sandbox.azure.seed import SEEDED_REGIONS
from sandbox.azure.server import AzureServer
from tests.component.azure.conftest import SUBSCRIPTION
from tests.support.azure_skus import caps, expected_names, seed_item
from worker.cli import main

GIB, MIB = 2**30, 2**20


def _run(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


def _catalog_args(azure: AzureServer, region: str, *extra: str) -> list[str]:
    return [
        "catalog",
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
        *extra,
    ]


@pytest.fixture(autouse=True)
def _token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_ENV, "emulator-token")


def _catalog(azure: AzureServer, region: str, *extra: str) -> dict[str, dict[str, Any]]:
    code, out, err = _run(_catalog_args(azure, region, *extra))
    assert code == 0, err
    return {t["name"]: t for t in yaml.safe_load(out)["instanceTypes"]}


def _labels(entry: dict[str, Any]) -> dict[str, list[str] | None]:
    """key → values (None for DoesNotExist) of the catalog entry's requirements."""
    out: dict[str, list[str] | None] = {}
    for r in entry["requirements"]:
        out[r["key"]] = sorted(r["values"]) if r["operator"] == "In" else None
    return out


@pytest.mark.parametrize("region", SEEDED_REGIONS)
def test_lists_every_usable_seeded_sku_of_the_region(azure: AzureServer, region: str) -> None:
    catalog = _catalog(azure, region)
    assert set(catalog) == expected_names(region) and len(catalog) >= 8
    for name, entry in catalog.items():
        item = seed_item(region, name)
        c = caps(item)
        labels = _labels(entry)
        assert labels["karpenter.azure.com/sku-name"] == [name]
        assert labels["karpenter.azure.com/sku-cpu"] == [c["vCPUs"]]
        assert labels["karpenter.azure.com/sku-memory"] == [str(int(float(c["MemoryGB"]) * 1024))]
        assert labels["topology.kubernetes.io/region"] == [region]
        assert parse_quantity(entry["capacity"]["cpu"]) == int(c["vCPUs"]) * 1000
        # Every offering is in one of the SKU's zones (region-N) or the regional "0".
        zones = {f"{region}-{z}" for z in item["locationInfo"][0]["zones"]}
        assert {o["zone"] for o in entry["offerings"]} <= zones | {"0"}


def test_standard_d2_v5_cpu_memory_pods_and_labels(azure: AzureServer) -> None:
    """The seed holds no Standard_D2s_v5 (the issue's example); Standard_D2_v5 is the same
    2-vCPU, 8 GiB shape without premium storage."""
    entry = _catalog(azure, "eastus")["Standard_D2_v5"]
    c = caps(seed_item("eastus", "Standard_D2_v5"))
    vcpus, mem_gib = int(c["vCPUs"]), float(c["MemoryGB"])
    memory = int(mem_gib) * GIB - math.ceil(int(mem_gib) * GIB * 0.075)  # hypervisor's 7.5%
    assert parse_quantity(entry["capacity"]["cpu"]) == vcpus * 1000
    assert parse_quantity(entry["capacity"]["memory"]) == memory * 1000
    assert parse_quantity(entry["capacity"]["pods"]) == 250 * 1000  # azure CNI overlay
    # kube-reserved 6% + 4% of the two vCPUs; 25% of 4 GiB + 20% of 4 GiB, plus 750Mi.
    assert parse_quantity(entry["overhead"]["cpu"]) == 100
    reserved_mi = int(1024 * (4 * 0.25 + 4 * 0.20)) + 750
    assert parse_quantity(entry["overhead"]["memory"]) == reserved_mi * MIB * 1000
    labels = _labels(entry)
    assert labels["karpenter.azure.com/sku-family"] == ["D"]
    assert labels["karpenter.azure.com/sku-series"] == ["D_v5"]
    assert labels["karpenter.azure.com/sku-version"] == ["5"]
    assert labels["karpenter.azure.com/sku-memory"] == [str(int(mem_gib * 1024))]
    assert labels["karpenter.azure.com/sku-gpu-count"] == ["0"]
    assert labels["karpenter.azure.com/sku-gpu-name"] is None
    assert labels["karpenter.azure.com/sku-networking-accelerated"] == [
        c["AcceleratedNetworkingEnabled"].lower()
    ]
    assert labels["karpenter.azure.com/sku-storage-premium-capable"] == [c["PremiumIO"].lower()]
    assert labels["kubernetes.io/arch"] == ["amd64"]
    spot = [o for o in entry["offerings"] if o["capacityType"] == "spot"]
    assert spot and all(
        o.get("available", True) == (c["LowPriorityCapable"] == "True") for o in spot
    )


def test_gpu_size_gpu_labels(azure: AzureServer) -> None:
    entry = _catalog(azure, "eastus")["Standard_NC16as_T4_v3"]
    gpus = caps(seed_item("eastus", "Standard_NC16as_T4_v3"))["GPUs"]
    labels = _labels(entry)
    assert labels["karpenter.azure.com/sku-gpu-count"] == [gpus]
    assert labels["karpenter.azure.com/sku-gpu-manufacturer"] == ["nvidia"]
    assert labels["karpenter.azure.com/sku-gpu-name"] == ["T4"]
    assert parse_quantity(entry["capacity"]["nvidia.com/gpu"]) == int(gpus) * 1000


def test_node_class_file_shapes_the_catalog(azure: AzureServer, tmp_path: Path) -> None:
    nodeclass = tmp_path / "aks.yaml"
    nodeclass.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "karpenter.azure.com/v1beta1",
                "kind": "AKSNodeClass",
                "metadata": {"name": "small"},
                "spec": {"maxPods": 30, "osDiskSizeGB": 64, "imageFamily": "AzureLinux"},
            }
        )
    )
    entry = _catalog(azure, "eastus", "--nodeclass", str(nodeclass))["Standard_D2_v5"]
    assert parse_quantity(entry["capacity"]["pods"]) == 30 * 1000
    assert parse_quantity(entry["capacity"]["ephemeral-storage"]) == 64 * 10**9 * 1000
    assert _labels(entry)["kubernetes.azure.com/os-sku"] == ["AzureLinux"]


def test_network_plugin_sets_max_pods(azure: AzureServer) -> None:
    catalog = _catalog(azure, "eastus", "--network-plugin-mode", "none")
    assert {parse_quantity(t["capacity"]["pods"]) for t in catalog.values()} == {30 * 1000}


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["--subscription-id", ""], "--subscription-id: no Azure subscription"),
        (["--nodeclass", "/nonexistent/aks.yaml"], "/nonexistent/aks.yaml"),
    ],
)
def test_bad_options_are_one_line(azure: AzureServer, extra: list[str], fragment: str) -> None:
    code, out, err = _run(_catalog_args(azure, "eastus", *extra))
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and fragment in err, err


def test_bad_node_class_names_its_field(azure: AzureServer, tmp_path: Path) -> None:
    nodeclass = tmp_path / "aks.yaml"
    nodeclass.write_text(
        "apiVersion: karpenter.azure.com/v1beta1\nkind: AKSNodeClass\n"
        "metadata: {name: bad}\nspec: {osDiskSizeGB: 10}\n"
    )
    code, _, err = _run(_catalog_args(azure, "eastus", "--nodeclass", str(nodeclass)))
    assert code == 2 and len(err.splitlines()) == 1
    assert "AKSNodeClass bad" in err and "spec.osDiskSizeGB" in err, err


def test_arm_error_is_one_line_with_its_code(azure: AzureServer) -> None:
    azure.emulator.faults.fail(
        "/subscriptions/", 403, "AuthorizationFailed", "no read on Microsoft.Compute/skus"
    )
    code, out, err = _run(_catalog_args(azure, "eastus"))
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert "(AuthorizationFailed)" in err and "region eastus" in err, err
