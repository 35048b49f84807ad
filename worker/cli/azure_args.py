"""The command-line options every ``--provider azure`` command shares, and what they make:
the SDK clients (pointed at ARM or at an emulator) and the cluster's catalog parameters."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from worker.usage import UsageError

if TYPE_CHECKING:
    from activities.azure.catalog_source import RegionCatalogs
    from activities.azure.params import CatalogParams
    from models.aksnodeclass import AKSNodeClass

# The Azure SDK and the catalog code are imported when used, not when a parser is built:
# `joinery plan` registers these options on every run.

PROVIDERS = ("aws", "azure")
SUBSCRIPTION_ENV = "AZURE_SUBSCRIPTION_ID"


def add_provider_arg(p: argparse.ArgumentParser, default: str | None = "aws") -> None:
    p.add_argument(
        "--provider", choices=PROVIDERS, default=default, help="the cloud (one per cluster)"
    )


def add_azure_args(p: argparse.ArgumentParser, *, memory_overhead: bool = True) -> None:
    """Azure's options; the command adds ``--region`` and its endpoint option itself."""
    g = p.add_argument_group("Azure (with --provider azure)")
    g.add_argument(
        "--subscription-id",
        default=os.environ.get(SUBSCRIPTION_ENV, ""),
        help=f"the Azure subscription (default ${SUBSCRIPTION_ENV})",
    )
    g.add_argument("--ca-file", default="", help="trust this CA for the endpoint (an emulator's)")
    g.add_argument(
        "--network-plugin",
        choices=("azure", "kubenet", "none"),
        default="azure",
        help="the cluster's network plugin: sets max pods when the node class does not",
    )
    g.add_argument(
        "--network-plugin-mode",
        choices=("overlay", "none"),
        default="overlay",
        help="azure CNI overlay (250 pods a node) or on the node subnet (30)",
    )
    g.add_argument(
        "--node-resource-group",
        default="",
        help="the cluster's node resource group (MC_...): sets kubernetes.azure.com/cluster",
    )
    if memory_overhead:
        g.add_argument(
            "--vm-memory-overhead-percent",
            type=float,
            default=None,
            help="the share of memory the hypervisor keeps (default 0.075, as AKS)",
        )


@dataclass(frozen=True)
class AzureTarget:
    """Where the Azure reads go: the subscription and region, ARM or an emulator."""

    subscription_id: str
    region: str
    endpoint: str | None
    ca_file: str | None

    def compute(self) -> Any:
        from activities.azure.clients import compute_client

        return compute_client(self.subscription_id, endpoint=self.endpoint, ca_file=self.ca_file)

    def catalogs(self) -> RegionCatalogs:
        from activities.azure.catalog_source import RegionCatalogs

        return RegionCatalogs.create(
            self.compute(), self.region, endpoint=self.endpoint, ca_file=self.ca_file
        )


def azure_target(args: argparse.Namespace, endpoint: str | None) -> AzureTarget:
    if not args.region:
        raise UsageError("--region: no Azure region given (e.g. --region eastus)")
    if not args.subscription_id:
        raise UsageError(
            f"--subscription-id: no Azure subscription given (nor ${SUBSCRIPTION_ENV})"
        )
    return AzureTarget(args.subscription_id, args.region, endpoint or None, args.ca_file or None)


def catalog_params(args: argparse.Namespace, nodeclass: AKSNodeClass | None) -> CatalogParams:
    """What the cluster's settings and ``nodeclass`` (None: the defaults) make of the catalog."""
    from activities.azure.params import DEFAULT_VM_MEMORY_OVERHEAD_PERCENT, CatalogParams
    from worker.running import karpenter_settings

    mode = "" if args.network_plugin_mode == "none" else args.network_plugin_mode
    overhead = getattr(args, "vm_memory_overhead_percent", None)
    if isinstance(overhead, str):  # joinery catalog's flag, as the worker's setting reads it
        overhead = karpenter_settings.catalog_values(args)[0]
    return CatalogParams.for_node_class(
        nodeclass,
        network_plugin=args.network_plugin,
        network_plugin_mode=mode,
        vm_memory_overhead_percent=DEFAULT_VM_MEMORY_OVERHEAD_PERCENT
        if overhead is None
        else overhead,
        node_resource_group=args.node_resource_group or None,
    )


def azure_failure(what: str, exc: BaseException) -> UsageError:
    """An SDK error as one line: ARM's error code and the first line of its message."""
    error = getattr(exc, "error", None)
    code = getattr(error, "code", None)
    message = getattr(error, "message", None) or str(exc)
    text = (message.splitlines() or [type(exc).__name__])[0]
    return UsageError(f"{what}: ({code}) {text}" if code else f"{what}: {text}")
