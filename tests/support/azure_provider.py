"""An Azure provider with VMs against the emulator, its SDK clients tuned for tests (short
polls and backoff, few retries), and the resource group and subnet it launches into; with an
``Authorizer``, each of its requests goes through emulated RBAC first."""

from __future__ import annotations

import base64
from typing import Any

from activities.azure.clients import compute_client, network_client
from activities.azure.nodeclasses import resolver_for
from activities.azure.pricing import AzurePricing
from activities.azure.provider import AzureProvider
from activities.cloud.options import ProviderOptions
from sandbox.azure.authorization import Authorizer, EnforcingTransport
from sandbox.azure.credential import FakeCredential
from sandbox.azure.server import AzureServer

SUBSCRIPTION = "00000000-0000-0000-0000-000000000000"
RG = "MC_rg_joinery_eastus"
SUBNET = (
    f"/subscriptions/{SUBSCRIPTION}/resourceGroups/rg/providers/Microsoft.Network"
    "/virtualNetworks/aks-vnet/subnets/aks-subnet"
)
CA = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
KUBELET_IDENTITY = (
    "/subscriptions/s/resourceGroups/rg/providers/Microsoft.ManagedIdentity"
    "/userAssignedIdentities/kubelet"
)


def azure_provider(
    azure: AzureServer,
    *,
    authorizer: Authorizer | None = None,
    node_identity: str = KUBELET_IDENTITY,
) -> AzureProvider:
    """A provider whose VMs go to ``RG`` (seeded, with ``SUBNET``) in the emulator, with
    ``node_identity`` as their kubelet identity; with ``authorizer``, each client sends its
    requests through an ``EnforcingTransport`` asking it."""
    azure.emulator.arm.add_resource_group(SUBSCRIPTION, RG, "eastus")
    azure.emulator.arm.add_subnet(SUBNET)

    def client_kwargs() -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "endpoint": azure.endpoint,
            "credential": FakeCredential(),
            "ca_file": azure.ca_file,
            "retry_backoff_factor": 0.05,
            "retry_total": 2,
            "polling_interval": 0.05,
            "read_timeout": 1,
        }
        if authorizer is not None:
            kwargs["transport"] = EnforcingTransport(authorizer, connection_verify=azure.ca_file)
        return kwargs

    compute = compute_client(SUBSCRIPTION, **client_kwargs())
    network = network_client(SUBSCRIPTION, **client_kwargs())
    opts = ProviderOptions(
        provider="azure",
        cluster="joinery",
        region="eastus",
        subscription_id=SUBSCRIPTION,
        cluster_endpoint="https://joinery.hcp.eastus.azmk8s.io:443",
        cluster_ca_bundle=CA.decode(),
        kubernetes_version="1.33.0",
        node_resource_group=RG,
        tenant_id="11111111-1111-1111-1111-111111111111",
        kubelet_bootstrap_token="abcdef.0123456789abcdef",
        node_identities=(node_identity,),
    )
    provider = AzureProvider(
        "eastus",
        compute,
        AzurePricing("eastus", fetch=None),
        nodeclasses=resolver_for(opts, compute, network=network),
    )
    provider.attach_machines(opts, network)
    assert provider.machines is not None
    provider.machines.vms.delete_wait_seconds = 2.0
    return provider
