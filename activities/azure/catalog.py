"""The Azure instance-type catalog: Resource SKUs → InstanceTypes in the neutral format.

Which SKUs become instance types follows Karpenter Azure: VM SKUs of the region that the
subscription may use, at least 2 vCPUs and 3.5 GiB, not on AKS's or Karpenter's restricted
lists, no constrained-vCPU or confidential sizes, no GPU size AKS does not support; then
what the node class asks (GPU drivers for its image family, encryption at host, trusted
launch, local DNS, artifact streaming) narrows it further.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from activities.azure import vm_sizes
from activities.azure.capacity import capacity_and_overhead
from activities.azure.params import CatalogParams
from activities.azure.pricing import MISSING_PRICE, AzurePricing
from activities.azure.skus import VIRTUAL_MACHINES, Sku
from activities.azure.type_labels import kube_arch, memory_mib, requirements_for
from models.catalog import dump_catalog
from models.instancetype import InstanceType, Offering
from models.labels import CAPACITY_TYPE_ON_DEMAND, CAPACITY_TYPE_SPOT

# The zone label of a VM placed without a zone (AKS writes "0").
REGIONAL_ZONE = "0"
MIN_VCPUS = 2
MIN_MEMORY_GIB = 3.5


def fetch_skus(compute: Any, region: str) -> list[Sku]:
    """The region's VM SKUs through ``ComputeManagementClient.resource_skus`` (all pages)."""
    out = []
    for item in compute.resource_skus.list(filter=f"location eq '{region}'"):
        if item.resource_type == VIRTUAL_MACHINES and item.name:
            out.append(Sku.from_sdk(item, region))
    return out


def is_confidential(size: str) -> bool:
    return size.startswith(("DC", "EC"))


def usable(sku: Sku) -> bool:
    """The region-wide filters: what Karpenter Azure never offers, whatever the node class."""
    if sku.location_restricted or vm_sizes.is_restricted(sku.name):
        return False
    size = vm_sizes.parse_vm_size(sku.size)
    if size is None or size.cpus_constrained is not None or is_confidential(sku.size):
        return False
    if (sku.vcpus or 0) < MIN_VCPUS or (sku.memory_gib or 0.0) < MIN_MEMORY_GIB:
        return False
    return not (sku.gpus > 0 and vm_sizes.gpu_maker(sku.name) is None)


def fits_node_class(sku: Sku, params: CatalogParams) -> bool:
    """The node class's filters."""
    maker = vm_sizes.gpu_maker(sku.name)
    if maker is not None:
        if params.image_family == "AzureLinux":
            if not (
                vm_sizes.gpu_supported_on(sku.name, "azurelinux")
                or vm_sizes.gpu_supported_on(sku.name, "azurelinux3")
            ):
                return False
        elif not vm_sizes.gpu_supported_on(sku.name, "ubuntu"):
            return False
        if params.gpu_mode == "Driver" and maker != "nvidia":
            return False  # AKS installs NVIDIA drivers only
    if params.encryption_at_host and not sku.encryption_at_host:
        return False
    if params.trusted_launch and not sku.trusted_launch_capable:
        return False
    if params.local_dns and ((sku.vcpus or 0) < 4 or memory_mib(sku) < 244):
        return False
    return not (params.artifact_streaming and kube_arch(sku) == "arm64")


def offering_zones(sku: Sku, region: str) -> list[str]:
    """``eastus-1``-style zones left after restrictions, and always the regional ``0``."""
    return [f"{region.lower()}-{z}" for z in sku.zones] + [REGIONAL_ZONE]


def offerings_for(sku: Sku, region: str, pricing: AzurePricing) -> list[Offering]:
    """On-demand and spot in every zone; spot is unavailable where the SKU is not
    LowPriorityCapable, and a size the provider has never seen gets the missing price."""
    known = vm_sizes.is_known(sku.name)
    on_demand = pricing.on_demand(sku.name) if known else MISSING_PRICE
    spot = pricing.spot(sku.name) if known else MISSING_PRICE
    out = []
    for zone in offering_zones(sku, region):
        out.append(Offering(zone, CAPACITY_TYPE_ON_DEMAND, on_demand, True))
        out.append(Offering(zone, CAPACITY_TYPE_SPOT, spot, sku.low_priority_capable))
    return out


def build_catalog(
    skus: Iterable[Sku], region: str, pricing: AzurePricing, params: CatalogParams
) -> list[InstanceType]:
    """The instance types of the region for one node class, by name."""
    out = []
    for sku in sorted(skus, key=lambda s: s.name):
        if not usable(sku) or not fits_node_class(sku, params):
            continue
        size = vm_sizes.parse_vm_size(sku.size)
        assert size is not None  # usable() checked it
        capacity, overhead = capacity_and_overhead(sku, params)
        reqs = requirements_for(sku, size, region, params)
        offerings = offerings_for(sku, region, pricing)
        out.append(InstanceType.build(sku.name, capacity, offerings, overhead, reqs))
    return out


def catalog_document(instance_types: list[InstanceType]) -> dict[str, Any]:
    """The catalog file's content (DESIGN.md, ``--catalog``)."""
    return dump_catalog(instance_types)


def write_catalog(path: Path, instance_types: list[InstanceType]) -> None:
    """Write the catalog YAML ``joinery plan --catalog`` reads."""
    path.write_text(yaml.safe_dump(catalog_document(instance_types), sort_keys=False))


def region_catalog(
    compute: Any, region: str, pricing: AzurePricing, params: CatalogParams
) -> list[InstanceType]:
    """Fetch the region's SKUs, refresh prices (falling back to the bundled table) and
    build the catalog: what ``joinery catalog --provider azure`` will print."""
    skus = fetch_skus(compute, region)
    pricing.refresh()
    return build_catalog(skus, region, pricing, params)
