"""What shapes an Azure catalog besides the SKUs: the node class and cluster settings.

Karpenter Azure builds one catalog per distinct set of these; so does Joinery.
"""

from __future__ import annotations

from dataclasses import dataclass

from models.aksnodeclass import DEFAULT_OS_DISK_SIZE_GB, AKSNodeClass

# Network plugins and their default max pods per node, as AKS sets them.
AZURE = "azure"
KUBENET = "kubenet"
NONE = "none"
OVERLAY = "overlay"
NODE_SUBNET_MAX_PODS = 30  # azure CNI, pods take subnet IPs
OVERLAY_MAX_PODS = 250
NO_PLUGIN_MAX_PODS = 250  # bring-your-own CNI
KUBERNETES_MAX_PODS = 110  # kubenet and anything else

DEFAULT_VM_MEMORY_OVERHEAD_PERCENT = 0.075


def default_max_pods(network_plugin: str, network_plugin_mode: str) -> int:
    if network_plugin == NONE:
        return NO_PLUGIN_MAX_PODS
    if network_plugin == AZURE and network_plugin_mode == OVERLAY:
        return OVERLAY_MAX_PODS
    if network_plugin == AZURE and network_plugin_mode == "":
        return NODE_SUBNET_MAX_PODS
    return KUBERNETES_MAX_PODS


@dataclass(frozen=True, slots=True)
class CatalogParams:
    image_family: str = "Ubuntu"
    os_disk_size_gb: int = DEFAULT_OS_DISK_SIZE_GB
    max_pods: int = OVERLAY_MAX_PODS
    encryption_at_host: bool = False
    trusted_launch: bool = False
    gpu_mode: str = "Driver"
    artifact_streaming: bool = False
    fips: bool = False
    local_dns: bool = False
    vm_memory_overhead_percent: float = DEFAULT_VM_MEMORY_OVERHEAD_PERCENT
    cluster_label: str | None = None  # kubernetes.azure.com/cluster (the node resource group)

    @staticmethod
    def for_node_class(
        nodeclass: AKSNodeClass | None,
        *,
        network_plugin: str = AZURE,
        network_plugin_mode: str = OVERLAY,
        vm_memory_overhead_percent: float = DEFAULT_VM_MEMORY_OVERHEAD_PERCENT,
        node_resource_group: str | None = None,
    ) -> CatalogParams:
        """The parameters a node class (or the defaults, without one) gives the catalog."""
        max_pods = default_max_pods(network_plugin, network_plugin_mode)
        cluster = cluster_label(node_resource_group) if node_resource_group else None
        if nodeclass is None:
            return CatalogParams(
                max_pods=max_pods,
                vm_memory_overhead_percent=vm_memory_overhead_percent,
                cluster_label=cluster,
            )
        spec = nodeclass.spec
        return CatalogParams(
            image_family=spec.image_family,
            os_disk_size_gb=spec.os_disk_size_gb,
            max_pods=spec.max_pods if spec.max_pods is not None else max_pods,
            encryption_at_host=spec.encryption_at_host,
            trusted_launch=spec.trusted_launch_enabled,
            gpu_mode=spec.gpu_mode,
            artifact_streaming=spec.artifact_streaming_enabled,
            fips=spec.fips_mode == "FIPS",
            local_dns=nodeclass.local_dns_enabled,
            vm_memory_overhead_percent=vm_memory_overhead_percent,
            cluster_label=cluster,
        )


def cluster_label(node_resource_group: str) -> str:
    """AKS's cluster label from the node resource group: parentheses become dashes, cut to a
    label's 63 characters, and a trailing ``-_.`` (not allowed at a label's end) becomes z."""
    value = node_resource_group.replace("(", "-").replace(")", "-")[:63]
    if value.endswith(("-", "_", ".")):
        return value[:62] + "z" if len(value) > 62 else value + "z"
    return value
