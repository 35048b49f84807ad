"""The emulated Azure behind ``joinery dev --provider azure``: what the EC2 emulator is to the
default stack.

:class:`AzureDevCloud` starts the Azure emulator (``sandbox/azure/server.py``) on a loopback
port with its own CA, seeds the cluster's node resource group and the subnet the default
AKSNodeClass names, and says (``env``) what a worker needs to use it: the provider, the
subscription, the resource group, the emulator's endpoint and CA, and a bearer token (the
emulator checks only that one is sent). ``sandbox/dev.py`` calls it in place of the EC2
emulator when ``DevOptions.provider`` is ``azure``; everything else of the stack (Temporal,
the control plane, the node simulator, the worker) is the same.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from activities.cloud.options import AZURE
from sandbox.azure.server import AzureEmulator, AzureServer, start_server
from sandbox.azure.worker_env import worker_env

DEFAULT_REGION = "eastus"
# Any GUID: ARM names subscriptions by one; the emulator accepts every subscription.
SUBSCRIPTION = "12345678-1234-1234-1234-123456789012"
VNET = "aks-vnet"
SUBNET = "aks-subnet"
# The manifest of the AKSNodeClass and NodePool `joinery dev --provider azure` applies.
MANIFEST = Path(__file__).resolve().parent.parent / "scenarios" / "manifests" / "azure.yaml"

# Besides what ``sandbox.azure.worker_env`` gives (Karpenter Azure's settings, the emulator's
# endpoint and CA): the provider, and the cluster's CA, version and endpoint read from the API
# server (there is no EKS to ask).
ENV_PROVIDER = "JOINERY_PROVIDER"
ENV_FACTS_FROM_API_SERVER = "JOINERY_EKS_CONTROL_PLANE"

Log = Callable[[str], None]


def node_resource_group(cluster: str, region: str) -> str:
    """AKS's name for a cluster's node resource group (``MC_<rg>_<cluster>_<region>``)."""
    return f"MC_{cluster}_{cluster}_{region}"


@dataclass
class AzureDevCloud:
    """A running Azure emulator seeded for one sandbox cluster."""

    server: AzureServer
    region: str
    cluster: str
    certs_dir: Path
    subscription: str = SUBSCRIPTION
    _worker_env: dict[str, str] = field(default_factory=dict)

    @property
    def emulator(self) -> AzureEmulator:
        return self.server.emulator

    @property
    def endpoint(self) -> str:
        return self.server.endpoint

    @property
    def ca_file(self) -> str:
        return self.server.ca_file

    @property
    def resource_group(self) -> str:
        return node_resource_group(self.cluster, self.region)

    @property
    def subnet_id(self) -> str:
        return (
            f"/subscriptions/{self.subscription}/resourceGroups/{self.resource_group}"
            f"/providers/Microsoft.Network/virtualNetworks/{VNET}/subnets/{SUBNET}"
        )

    @classmethod
    def start(cls, region: str, cluster: str, workdir: Path, *, log: Log) -> AzureDevCloud:
        certs_dir = workdir / "azure-certs"
        certs_dir.mkdir(parents=True, exist_ok=True)
        server = start_server(certs_dir=certs_dir)
        cloud = cls(server, region, cluster, certs_dir)
        # seeds the node resource group and the subnet in the emulator
        cloud._worker_env = worker_env(
            server,
            subscription=cloud.subscription,
            node_resource_group=cloud.resource_group,
            subnet_id=cloud.subnet_id,
            location=region,
        )
        log(
            f"Azure emulator at {cloud.endpoint} ({region}: subscription {cloud.subscription}, "
            f"node resource group {cloud.resource_group})"
        )
        return cloud

    def manifest_variables(self) -> dict[str, str]:
        """What ``manifests/azure.yaml``'s ``${...}`` placeholders stand for."""
        return {"CLUSTER_NAME": self.cluster, "SUBNET_ID": self.subnet_id}

    def env(self) -> dict[str, str]:
        """What ``joinery worker --provider azure`` reads to use this emulator."""
        return {
            ENV_PROVIDER: AZURE,
            **self._worker_env,
            ENV_FACTS_FROM_API_SERVER: "false",
        }

    def banner_lines(self) -> list[str]:
        return [
            f"  Azure emulator: {self.endpoint} ({self.region}, CA {self.ca_file})",
            f"  resource group: {self.resource_group} (subscription {self.subscription})",
        ]

    def stop(self) -> None:
        self.server.stop()
        shutil.rmtree(self.certs_dir, ignore_errors=True)
