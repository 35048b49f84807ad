"""What the worker's settings tell a provider, whichever cloud: the settings module fills one
``ProviderOptions`` and the registry hands it to the provider chosen (``--provider``)."""

from __future__ import annotations

from dataclasses import dataclass

AWS = "aws"
AZURE = "azure"
PROVIDERS = (AWS, AZURE)


@dataclass(frozen=True)
class ProviderOptions:
    provider: str = AWS
    cluster: str = "joinery"
    region: str = ""
    # An emulator or private endpoint for the cloud's API ("" means the real one); with an
    # endpoint, no public price API is asked.
    endpoint_url: str = ""
    interruption_queue: str = ""
    # The cluster's facts; each one given overrides discovery (EKS DescribeCluster), and
    # discovery is skipped when all are.
    cluster_endpoint: str = ""
    cluster_ca_bundle: str = ""
    service_cidr: str = ""
    kubernetes_version: str = ""
    # EKS_CONTROL_PLANE: None asks the cloud (EKS DescribeCluster) for the facts not given;
    # False never does.
    eks_control_plane: bool | None = None
    # ISOLATED_VPC: no public price API (the offline table serves the prices).
    isolated_vpc: bool = False
    # VM_MEMORY_OVERHEAD_PERCENT and RESERVED_ENIS: what the catalog's capacity keeps back.
    vm_memory_overhead_percent: float = 0.075
    reserved_enis: int = 0
    # AMI_/SUBNET_REFRESH_INTERVAL: how long a node class's resolution is reused (seconds).
    nodeclass_refresh_seconds: float = 60.0
    # Karpenter's MIN_VALUES_POLICY (models.policies): Strict or BestEffort, at launch too.
    min_values_policy: str = "Strict"
    # Azure: the subscription whose resource SKUs and VMs are used.
    subscription_id: str = ""
    # Azure: where and how VMs are made (Karpenter Azure's AZURE_NODE_RESOURCE_GROUP,
    # AZURE_TENANT_ID, AZURE_SUBNET_ID, KUBELET_BOOTSTRAP_TOKEN, KUBELET_IDENTITY_CLIENT_ID,
    # NODE_IDENTITIES, SSH_PUBLIC_KEY); ``azure_ca_file`` trusts an emulator's CA.
    node_resource_group: str = ""
    tenant_id: str = ""
    azure_subnet_id: str = ""
    kubelet_bootstrap_token: str = ""
    kubelet_identity_client_id: str = ""
    node_identities: tuple[str, ...] = ()
    ssh_public_key: str = ""
    azure_ca_file: str = ""
