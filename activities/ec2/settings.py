"""Provider-wide settings: what Karpenter takes from flags and environment, as one value."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from models.policies import STRICT

IPV4, IPV6 = "ipv4", "ipv6"
DEFAULT_KUBERNETES_VERSION = "1.31"


@dataclass(frozen=True, slots=True)
class ClusterInfo:
    """What a node needs to join the cluster; written into user data.

    Filled from EKS ``DescribeCluster`` (activities/ec2/cluster.py) unless every field is given
    in settings; ``kubernetes_version`` also selects the AMI an alias resolves to.
    """

    name: str
    endpoint: str = ""
    certificate_authority: str = ""  # base64 PEM bundle, as EKS returns it
    service_cidr: str = "10.100.0.0/16"
    kubernetes_version: str = DEFAULT_KUBERNETES_VERSION
    ip_family: str = IPV4

    @property
    def dns_ip(self) -> str:
        """The cluster DNS service address EKS uses: the service range's tenth address
        (``.10`` for IPv4, ``::a`` for IPv6)."""
        net = ipaddress.ip_network(self.service_cidr, strict=False)
        return str(net.network_address + 10)


@dataclass(frozen=True, slots=True)
class ProviderSettings:
    """Settings shared by every module of the provider.

    ``vm_memory_overhead_percent`` is Karpenter's VM_MEMORY_OVERHEAD_PERCENT (the hypervisor
    keeps part of the advertised memory); ``reserved_enis`` is RESERVED_ENIS (ENIs kept out of
    the pod-density formula). ``cluster`` holds the static facts; with ``discover_cluster``
    the provider asks EKS for the rest and refreshes them every ``cluster_refresh_seconds``.
    """

    region: str
    cluster: ClusterInfo = field(default_factory=lambda: ClusterInfo(name="joinery"))
    vm_memory_overhead_percent: float = 0.075
    reserved_enis: int = 0
    interruption_queue: str | None = None
    isolated_vpc: bool = False
    max_fleet_instance_types: int = 60
    unavailable_offerings_ttl_seconds: float = 180.0
    # How often at most a worker reads the replicas' shared unavailable-offerings record
    # before a launch (activities/ec2/capacity_cache.py): once per launch was a Kubernetes
    # read per launch, a burst's worth against one API server.
    unavailable_offerings_sync_seconds: float = 1.0
    discover_cluster: bool = False
    # Create and reconcile the instance profile of a NodeClass's ``role`` through IAM (the
    # worker does; offline tools leave IAM alone and take ``instanceProfile`` as named).
    manage_instance_profiles: bool = False
    cluster_refresh_seconds: float = 300.0
    # How long a ready EC2NodeClass resolution (subnets, security groups, AMIs) serves
    # launches before AWS is asked again (activities/ec2/nodeclass_cache.py).
    nodeclass_cache_ttl_seconds: float = 60.0
    # Karpenter's MIN_VALUES_POLICY (models.policies): Strict refuses a launch whose types,
    # once narrowed to what is available and to the cheapest ``max_fleet_instance_types``,
    # no longer give a requirement's minValues; BestEffort launches them anyway.
    min_values_policy: str = STRICT

    @property
    def cluster_name(self) -> str:
        return self.cluster.name
