"""The labels an instance type carries, as requirements the solver can match pods against.

Every AWS label the type lacks is stated as DoesNotExist (as Karpenter does), so a pod that
requires, say, ``karpenter.k8s.aws/instance-gpu-count`` never lands on a type without GPUs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from activities.ec2.capacity import architecture, neuron_count, vcpus
from models import labels as L
from models.requirements import DOES_NOT_EXIST, IN, Requirement

P = L.AWS_LABEL_PREFIX
# Labels a launched node gets from where it was launched, not from its type (Karpenter's).
ZONE_ID = "topology.k8s.aws/zone-id"
NODECLASS = P + "ec2nodeclass"
TENANCY = P + "instance-tenancy"
TENANCY_DEFAULT = "default"  # shared hardware: the only tenancy Joinery launches
PLACEMENT_GROUP_ID = P + "placement-group-id"
PLACEMENT_GROUP_PARTITION = P + "placement-group-partition"
CATEGORY, FAMILY, GENERATION, SIZE = (
    P + "instance-category",
    P + "instance-family",
    P + "instance-generation",
    P + "instance-size",
)
CPU, CPU_MANUFACTURER, CPU_CLOCK = (
    P + "instance-cpu",
    P + "instance-cpu-manufacturer",
    P + "instance-cpu-sustained-clock-speed-mhz",
)
MEMORY, EBS_BANDWIDTH, NETWORK_BANDWIDTH = (
    P + "instance-memory",
    P + "instance-ebs-bandwidth",
    P + "instance-network-bandwidth",
)
GPU_NAME, GPU_MANUFACTURER, GPU_COUNT, GPU_MEMORY = (
    P + "instance-gpu-name",
    P + "instance-gpu-manufacturer",
    P + "instance-gpu-count",
    P + "instance-gpu-memory",
)
ACCEL_NAME, ACCEL_MANUFACTURER, ACCEL_COUNT = (
    P + "instance-accelerator-name",
    P + "instance-accelerator-manufacturer",
    P + "instance-accelerator-count",
)
HYPERVISOR, ENCRYPTION_IN_TRANSIT, LOCAL_NVME, CAPABILITY_FLEX = (
    P + "instance-hypervisor",
    P + "instance-encryption-in-transit-supported",
    P + "instance-local-nvme",
    P + "instance-capability-flex",
)

# Optional labels: present with a value, or DoesNotExist.
_OPTIONAL = (
    CATEGORY,
    FAMILY,
    GENERATION,
    SIZE,
    CPU_MANUFACTURER,
    CPU_CLOCK,
    EBS_BANDWIDTH,
    NETWORK_BANDWIDTH,
    GPU_NAME,
    GPU_MANUFACTURER,
    GPU_COUNT,
    GPU_MEMORY,
    ACCEL_NAME,
    ACCEL_MANUFACTURER,
    ACCEL_COUNT,
    LOCAL_NVME,
)
# ``c6gn`` → category c, generation 6; ``u-6tb1`` → category u, generation 1.
_SCHEME = re.compile(r"^([a-z]+)(-[0-9]+tb)?([0-9]+).*\.")
KUBE_ARCH = {"x86_64": "amd64", "arm64": "arm64"}


def kebab(value: str) -> str:
    return value.lower().replace(" ", "-")


def label_values(info: Mapping[str, Any]) -> dict[str, str]:
    """The single-valued AWS labels of a type (absent keys have no such property)."""
    name = str(info["InstanceType"])
    out: dict[str, str] = {
        CPU: str(vcpus(info)),
        MEMORY: str(int(info["MemoryInfo"]["SizeInMiB"])),
        HYPERVISOR: str(info.get("Hypervisor", "") or ""),
        ENCRYPTION_IN_TRANSIT: str(
            bool(info.get("NetworkInfo", {}).get("EncryptionInTransitSupported"))
        ).lower(),
        CAPABILITY_FLEX: str("flex" in name).lower(),
    }
    match = _SCHEME.match(name)
    if match:
        out[CATEGORY] = match.group(1)
        out[GENERATION] = match.group(3)
    if name.count(".") == 1:
        out[FAMILY], out[SIZE] = name.split(".")
    storage = info.get("InstanceStorageInfo") or {}
    if storage and storage.get("NvmeSupport", "unsupported") != "unsupported":
        out[LOCAL_NVME] = str(int(storage.get("TotalSizeInGB", 0)))
    cards = info.get("NetworkInfo", {}).get("NetworkCards") or []
    baseline = sum(float(c.get("BaselineBandwidthInGbps", 0) or 0) for c in cards)
    if baseline > 0:
        out[NETWORK_BANDWIDTH] = str(round(baseline * 1000))
    gpus = (info.get("GpuInfo") or {}).get("Gpus") or []
    if len(gpus) == 1:
        gpu = gpus[0]
        out[GPU_NAME] = kebab(str(gpu.get("Name", "")))
        out[GPU_MANUFACTURER] = kebab(str(gpu.get("Manufacturer", "")))
        out[GPU_COUNT] = str(int(gpu.get("Count", 0)))
        out[GPU_MEMORY] = str(int(gpu.get("MemoryInfo", {}).get("SizeInMiB", 0)))
    accels = (info.get("InferenceAcceleratorInfo") or {}).get("Accelerators") or []
    neurons = (info.get("NeuronInfo") or {}).get("NeuronDevices") or []
    if len(accels) == 1:
        out[ACCEL_NAME] = kebab(str(accels[0].get("Name", "")))
        out[ACCEL_MANUFACTURER] = kebab(str(accels[0].get("Manufacturer", "")))
        out[ACCEL_COUNT] = str(int(accels[0].get("Count", 0)))
    elif len(neurons) == 1 or name.startswith("trn1"):
        out[ACCEL_NAME] = kebab(
            str(neurons[0].get("Name", "inferentia")) if neurons else "inferentia"
        )
        out[ACCEL_MANUFACTURER] = "aws"
        out[ACCEL_COUNT] = str(neuron_count(info))
    processor = info.get("ProcessorInfo") or {}
    if processor.get("Manufacturer"):
        out[CPU_MANUFACTURER] = kebab(str(processor["Manufacturer"]))
    if processor.get("SustainedClockSpeedInGhz"):
        out[CPU_CLOCK] = str(round(float(processor["SustainedClockSpeedInGhz"]) * 1000))
    ebs = info.get("EbsInfo") or {}
    if ebs.get("EbsOptimizedSupport") == "default" and ebs.get("EbsOptimizedInfo"):
        out[EBS_BANDWIDTH] = str(int(ebs["EbsOptimizedInfo"]["MaximumBandwidthInMbps"]))
    return out


def requirements_for(
    info: Mapping[str, Any], region: str, os: str = "linux", windows_build: str = ""
) -> list[Requirement]:
    """Labels as requirements, minus zone and capacity type (those come from the offerings)."""
    values = label_values(info)
    reqs = [
        Requirement.create(L.ARCH, IN, [KUBE_ARCH.get(architecture(info), architecture(info))]),
        Requirement.create(L.OS, IN, [os]),
        Requirement.create(L.REGION, IN, [region]),
        Requirement.create(L.WINDOWS_BUILD, IN, [windows_build])
        if windows_build
        else Requirement.create(L.WINDOWS_BUILD, DOES_NOT_EXIST),
    ]
    for key, value in values.items():
        reqs.append(Requirement.create(key, IN, [value]))
    for key in _OPTIONAL:
        if key not in values:
            reqs.append(Requirement.create(key, DOES_NOT_EXIST))
    return reqs
