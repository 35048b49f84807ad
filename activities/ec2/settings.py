"""Provider-wide settings: what Karpenter takes from flags and environment, as one value."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class ClusterInfo:
    """What a node needs to join the cluster; written into user data."""

    name: str
    endpoint: str = ""
    certificate_authority: str = ""
    service_cidr: str = "10.100.0.0/16"


@dataclass(frozen=True, slots=True)
class ProviderSettings:
    """Settings shared by every module of the provider.

    ``vm_memory_overhead_percent`` is Karpenter's VM_MEMORY_OVERHEAD_PERCENT (the hypervisor
    keeps part of the advertised memory); ``reserved_enis`` is RESERVED_ENIS (ENIs kept out of
    the pod-density formula); ``kubernetes_version`` selects the EKS AMI SSM parameters.
    """

    region: str
    cluster: ClusterInfo = field(default_factory=lambda: ClusterInfo(name="joinery"))
    kubernetes_version: str = "1.31"
    vm_memory_overhead_percent: float = 0.075
    reserved_enis: int = 0
    interruption_queue: str | None = None
    isolated_vpc: bool = False
    max_fleet_instance_types: int = 60
    unavailable_offerings_ttl_seconds: float = 180.0

    @property
    def cluster_name(self) -> str:
        return self.cluster.name
