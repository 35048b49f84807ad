"""What a worker run with ``--provider azure`` against the emulator needs in its
environment: the emulator's endpoint and CA, a token for it, and where VMs go."""

from __future__ import annotations

from activities.azure.clients import TOKEN_ENV
from sandbox.azure.credential import FAKE_TOKEN
from sandbox.azure.server import AzureServer


def worker_env(
    server: AzureServer,
    *,
    subscription: str,
    node_resource_group: str,
    subnet_id: str,
    tenant_id: str = "00000000-0000-0000-0000-00000000abcd",
    bootstrap_token: str = "abcdef.0123456789abcdef",
    location: str = "eastus",
) -> dict[str, str]:
    """Environment variables for the worker (``worker.running.azure_settings`` reads them);
    the resource group and subnet are seeded into the emulator here."""
    server.emulator.arm.add_resource_group(subscription, node_resource_group, location)
    server.emulator.arm.add_subnet(subnet_id)
    return {
        "AZURE_SUBSCRIPTION_ID": subscription,
        "AZURE_NODE_RESOURCE_GROUP": node_resource_group,
        "AZURE_SUBNET_ID": subnet_id,
        "AZURE_TENANT_ID": tenant_id,
        "KUBELET_BOOTSTRAP_TOKEN": bootstrap_token,
        "AZURE_ENDPOINT_URL": server.endpoint,
        "AZURE_CA_FILE": server.ca_file,
        TOKEN_ENV: FAKE_TOKEN,
    }
