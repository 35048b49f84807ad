"""A SKU's capacity and the overhead AKS holds back, as Karpenter Azure computes them.

AKS reserves CPU and memory for the kubelet on a sliding scale (a larger share of small
VMs), keeps 750Mi free for eviction, and the hypervisor takes a share of the VM's memory
(``vm_memory_overhead_percent``, 7.5% by default) before the kubelet ever sees it.
"""

from __future__ import annotations

import math

from activities.azure import vm_sizes
from activities.azure.params import CatalogParams
from activities.azure.skus import Sku
from models.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, Resources

GIB = 2**30
MIB = 2**20
EVICTION_MEMORY_AVAILABLE = 750 * MIB

# (upper bound, rate): each bracket's rate applies to the part of the amount inside it.
MEMORY_BRACKETS_GIB = ((4.0, 0.25), (8.0, 0.20), (16.0, 0.10), (128.0, 0.06), (math.inf, 0.02))
CPU_BRACKETS_VCPU = ((1.0, 0.06), (2.0, 0.04), (4.0, 0.02), (math.inf, 0.01))


def bracketed(amount: float, brackets: tuple[tuple[float, float], ...]) -> float:
    total, lower = 0.0, 0.0
    for upper, rate in brackets:
        if lower > amount:
            break
        total += (min(upper, amount) - lower) * rate
        lower = upper
    return total


def kube_reserved(vcpus: int, memory_gib: float) -> tuple[int, int]:
    """(milli-CPU, bytes) the kubelet reserves on a VM of this size."""
    cpu_milli = int(1000 * bracketed(float(vcpus), CPU_BRACKETS_VCPU))
    memory_mi = int(1024 * bracketed(memory_gib, MEMORY_BRACKETS_GIB))
    return cpu_milli, memory_mi * MIB


def vm_memory(memory_gib: float, overhead_percent: float) -> int:
    """Bytes the node sees: whole GiB of the SKU less the hypervisor's share."""
    total = int(memory_gib) * GIB
    return total - math.ceil(total * overhead_percent)


def capacity_and_overhead(sku: Sku, params: CatalogParams) -> tuple[Resources, Resources]:
    """Milli-unit resource lists (the solver's units): capacity, and kube-reserved + eviction."""
    vcpus = sku.vcpus or 0
    memory_gib = sku.memory_gib or 0.0
    capacity: Resources = {
        CPU: vcpus * 1000,
        MEMORY: vm_memory(memory_gib, params.vm_memory_overhead_percent) * 1000,
        EPHEMERAL_STORAGE: params.os_disk_size_gb * 10**9 * 1000,
        PODS: params.max_pods * 1000,
    }
    maker = vm_sizes.gpu_maker(sku.name)
    if maker and sku.gpus > 0:
        capacity["nvidia.com/gpu" if maker == "nvidia" else "amd.com/gpu"] = sku.gpus * 1000
    cpu_reserved, memory_reserved = kube_reserved(vcpus, memory_gib)
    overhead: Resources = {
        CPU: cpu_reserved,
        MEMORY: (memory_reserved + EVICTION_MEMORY_AVAILABLE) * 1000,
    }
    return capacity, overhead
