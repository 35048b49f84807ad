"""Karpenter's formulas for what an instance type offers and what the node keeps for itself.

All functions are pure over one DescribeInstanceTypes entry (a boto3 dict) and return
resources in milli-units (models.resources), so the catalog is testable without AWS.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

from activities.ec2.families import AMIFamily
from models.ec2nodeclass import BlockDeviceMapping, KubeletConfiguration
from models.quantity import parse_quantity
from models.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, Resources

MIB = 2**20
GIB = 2**30
NVIDIA_GPU = "nvidia.com/gpu"
AMD_GPU = "amd.com/gpu"
AWS_NEURON = "aws.amazon.com/neuron"
AWS_NEURON_CORE = "aws.amazon.com/neuroncore"
HABANA_GAUDI = "habana.ai/gaudi"
EFA = "vpc.amazonaws.com/efa"
# What the VPC resource controller advertises: branch interfaces for security groups for pods,
# and (on Windows nodes) the secondary IPv4 addresses Windows pods take.
POD_ENI = "vpc.amazonaws.com/pod-eni"
PRIVATE_IPV4_ADDRESS = "vpc.amazonaws.com/PrivateIPv4Address"
MEMORY_AVAILABLE = "memory.available"
NODEFS_AVAILABLE = "nodefs.available"
DEFAULT_PODS = 110
# Karpenter's kube-reserved CPU steps (from the EKS AMIs): share of each range of millicores.
_CPU_RESERVED_STEPS = (
    (0, 1000, 0.06),
    (1000, 2000, 0.01),
    (2000, 4000, 0.005),
    (4000, 1 << 31, 0.0025),
)
# DescribeInstanceTypes lacks accelerator data for the first Trainium types.
_TRAINIUM_NEURONS = {"trn1.2xlarge": 1, "trn1.32xlarge": 16, "trn1n.32xlarge": 16}


def vcpus(info: Mapping[str, Any]) -> int:
    return int(info["VCpuInfo"]["DefaultVCpus"])


def architecture(info: Mapping[str, Any]) -> str:
    archs = info.get("ProcessorInfo", {}).get("SupportedArchitectures", [])
    return archs[0] if archs else ""


def memory_mib(info: Mapping[str, Any], vm_overhead_percent: float) -> int:
    """Advertised memory less the hypervisor's share (and Graviton's 64 MiB CMA reservation)."""
    size = int(info["MemoryInfo"]["SizeInMiB"])
    if architecture(info) == "arm64":
        size -= 64
    return size - math.ceil(size * vm_overhead_percent)


def eni_limited_pods(info: Mapping[str, Any], reserved_enis: int = 0) -> int:
    """ENIs x (IPv4 per ENI - 1) + 2, the VPC CNI limit; only the default network card counts."""
    net = info.get("NetworkInfo", {})
    cards = net.get("NetworkCards") or []
    index = int(net.get("DefaultNetworkCardIndex", 0) or 0)
    card = next((c for c in cards if int(c.get("NetworkCardIndex", -1)) == index), None)
    enis = (
        int(card["MaximumNetworkInterfaces"])
        if card
        else int(net.get("MaximumNetworkInterfaces", 0))
    )
    usable = max(enis - reserved_enis, 0)
    if usable == 0:
        return 0
    return usable * (int(net.get("Ipv4AddressesPerInterface", 1)) - 1) + 2


def max_pods(
    info: Mapping[str, Any],
    family: AMIFamily,
    kubelet: KubeletConfiguration | None,
    reserved_enis: int,
) -> int:
    if kubelet is not None and kubelet.max_pods is not None:
        count = kubelet.max_pods
    elif family.eni_limited_pod_density:
        count = eni_limited_pods(info, reserved_enis)
    else:
        count = DEFAULT_PODS
    if kubelet is not None and kubelet.pods_per_core and family.pods_per_core_enabled:
        count = min(count, kubelet.pods_per_core * vcpus(info))
    return count


def ephemeral_storage_bytes(
    info: Mapping[str, Any],
    family: AMIFamily,
    block_device_mappings: list[BlockDeviceMapping],
    instance_store_policy: str | None,
) -> int:
    """RAID0 instance store if asked; else the root (or family ephemeral) volume; else default."""
    if instance_store_policy == "RAID0":
        total_gb = info.get("InstanceStorageInfo", {}).get("TotalSizeInGB")
        if total_gb:
            return int(total_gb) * 10**9
    for wanted in (
        lambda m: m.root_volume,
        lambda m: m.device_name == family.ephemeral_device,
    ):
        for mapping in block_device_mappings:
            if wanted(mapping) and mapping.ebs and mapping.ebs.volume_size:
                return parse_quantity(mapping.ebs.volume_size) // 1000
    return family.default_volume_bytes


def _gpu_count(info: Mapping[str, Any], manufacturer: str) -> int:
    gpus = (info.get("GpuInfo") or {}).get("Gpus") or []
    return sum(int(g.get("Count", 0)) for g in gpus if g.get("Manufacturer") == manufacturer)


def neuron_count(info: Mapping[str, Any]) -> int:
    name = str(info["InstanceType"])
    if name in _TRAINIUM_NEURONS:
        return _TRAINIUM_NEURONS[name]
    neuron = info.get("NeuronInfo") or {}
    if neuron.get("NeuronDevices"):
        return sum(int(d.get("Count", 0)) for d in neuron["NeuronDevices"])
    accel = (info.get("InferenceAcceleratorInfo") or {}).get("Accelerators") or []
    return sum(int(a.get("Count", 0)) for a in accel if a.get("Manufacturer") == "AWS")


def neuron_core_count(info: Mapping[str, Any]) -> int:
    """Neuron cores: the devices times the cores of each (the first device's, as Karpenter)."""
    devices = (info.get("NeuronInfo") or {}).get("NeuronDevices") or []
    if not devices:
        return 0
    first = devices[0]
    per_device = int((first.get("CoreInfo") or {}).get("Count", 0))
    return int(first.get("Count", 0)) * per_device


@cache
def branch_interfaces() -> dict[str, int]:
    """Instance type → branch interfaces (pod-eni); DescribeInstanceTypes does not say them,
    so they come from the package data (activities/ec2/data/vpc-branch-interfaces.json)."""
    text = resources.files("activities.ec2").joinpath("data/vpc-branch-interfaces.json")
    raw = json.loads(text.read_text())
    return {str(k): int(v) for k, v in raw["branch_interfaces"].items()}


def extended_resources(info: Mapping[str, Any]) -> Resources:
    """GPUs, Neuron devices and cores, EFA and branch interfaces as device plugins and the
    VPC resource controller advertise them (non-zero)."""
    efa = (info.get("NetworkInfo", {}).get("EfaInfo") or {}).get("MaximumEfaInterfaces", 0)
    counts = {
        NVIDIA_GPU: _gpu_count(info, "NVIDIA"),
        AMD_GPU: _gpu_count(info, "AMD"),
        HABANA_GAUDI: _gpu_count(info, "Habana"),
        AWS_NEURON: neuron_count(info),
        AWS_NEURON_CORE: neuron_core_count(info),
        EFA: int(efa or 0),
        POD_ENI: branch_interfaces().get(str(info["InstanceType"]), 0),
    }
    return {k: v * 1000 for k, v in counts.items() if v > 0}


def private_ipv4_addresses(info: Mapping[str, Any]) -> int:
    """The secondary IPv4 addresses of the primary interface: what a Windows node offers its
    pods (the VPC resource controller's count, one address kept for the node)."""
    per_interface = int((info.get("NetworkInfo") or {}).get("Ipv4AddressesPerInterface", 0) or 0)
    return max(per_interface - 1, 0)


def kube_reserved(cpu_milli: int, pods: int, kubelet: KubeletConfiguration | None) -> Resources:
    """CPU by Karpenter's steps, memory 11 MiB per pod + 255 MiB, 1 GiB disk; overrides win."""
    cpu = 0
    for start, end, share in _CPU_RESERVED_STEPS:
        if cpu_milli >= start:
            cpu += int((min(cpu_milli, end) - start) * share)
    out: Resources = {
        CPU: int(cpu),  # already millicores
        MEMORY: (11 * pods + 255) * MIB * 1000,
        EPHEMERAL_STORAGE: GIB * 1000,
    }
    if kubelet is not None and kubelet.kube_reserved:
        out.update({k: parse_quantity(v) for k, v in kubelet.kube_reserved.items()})
    return out


def system_reserved(kubelet: KubeletConfiguration | None) -> Resources:
    if kubelet is None or not kubelet.system_reserved:
        return {}
    return {k: parse_quantity(v) for k, v in kubelet.system_reserved.items()}


def _signal(capacity_milli: int, value: str) -> int:
    """An eviction signal as milli-units: a percentage of capacity (100% disables) or a quantity."""
    if value.endswith("%"):
        pct = float(value[:-1])
        if pct == 100:
            pct = 0
        return math.ceil(capacity_milli / 1000 / 100 * pct) * 1000
    return parse_quantity(value)


def eviction_threshold(
    memory_milli: int, storage_milli: int, family: AMIFamily, kubelet: KubeletConfiguration | None
) -> Resources:
    """100Mi memory and 10% of the disk, unless evictionHard/Soft say otherwise (max of both)."""
    out: Resources = {
        MEMORY: 100 * MIB * 1000,
        EPHEMERAL_STORAGE: math.ceil(storage_milli / 1000 / 100 * 10) * 1000,
    }
    signals: list[dict[str, str]] = []
    if kubelet is not None and kubelet.eviction_hard:
        signals.append(kubelet.eviction_hard)
    if kubelet is not None and kubelet.eviction_soft and family.eviction_soft_enabled:
        signals.append(kubelet.eviction_soft)
    override: Resources = {}
    for sig in signals:
        if MEMORY_AVAILABLE in sig:
            v = _signal(memory_milli, sig[MEMORY_AVAILABLE])
            override[MEMORY] = max(override.get(MEMORY, 0), v)
        if NODEFS_AVAILABLE in sig:
            v = _signal(storage_milli, sig[NODEFS_AVAILABLE])
            override[EPHEMERAL_STORAGE] = max(override.get(EPHEMERAL_STORAGE, 0), v)
    out.update(override)
    return out


def capacity_and_overhead(
    info: Mapping[str, Any],
    family: AMIFamily,
    kubelet: KubeletConfiguration | None,
    block_device_mappings: list[BlockDeviceMapping],
    instance_store_policy: str | None,
    vm_overhead_percent: float,
    reserved_enis: int,
) -> tuple[Resources, Resources]:
    """(capacity, overhead) where overhead = kube-reserved + system-reserved + eviction."""
    cpu = vcpus(info) * 1000
    memory = memory_mib(info, vm_overhead_percent) * MIB * 1000
    storage = (
        ephemeral_storage_bytes(info, family, block_device_mappings, instance_store_policy) * 1000
    )
    pods = max_pods(info, family, kubelet, reserved_enis)
    capacity: Resources = {CPU: cpu, MEMORY: memory, EPHEMERAL_STORAGE: storage, PODS: pods * 1000}
    capacity.update(extended_resources(info))
    if family.windows_build:
        capacity[PRIVATE_IPV4_ADDRESS] = private_ipv4_addresses(info) * 1000
    reserved_pods = (
        eni_limited_pods(info, reserved_enis) if family.eni_limited_memory_overhead else pods
    )
    overhead: Resources = {}
    for part in (
        kube_reserved(cpu, reserved_pods, kubelet),
        system_reserved(kubelet),
        eviction_threshold(memory, storage, family, kubelet),
    ):
        for k, v in part.items():
            overhead[k] = overhead.get(k, 0) + v
    return capacity, overhead
