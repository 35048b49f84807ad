"""AMI families: the per-OS facts the catalog and launch need (devices, pod density, SSM paths).

Karpenter gives each family feature flags; we keep only the ones that change numbers here.
"""

from __future__ import annotations

from dataclasses import dataclass

from models.ec2nodeclass import EC2NodeClass

GIB = 2**30

AL2023 = "AL2023"
BOTTLEROCKET = "Bottlerocket"
AL2 = "AL2"
CUSTOM = "Custom"
WINDOWS2019 = "Windows2019"
WINDOWS2022 = "Windows2022"
WINDOWS2025 = "Windows2025"
WINDOWS = (WINDOWS2019, WINDOWS2022, WINDOWS2025)

_ALIAS_FAMILY = {
    "al2023": AL2023,
    "bottlerocket": BOTTLEROCKET,
    "al2": AL2,
    "windows2019": WINDOWS2019,
    "windows2022": WINDOWS2022,
    "windows2025": WINDOWS2025,
}


@dataclass(frozen=True, slots=True)
class AMIFamily:
    name: str
    # The device whose size becomes the node's ephemeral-storage capacity.
    ephemeral_device: str
    default_volume_bytes: int
    # The kubelet's default pod limit follows the ENI formula (the EKS AMIs configure it so).
    eni_limited_pod_density: bool = True
    # The node sizes kube-reserved memory from the ENI-limited pod count even when maxPods or
    # podsPerCore is set: AL2's bootstrap.sh and AL2023's nodeadm both do (and a Custom AMI is
    # taken to be EKS-built), so the catalog must reserve what the node will.
    eni_limited_memory_overhead: bool = False
    pods_per_core_enabled: bool = True
    eviction_soft_enabled: bool = True
    # Windows families: the build their nodes report (node.kubernetes.io/windows-build).
    windows_build: str = ""


FAMILIES = {
    AL2023: AMIFamily(AL2023, "/dev/xvda", 20 * GIB, eni_limited_memory_overhead=True),
    BOTTLEROCKET: AMIFamily(BOTTLEROCKET, "/dev/xvdb", 20 * GIB),
    AL2: AMIFamily(AL2, "/dev/xvda", 20 * GIB, eni_limited_memory_overhead=True),
    CUSTOM: AMIFamily(CUSTOM, "/dev/xvda", 20 * GIB, eni_limited_memory_overhead=True),
    # Windows nodes get a fixed pod limit (the VPC CNI's Windows IPAM), and a 50 GiB C: drive.
    **{
        w: AMIFamily(w, "/dev/sda1", 50 * GIB, eni_limited_pod_density=False, windows_build=b)
        for w, b in zip(WINDOWS, ("10.0.17763", "10.0.20348", "10.0.26100"), strict=True)
    },
}


def family_of(nodeclass: EC2NodeClass | None) -> AMIFamily:
    """The alias decides; else ``spec.amiFamily``; else AL2023 (the Karpenter v1 default)."""
    if nodeclass is None:
        return FAMILIES[AL2023]
    for term in nodeclass.spec.ami_selector_terms:
        if term.alias:
            name = _ALIAS_FAMILY.get(term.alias.split("@", 1)[0])
            if name:
                return FAMILIES[name]
    declared = (nodeclass.spec.ami_family or "").lower()
    for name, fam in FAMILIES.items():
        if name.lower() == declared:
            return fam
    return FAMILIES[AL2023]
