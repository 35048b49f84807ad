"""The AKS cluster's facts the worker reads on ``--provider azure``, under Karpenter Azure's
environment names: what the Helm chart's ``azure.*`` values render (deploy/helm/joinery) and
what a Karpenter Azure values file's ``controller.env`` already carries, so either works.

Only reading lives here; ``activities.cloud.options.ProviderOptions`` is where the provider
gets them. ``AZURE_TENANT_ID`` (and the client id and token file the SDK's credential reads)
come from AKS's workload identity webhook, not from the chart.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

# field -> Karpenter Azure's environment variable
ENV_NAMES = {
    "subscription_id": "AZURE_SUBSCRIPTION_ID",
    "tenant_id": "AZURE_TENANT_ID",
    "location": "LOCATION",
    "resource_group": "ARM_RESOURCE_GROUP",
    "node_resource_group": "AZURE_NODE_RESOURCE_GROUP",
    "vnet_subnet_id": "VNET_SUBNET_ID",
    "network_plugin": "NETWORK_PLUGIN",
    "network_plugin_mode": "NETWORK_PLUGIN_MODE",
    "network_policy": "NETWORK_POLICY",
    "network_dataplane": "NETWORK_DATAPLANE",
    "node_identities": "NODE_IDENTITIES",
    "kubelet_identity_client_id": "KUBELET_IDENTITY_CLIENT_ID",
    "ssh_public_key": "SSH_PUBLIC_KEY",
    "bootstrap_token": "KUBELET_BOOTSTRAP_TOKEN",
}
# Without these no VM can be placed: the worker names the first one missing and stops.
REQUIRED = ("subscription_id", "location", "node_resource_group")


@dataclass(frozen=True)
class AzureEnvironment:
    subscription_id: str = ""
    tenant_id: str = ""
    location: str = ""
    resource_group: str = ""  # the cluster's own group
    node_resource_group: str = ""  # AKS's MC_ group, where the VMs go
    vnet_subnet_id: str = ""  # the default node subnet
    network_plugin: str = ""
    network_plugin_mode: str = ""
    network_policy: str = ""
    network_dataplane: str = ""
    node_identities: tuple[str, ...] = ()  # the kubelet identity's resource id(s)
    kubelet_identity_client_id: str = ""
    ssh_public_key: str = ""
    bootstrap_token: str = ""  # <token-id>.<token-secret>

    def missing(self) -> list[str]:
        """One line per required fact not given, naming its variable."""
        return [
            f"--provider azure: {ENV_NAMES[name]} is not set ({name.replace('_', ' ')})"
            for name in REQUIRED
            if not getattr(self, name)
        ]


def read(environ: Mapping[str, str] | None = None) -> AzureEnvironment:
    """The facts from ``environ`` (the process environment by default); values are stripped,
    ``NODE_IDENTITIES`` is comma-separated as in Karpenter Azure."""
    env = os.environ if environ is None else environ

    def get(name: str) -> str:
        return env.get(ENV_NAMES[name], "").strip()

    identities = tuple(i.strip() for i in get("node_identities").split(",") if i.strip())
    return AzureEnvironment(
        subscription_id=get("subscription_id"),
        tenant_id=get("tenant_id"),
        location=get("location"),
        resource_group=get("resource_group"),
        node_resource_group=get("node_resource_group"),
        vnet_subnet_id=get("vnet_subnet_id"),
        network_plugin=get("network_plugin"),
        network_plugin_mode=get("network_plugin_mode"),
        network_policy=get("network_policy"),
        network_dataplane=get("network_dataplane"),
        node_identities=identities,
        kubelet_identity_client_id=get("kubelet_identity_client_id"),
        ssh_public_key=get("ssh_public_key"),
        bootstrap_token=get("bootstrap_token"),
    )
