"""The Azure catalog's rules on hand-written SKUs: size names, AKS's reserved shares, max
pods by network plugin, and the node class's filters."""

from __future__ import annotations

from typing import Any

import pytest
from azure.mgmt.compute.models import ResourceSku

from activities.azure.capacity import kube_reserved, vm_memory
from activities.azure.catalog import build_catalog, fits_node_class, usable
from activities.azure.params import CatalogParams, cluster_label, default_max_pods
from activities.azure.pricing import MISSING_PRICE, AzurePricing, split_meters
from activities.azure.skus import Sku
from activities.azure.vm_sizes import parse_vm_size
from models.aksnodeclass import AKSNodeClass
from sandbox.azure.operations import Operations


def _sku(
    name: str, region: str = "eastus", zones: tuple[str, ...] = ("1", "2"), **caps: str
) -> Sku:
    base = {
        "vCPUs": "4",
        "MemoryGB": "16",
        "CpuArchitectureType": "x64",
        "HyperVGenerations": "V1,V2",
        "LowPriorityCapable": "True",
    }
    base.update(caps)
    item: dict[str, Any] = {
        "resourceType": "virtualMachines",
        "name": name,
        "size": name.removeprefix("Standard_"),
        "family": "f",
        "locations": [region],
        "locationInfo": [{"location": region, "zones": list(zones)}],
        "capabilities": [{"name": k, "value": v} for k, v in base.items()],
        "restrictions": [],
    }
    return Sku.from_sdk(ResourceSku(item), region)


@pytest.mark.parametrize(
    ("size", "family", "series", "version", "accelerator", "constrained"),
    [
        ("D2s_v5", "D", "Ds_v5", "5", None, None),
        ("D16plds_v5", "D", "Dplds_v5", "5", None, None),
        ("DS2_v2", "D", "DS_v2", "2", None, None),
        ("A0", "A", "A", "1", None, None),
        ("NC24ads_A100_v4", "N", "NCads_v4", "4", "A100", None),
        ("M8-2ms", "M", "Mms", "1", None, "2"),
        ("M416s_8_v2", "M", "Ms_v2", "2", None, None),
    ],
)
def test_size_names(
    size: str,
    family: str,
    series: str,
    version: str,
    accelerator: str | None,
    constrained: str | None,
) -> None:
    parsed = parse_vm_size(size)
    assert parsed is not None
    assert (parsed.family, parsed.series, parsed.version_label) == (family, series, version)
    assert parsed.accelerator == accelerator and parsed.cpus_constrained == constrained


def test_kube_reserved_by_hand() -> None:
    # 16 vCPUs: 6% of 1 + 4% of 1 + 2% of 2 + 1% of 12 = 0.06+0.04+0.04+0.12 = 0.26 vCPU.
    # 64 GiB: 25% of 4 + 20% of 4 + 10% of 8 + 6% of 48 = 1+0.8+0.8+2.88 = 5.48 GiB.
    cpu, memory = kube_reserved(16, 64.0)
    assert cpu == 260
    assert memory == int(1024 * 5.48) * 2**20
    # 0.5 GiB only pays the first bracket.
    assert kube_reserved(1, 0.5) == (60, 128 * 2**20)


def test_vm_memory_drops_fractional_gib_and_the_hypervisor_share() -> None:
    assert vm_memory(3.5, 0.075) == 3 * 2**30 - 241591911  # ceil(3 GiB * 7.5%)
    assert vm_memory(8, 0.0) == 8 * 2**30


@pytest.mark.parametrize(
    ("plugin", "mode", "pods"),
    [("azure", "overlay", 250), ("azure", "", 30), ("none", "", 250), ("kubenet", "", 110)],
)
def test_default_max_pods(plugin: str, mode: str, pods: int) -> None:
    assert default_max_pods(plugin, mode) == pods


def test_node_class_max_pods_wins() -> None:
    nc = AKSNodeClass.model_validate(
        {"metadata": {"name": "n"}, "spec": {"maxPods": 42, "osDiskSizeGB": 40}}
    )
    params = CatalogParams.for_node_class(nc, network_plugin="azure", network_plugin_mode="")
    assert (params.max_pods, params.os_disk_size_gb) == (42, 40)
    assert CatalogParams.for_node_class(None, network_plugin="kubenet").max_pods == 110


def test_cluster_label() -> None:
    assert cluster_label("MC_rg(1)_c_eastus") == "MC_rg-1-_c_eastus"
    assert cluster_label("a" * 70) == "a" * 63
    assert cluster_label("rg-") == "rg-z"


def test_region_wide_filters() -> None:
    assert usable(_sku("Standard_D4s_v5"))
    assert not usable(_sku("Standard_D1_v5", vCPUs="1"))
    assert not usable(_sku("Standard_D2_v5", MemoryGB="3"))
    assert not usable(_sku("Standard_DC4s_v3"))  # confidential
    assert not usable(_sku("Standard_M8-2ms"))  # constrained vCPUs
    assert not usable(_sku("Standard_A1"))  # refused by AKS
    assert not usable(_sku("Standard_NV4ads_V710_v9", GPUs="1"))  # a GPU AKS does not run


def test_node_class_filters() -> None:
    plain = _sku("Standard_D4s_v5")
    arm = _sku("Standard_D4ps_v5", CpuArchitectureType="Arm64")
    small = _sku("Standard_D2s_v5", vCPUs="2")
    no_tl = _sku("Standard_D4_v5", HyperVGenerations="V1")
    host = _sku("Standard_D4as_v5", EncryptionAtHostSupported="True")
    t4 = _sku("Standard_NC4as_T4_v3", GPUs="1")  # AzureLinux carries its driver
    a100 = _sku("Standard_NC24ads_A100_v4", GPUs="1")  # AzureLinux 3 only
    v100 = _sku("Standard_NC6s_v2", GPUs="1")  # Ubuntu only
    default = CatalogParams()
    assert all(fits_node_class(s, default) for s in (plain, arm, small, no_tl, t4, v100))
    assert fits_node_class(host, CatalogParams(encryption_at_host=True))
    assert not fits_node_class(plain, CatalogParams(encryption_at_host=True))
    assert not fits_node_class(no_tl, CatalogParams(trusted_launch=True))
    assert not fits_node_class(arm, CatalogParams(artifact_streaming=True))
    assert not fits_node_class(small, CatalogParams(local_dns=True))
    azl = CatalogParams(image_family="AzureLinux")
    assert fits_node_class(t4, azl) and fits_node_class(a100, azl)
    assert not fits_node_class(v100, azl)


def test_offerings_zones_spot_and_unknown_sizes() -> None:
    skus = [
        _sku("Standard_D4s_v5", zones=("1", "3")),
        _sku("Standard_D4_v5", zones=(), LowPriorityCapable="False"),
        _sku("Standard_D4ls_v9"),  # a size the provider has never seen
    ]
    types = {
        t.name: t for t in build_catalog(skus, "eastus", AzurePricing("eastus"), CatalogParams())
    }
    zonal = types["Standard_D4s_v5"]
    assert sorted({o.zone for o in zonal.offerings}) == ["0", "eastus-1", "eastus-3"]
    assert all(o.available for o in zonal.offerings)
    regional = types["Standard_D4_v5"]
    assert {o.zone for o in regional.offerings} == {"0"}
    assert [o.available for o in regional.offerings if o.capacity_type == "spot"] == [False]
    assert {o.price for o in types["Standard_D4ls_v9"].offerings} == {MISSING_PRICE}


def test_retail_meters_split() -> None:
    items = [
        {
            "armSkuName": "Standard_D2_v5",
            "skuName": "D2 v5",
            "meterName": "D2 v5",
            "productName": "Virtual Machines Dv5 Series",
            "retailPrice": 0.096,
        },
        {
            "armSkuName": "Standard_D2_v5",
            "skuName": "D2 v5 Spot",
            "meterName": "D2 v5 Spot",
            "productName": "Virtual Machines Dv5 Series",
            "retailPrice": 0.0192,
        },
        {
            "armSkuName": "Standard_D2_v5",
            "skuName": "D2 v5",
            "meterName": "D2 v5",
            "productName": "Virtual Machines Dv5 Series Windows",
            "retailPrice": 0.188,
        },
        {
            "armSkuName": "Standard_D2_v5",
            "skuName": "D2 v5 Low Priority",
            "meterName": "D2 v5 Low Priority",
            "productName": "Virtual Machines Dv5 Series",
            "retailPrice": 0.0192,
        },
    ]
    assert split_meters(items) == ({"Standard_D2_v5": 0.096}, {"Standard_D2_v5": 0.0192})


def test_long_running_operation_hook() -> None:
    ops = Operations()
    ok = ops.start(polls=2)
    assert [ops.status(ok)["status"] for _ in range(3)] == ["InProgress", "InProgress", "Succeeded"]  # type: ignore[index]
    failed = ops.start(polls=0, error={"code": "AllocationFailed", "message": "no capacity"})
    assert ops.status(failed) == {
        "name": failed,
        "status": "Failed",
        "error": {"code": "AllocationFailed", "message": "no capacity"},
    }
    assert ops.status("unknown") is None
