"""The Node a simulated kubelet on an emulated Azure VM registers.

As on EC2 (``sandbox.nodes.node_for``) the Node carries the claim's labels, taints and
capacity; on Azure it registers only while its VM runs in the emulator (a VM still being
created, deallocated, evicted or deleted registers nothing), and what the VM's custom data
tells its kubelet (``sandbox.azure.node_join``: node labels, registration taints, max pods,
the kubelet's version) wins, so a node joins as the bootstrap made it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sandbox.azure.node_join import BadCustomData, read_custom_data
from sandbox.azure.server import AzureEmulator
from sandbox.nodes import NodeFor, Obj, node_for

PROVIDER_ID_PREFIX = "azure://"


def vm_node_maker(emulator: AzureEmulator) -> NodeFor:
    """``NodeSimulator(make_node=...)`` for claims launched on the emulated Azure."""

    def make(claim: Mapping[str, Any]) -> Obj | None:
        provider_id = str((claim.get("status") or {}).get("providerID") or "")
        if not provider_id.startswith(PROVIDER_ID_PREFIX):
            return node_for(claim)
        vm_id = provider_id[len(PROVIDER_ID_PREFIX) :]
        if not emulator.vms.is_running(vm_id):
            return None
        node = node_for(claim)
        custom = emulator.vms.custom_data.get(vm_id.lower())
        if not custom:
            return node
        try:
            join = read_custom_data(custom)
        except BadCustomData:
            return None  # a node that cannot bootstrap never joins
        node["metadata"]["labels"].update(join.labels)
        node["spec"]["taints"] = list(join.taints)
        node["status"]["capacity"]["pods"] = str(join.max_pods)
        node["status"]["allocatable"]["pods"] = str(join.max_pods)
        if join.kubernetes_version:
            node["status"]["nodeInfo"] = {"kubeletVersion": join.kubelet_version}
        return node

    return make
