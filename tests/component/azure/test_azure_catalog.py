"""The Azure catalog read through the real SDK from the emulator, checked against the seed
SKUs by plain arithmetic (the expected values never come from the code under test)."""

from __future__ import annotations

import json
import math

import pytest
from azure.core.exceptions import HttpResponseError
from azure.mgmt.compute import ComputeManagementClient

from activities.azure.catalog import build_catalog, fetch_skus
from activities.azure.params import CatalogParams
from activities.azure.pricing import AzurePricing
from models.instancetype import InstanceType
from sandbox.azure.seed import SEEDED_REGIONS, seed_skus
from sandbox.azure.server import AzureServer
from tests.support.azure_skus import AKS_GPU_SIZES, expected_names, seed_item
from tests.support.azure_skus import caps as sku_caps

GIB, MIB = 2**30, 2**20


def _catalog(compute: ComputeManagementClient, region: str) -> dict[str, InstanceType]:
    skus = fetch_skus(compute, region)
    types = build_catalog(skus, region, AzurePricing(region), CatalogParams())
    return {t.name: t for t in types}


def _label(it: InstanceType, key: str) -> list[str]:
    req = it.requirements.get(key)
    assert req is not None, key
    return sorted(req.values)


@pytest.mark.parametrize("region", SEEDED_REGIONS)
def test_every_usable_seeded_sku_is_listed_with_the_labels(
    compute: ComputeManagementClient, region: str
) -> None:
    catalog = _catalog(compute, region)
    expected = expected_names(region)
    assert expected and set(catalog) == expected
    for name, it in catalog.items():
        caps = sku_caps(seed_item(region, name))
        assert _label(it, "karpenter.azure.com/sku-name") == [name]
        assert _label(it, "karpenter.azure.com/sku-cpu") == [caps["vCPUs"]]
        assert _label(it, "kubernetes.azure.com/sku-cpu") == [caps["vCPUs"]]
        mib = str(int(float(caps["MemoryGB"]) * 1024))
        assert _label(it, "karpenter.azure.com/sku-memory") == [mib]
        assert _label(it, "karpenter.azure.com/sku-networking-accelerated") == [
            caps.get("AcceleratedNetworkingEnabled", "False").lower()
        ]
        assert _label(it, "karpenter.azure.com/sku-storage-premium-capable") == [
            caps.get("PremiumIO", "False").lower()
        ]
        assert _label(it, "topology.kubernetes.io/region") == [region]
        arch = {"x64": "amd64", "Arm64": "arm64"}[caps["CpuArchitectureType"]]
        assert _label(it, "kubernetes.io/arch") == [arch]
        gens = sorted(g.strip()[1:] for g in caps["HyperVGenerations"].split(","))
        assert _label(it, "karpenter.azure.com/sku-hyperv-generation") == gens
        gpus = caps.get("GPUs", "0") if name in AKS_GPU_SIZES else "0"
        assert _label(it, "karpenter.azure.com/sku-gpu-count") == [gpus]
        ephemeral = _ephemeral_gb(caps)
        key = "karpenter.azure.com/sku-storage-ephemeralos-maxsize"
        if ephemeral:
            assert _label(it, key) == [str(ephemeral)]
        else:
            assert it.requirements[key].operator == "DoesNotExist"


def _ephemeral_gb(caps: dict[str, str]) -> int:
    """The largest ephemeral OS disk in GB: the NVMe disk where that placement is offered,
    else the cache, else the resource disk (MaxResourceVolumeMB is MiB)."""
    if caps.get("EphemeralOSDiskSupported") != "True":
        return 0
    nvme = int(caps.get("NvmeDiskSizeInMiB", "0"))
    if nvme and "NvmeDisk" in caps.get("SupportedEphemeralOSDiskPlacements", ""):
        return nvme * MIB // 10**9
    if int(caps.get("CachedDiskBytes", "0")):
        return int(caps["CachedDiskBytes"]) // 10**9
    return int(caps.get("MaxResourceVolumeMB", "0")) * MIB // 10**9


def test_standard_d2_v5_capacity_overhead_and_labels(compute: ComputeManagementClient) -> None:
    """The seed has no Standard_D2s_v5; Standard_D2_v5 is the same shape without premium
    storage."""
    region = "eastus"
    it = _catalog(compute, region)["Standard_D2_v5"]
    item = seed_item(region, "Standard_D2_v5")
    caps = sku_caps(item)
    vcpus, mem_gib = int(caps["vCPUs"]), float(caps["MemoryGB"])
    assert (vcpus, mem_gib) == (2, 8.0)
    memory = int(mem_gib) * GIB - math.ceil(int(mem_gib) * GIB * 0.075)
    assert it.capacity["cpu"] == vcpus * 1000
    assert it.capacity["memory"] == memory * 1000
    assert it.capacity["pods"] == 250 * 1000  # azure CNI overlay, AKS's default
    assert it.capacity["ephemeral-storage"] == 128 * 10**9 * 1000
    # kube-reserved: 6% of the first vCPU + 4% of the second; 25% of the first 4 GiB +
    # 20% of the next 4; plus 750Mi kept for eviction.
    assert it.overhead["cpu"] == 60 + 40
    reserved_mi = int(1024 * (4 * 0.25 + 4 * 0.20))
    assert it.overhead["memory"] == (reserved_mi + 750) * MIB * 1000
    assert _label(it, "karpenter.azure.com/sku-family") == ["D"]
    assert _label(it, "karpenter.azure.com/sku-series") == ["D_v5"]
    assert _label(it, "karpenter.azure.com/sku-version") == ["5"]
    assert _label(it, "karpenter.azure.com/sku-gpu-count") == ["0"]
    assert it.requirements["karpenter.azure.com/sku-gpu-name"].operator == "DoesNotExist"
    gens = sorted(g[1] for g in caps["HyperVGenerations"].split(","))
    assert _label(it, "karpenter.azure.com/sku-hyperv-generation") == gens
    assert _label(it, "kubernetes.azure.com/os-sku") == ["Ubuntu"]
    zones = {f"eastus-{z}" for z in item["locationInfo"][0]["zones"]} | {"0"}
    assert {o.zone for o in it.offerings} == zones
    spot = caps["LowPriorityCapable"] == "True"
    assert all(o.available == spot for o in it.offerings if o.capacity_type == "spot")


def test_node_class_sets_pods_disk_and_image_labels(compute: ComputeManagementClient) -> None:
    skus = fetch_skus(compute, "eastus")
    params = CatalogParams(max_pods=30, os_disk_size_gb=64, image_family="AzureLinux", fips=True)
    types = {t.name: t for t in build_catalog(skus, "eastus", AzurePricing("eastus"), params)}
    it = types["Standard_D2_v5"]
    assert it.capacity["pods"] == 30 * 1000
    assert it.capacity["ephemeral-storage"] == 64 * 10**9 * 1000
    assert _label(it, "kubernetes.azure.com/os-sku") == ["AzureLinux"]
    assert _label(it, "kubernetes.azure.com/fips_enabled") == ["true"]


def test_gpu_size_labels_and_capacity(compute: ComputeManagementClient) -> None:
    region = "southcentralus"
    catalog = _catalog(compute, region)
    for name, accelerator in (
        ("Standard_NC24ads_A100_v4", "A100"),
        ("Standard_NC16as_T4_v3", "T4"),
    ):
        gpus = sku_caps(seed_item(region, name))["GPUs"]
        it = catalog[name]
        assert _label(it, "karpenter.azure.com/sku-gpu-count") == [gpus]
        assert _label(it, "karpenter.azure.com/sku-gpu-manufacturer") == ["nvidia"]
        assert _label(it, "karpenter.azure.com/sku-gpu-name") == [accelerator]
        assert it.capacity["nvidia.com/gpu"] == int(gpus) * 1000
    # NC6s_v3 has a GPU but no accelerator in its name.
    v100 = catalog["Standard_NC6s_v3"]
    assert v100.requirements["karpenter.azure.com/sku-gpu-name"].operator == "DoesNotExist"
    assert _label(v100, "karpenter.azure.com/sku-gpu-manufacturer") == ["nvidia"]


def test_zone_restrictions_leave_only_the_regional_offering(
    compute: ComputeManagementClient,
) -> None:
    item = seed_item("eastus", "Standard_NC6s_v3")
    (restriction,) = item["restrictions"]
    assert restriction["type"] == "Zone" and restriction["restrictionInfo"]["zones"]
    it = _catalog(compute, "eastus")["Standard_NC6s_v3"]
    left = set(item["locationInfo"][0]["zones"]) - set(restriction["restrictionInfo"]["zones"])
    assert {o.zone for o in it.offerings} == {f"eastus-{z}" for z in left} | {"0"}


def test_location_restricted_sku_is_left_out(compute: ComputeManagementClient) -> None:
    item = seed_item("westcentralus", "Standard_A0")
    assert item["restrictions"][0]["type"] == "Location"
    (sku,) = [s for s in fetch_skus(compute, "westcentralus") if s.name == "Standard_A0"]
    assert sku.location_restricted and sku.zones == ()


def test_paging_reads_every_page(azure: AzureServer, compute: ComputeManagementClient) -> None:
    azure.emulator.sku_page_size = 3
    before = len(azure.emulator.requests)
    skus = fetch_skus(compute, "southcentralus")
    count = len([s for s in seed_skus() if "southcentralus" in s["locations"]])
    assert len(skus) == count == 20
    assert len(azure.emulator.requests) - before == math.ceil(count / 3)


def test_throttling_is_retried_after_retry_after(
    azure: AzureServer, compute: ComputeManagementClient
) -> None:
    azure.emulator.faults.throttle("/subscriptions/", times=2, retry_after=1)
    before = len(azure.emulator.requests)
    skus = fetch_skus(compute, "westcentralus")
    assert len(skus) == 12
    # two 429s, then the two pages
    assert len(azure.emulator.requests) - before == 4


def test_arm_errors_reach_the_caller_with_their_code(
    azure: AzureServer, compute: ComputeManagementClient
) -> None:
    azure.emulator.faults.fail(
        "/subscriptions/", 403, "AuthorizationFailed", "no read on Microsoft.Compute/skus"
    )
    with pytest.raises(HttpResponseError) as caught:
        fetch_skus(compute, "eastus")
    assert caught.value.status_code == 403
    assert caught.value.error is not None and caught.value.error.code == "AuthorizationFailed"


def test_unsupported_filter_is_an_arm_error(compute: ComputeManagementClient) -> None:
    with pytest.raises(HttpResponseError) as caught:
        list(compute.resource_skus.list(filter="name eq 'Standard_D2_v5'"))
    assert caught.value.status_code == 400
    assert caught.value.error is not None and caught.value.error.code == "InvalidFilter"


def test_requests_without_a_token_are_refused(azure: AzureServer) -> None:
    import ssl
    import urllib.error
    import urllib.request

    url = f"{azure.endpoint}/subscriptions/x/locations?api-version=2022-12-01"
    context = ssl.create_default_context(cafile=azure.ca_file)
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(url, context=context, timeout=10)
    assert caught.value.code == 401
    assert json.loads(caught.value.read())["error"]["code"] == "AuthenticationFailed"
