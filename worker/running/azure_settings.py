"""The Azure provider's settings, under Karpenter Azure's environment names.

Karpenter Azure reads these from its environment (its Helm chart sets them); so does the
worker with ``--provider azure``: the subscription and node resource group the VMs go into,
the tenant, the cluster's default subnet, the kubelet's bootstrap token or identity, the
VMs' user-assigned identities and SSH key. ``AZURE_ENDPOINT_URL`` and ``AZURE_CA_FILE`` point
the SDKs at an emulator (the sandbox's).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

REQUIRED = ("AZURE_SUBSCRIPTION_ID", "AZURE_NODE_RESOURCE_GROUP")
# environment name -> ProviderOptions field
FIELDS = {
    "AZURE_SUBSCRIPTION_ID": "subscription_id",
    "AZURE_NODE_RESOURCE_GROUP": "node_resource_group",
    "AZURE_TENANT_ID": "tenant_id",
    "AZURE_SUBNET_ID": "azure_subnet_id",
    "KUBELET_BOOTSTRAP_TOKEN": "kubelet_bootstrap_token",
    "KUBELET_IDENTITY_CLIENT_ID": "kubelet_identity_client_id",
    "SSH_PUBLIC_KEY": "ssh_public_key",
    "AZURE_ENDPOINT_URL": "endpoint_url",
    "AZURE_CA_FILE": "azure_ca_file",
}


def missing(env: Mapping[str, str]) -> list[str]:
    """The settings a worker on Azure cannot run without, of those ``env`` lacks."""
    return [name for name in REQUIRED if not env.get(name)]


def provider_fields(env: Mapping[str, str]) -> dict[str, Any]:
    """The ``ProviderOptions`` fields ``env`` gives (unset names are left out)."""
    out: dict[str, Any] = {field: env[name] for name, field in FIELDS.items() if env.get(name)}
    identities = [i.strip() for i in env.get("NODE_IDENTITIES", "").split(",") if i.strip()]
    if identities:
        out["node_identities"] = tuple(identities)
    return out
