"""Karpenter Azure's well-known labels for a SKU, as requirements the solver reads."""

from __future__ import annotations

from activities.azure import vm_sizes
from activities.azure.params import CatalogParams
from activities.azure.skus import Sku
from activities.azure.vm_sizes import VMSize
from models import labels as L
from models.requirements import DOES_NOT_EXIST, IN, Requirement

GROUP = "karpenter.azure.com"
AKS = "kubernetes.azure.com"
SKU_NAME = f"{GROUP}/sku-name"
SKU_FAMILY = f"{GROUP}/sku-family"
SKU_SERIES = f"{GROUP}/sku-series"
SKU_VERSION = f"{GROUP}/sku-version"
SKU_CPU = f"{GROUP}/sku-cpu"
SKU_MEMORY = f"{GROUP}/sku-memory"  # MiB
SKU_GPU_NAME = f"{GROUP}/sku-gpu-name"
SKU_GPU_MANUFACTURER = f"{GROUP}/sku-gpu-manufacturer"
SKU_GPU_COUNT = f"{GROUP}/sku-gpu-count"
SKU_NETWORKING_ACCELERATED = f"{GROUP}/sku-networking-accelerated"
SKU_STORAGE_PREMIUM_CAPABLE = f"{GROUP}/sku-storage-premium-capable"
SKU_STORAGE_EPHEMERAL_OS_MAX_SIZE = f"{GROUP}/sku-storage-ephemeralos-maxsize"
SKU_HYPERV_GENERATION = f"{GROUP}/sku-hyperv-generation"
AKS_SKU_CPU = f"{AKS}/sku-cpu"
AKS_SKU_MEMORY = f"{AKS}/sku-memory"
AKS_CLUSTER = f"{AKS}/cluster"
AKS_MODE = f"{AKS}/mode"
AKS_OS_SKU = f"{AKS}/os-sku"
AKS_FIPS_ENABLED = f"{AKS}/fips_enabled"

KUBE_ARCH = {"x64": "amd64", "Arm64": "arm64"}


def kube_arch(sku: Sku) -> str:
    return KUBE_ARCH.get(sku.architecture, sku.architecture)


def os_sku(image_family: str) -> str:
    return "AzureLinux" if image_family == "AzureLinux" else "Ubuntu"


def memory_mib(sku: Sku) -> int:
    return int((sku.memory_gib or 0.0) * 1024)


def gpu_count(sku: Sku) -> int:
    """GPUs AKS can schedule: only sizes on its GPU list count."""
    return sku.gpus if vm_sizes.gpu_maker(sku.name) else 0


def requirements_for(
    sku: Sku, size: VMSize, region: str, params: CatalogParams
) -> list[Requirement]:
    """Labels as requirements, minus instance type, zone and capacity type (from offerings)."""

    def one(key: str, value: str | int) -> Requirement:
        return Requirement.create(key, IN, [str(value)])

    def maybe(key: str, values: list[str]) -> Requirement:
        return (
            Requirement.create(key, IN, values)
            if values
            else Requirement.create(key, DOES_NOT_EXIST)
        )

    cpus = sku.vcpus or 0
    maker = vm_sizes.gpu_maker(sku.name)
    ephemeral = sku.ephemeral_os_max_gb()
    version = size.version_label
    reqs = [
        one(L.ARCH, kube_arch(sku)),
        one(L.OS, "linux"),
        one(L.REGION, region),
        one(SKU_NAME, sku.name),
        one(SKU_FAMILY, size.family),
        one(SKU_SERIES, size.series),
        maybe(SKU_VERSION, [version] if version else []),
        one(SKU_CPU, cpus),
        one(SKU_MEMORY, memory_mib(sku)),
        one(AKS_SKU_CPU, cpus),
        one(AKS_SKU_MEMORY, memory_mib(sku)),
        one(SKU_GPU_COUNT, gpu_count(sku)),
        maybe(SKU_GPU_MANUFACTURER, [maker] if maker else []),
        maybe(SKU_GPU_NAME, [size.accelerator] if maker and size.accelerator else []),
        one(SKU_NETWORKING_ACCELERATED, str(sku.accelerated_networking).lower()),
        one(SKU_STORAGE_PREMIUM_CAPABLE, str(sku.premium_io).lower()),
        maybe(SKU_STORAGE_EPHEMERAL_OS_MAX_SIZE, [str(ephemeral)] if ephemeral > 0 else []),
        maybe(SKU_HYPERV_GENERATION, list(sku.hyperv_generations)),
        Requirement.create(AKS_MODE, IN, ["system", "user"]),
        one(AKS_OS_SKU, os_sku(params.image_family)),
        maybe(AKS_FIPS_ENABLED, ["true"] if params.fips else []),
    ]
    if params.cluster_label:
        reqs.append(one(AKS_CLUSTER, params.cluster_label))
    return reqs
