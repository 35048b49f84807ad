"""``joinery doctor --provider azure``: what the SDK can read, nothing created. One line per
finding, as on EC2 (``worker.cli.doctor_command``).

- subscription: the ``Microsoft.Compute`` and ``Microsoft.Network`` providers are
  registered (a subscription that does not exist, or that the identity cannot read, fails
  here first);
- resource group (``--node-resource-group``, the cluster's MC_ group): exists, and where;
- subnets (``--subnet-id`` and each AKSNodeClass's ``vnetSubnetID``): exist, with their
  address prefix;
- SKUs: how many VM sizes of the region pass the provider's filters (per AKSNodeClass);
- quota (compute usages): regional vCPUs left, and whether any usable size's family has
  room for one VM.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from azure.core.exceptions import AzureError

from activities.azure.catalog import usable
from activities.azure.catalog_source import RegionCatalogs
from activities.azure.clients import network_client, resource_client
from models.aksnodeclass import AKSNodeClass
from worker.cli.azure_args import AzureTarget, azure_target, catalog_params
from worker.cli.azure_catalog import load_nodeclass
from worker.cli.doctor_command import MISSING, OK, UNCHECKED, Finding
from worker.plan_inputs import aks_nodeclasses
from worker.usage import UsageError

NAMESPACES = ("Microsoft.Compute", "Microsoft.Network")
SUBNET_ID = re.compile(
    r"^/subscriptions/(?P<sub>[^/]+)/resourceGroups/(?P<rg>[^/]+)/providers/Microsoft\.Network"
    r"/virtualNetworks/(?P<vnet>[^/]+)/subnets/(?P<subnet>[^/]+)$",
    re.I,
)
REGIONAL_CORES = "cores"


def register_args(p: argparse.ArgumentParser) -> None:
    """Doctor's own Azure options; ``-f`` names AKSNodeClass files with ``--provider azure``,
    ``--node-resource-group`` the group to check and ``--region`` the Azure location."""
    g = p.add_argument_group("Azure doctor")
    g.add_argument("--endpoint", default="", help="ARM endpoint (an emulator)")
    g.add_argument(
        "--subnet-id",
        action="append",
        default=[],
        help="a subnet the nodes use (besides each AKSNodeClass's vnetSubnetID)",
    )


def why(exc: BaseException) -> str:
    """An SDK error as ARM's code and the first line of its message ("does not exist" for a
    404, whose message only repeats the id)."""
    error = getattr(exc, "error", None)
    code = getattr(error, "code", None)
    if getattr(exc, "status_code", None) == 404 and code:
        return f"does not exist ({code})"
    message = getattr(error, "message", None) or str(exc)
    text = (message.splitlines() or [type(exc).__name__])[0]
    return f"{text} ({code})" if code else text


def _text(state: Any) -> str:
    """A provisioning state (an SDK enum or a string) as ARM writes it."""
    if state is None:
        return "state unknown"
    return str(getattr(state, "value", state))


@dataclass
class AzureDoctor:
    target: AzureTarget
    args: argparse.Namespace
    nodeclasses: list[AKSNodeClass]

    def _client(self, make: Any) -> Any:
        return make(
            self.target.subscription_id, endpoint=self.target.endpoint, ca_file=self.target.ca_file
        )

    def subscription(self) -> Iterable[Finding]:
        subject = f"subscription {self.target.subscription_id}"
        resources = self._client(resource_client)
        states = []
        for namespace in NAMESPACES:
            try:
                provider = resources.providers.get(namespace)
            except AzureError as exc:
                yield Finding(MISSING, subject, f"cannot read {namespace}: {why(exc)}")
                return
            state = str(provider.registration_state or "Unknown")
            if state != "Registered":
                yield Finding(
                    MISSING,
                    subject,
                    f"{namespace} is {state} (az provider register --namespace {namespace})",
                )
                return
            states.append(namespace)
        yield Finding(OK, subject, f"{' and '.join(states)} registered")

    def resource_group(self) -> Iterable[Finding]:
        name = self.args.node_resource_group
        if not name:
            yield Finding(UNCHECKED, "resource group", "none given (--node-resource-group MC_...)")
            return
        subject = f"resource group {name}"
        try:
            group = self._client(resource_client).resource_groups.get(name)
        except AzureError as exc:
            yield Finding(MISSING, subject, why(exc))
            return
        location = str(group.location or "")
        if location.replace(" ", "").lower() != self.target.region.lower():
            yield Finding(MISSING, subject, f"is in {location}, not in {self.target.region}")
            return
        state = _text(group.properties.provisioning_state if group.properties else None)
        yield Finding(OK, subject, f"in {location}, {state}")

    def subnet_ids(self) -> list[str]:
        ids = list(self.args.subnet_id)
        for nc in self.nodeclasses:
            if nc.spec.vnet_subnet_id and nc.spec.vnet_subnet_id not in ids:
                ids.append(nc.spec.vnet_subnet_id)
        return ids

    def subnets(self) -> Iterable[Finding]:
        ids = self.subnet_ids()
        if not ids:
            yield Finding(
                UNCHECKED,
                "subnet",
                "none given (--subnet-id, or an AKSNodeClass with vnetSubnetID); "
                "nodes would use the cluster's own subnet",
            )
            return
        network = self._client(network_client)
        for subnet_id in ids:
            m = SUBNET_ID.match(subnet_id)
            subject = f"subnet {subnet_id}"
            if m is None:
                yield Finding(MISSING, subject, "not a subnet resource id")
                continue
            try:
                subnet = network.subnets.get(m["rg"], m["vnet"], m["subnet"])
            except AzureError as exc:
                yield Finding(MISSING, subject, why(exc))
                continue
            prefixes = subnet.address_prefix or ", ".join(subnet.address_prefixes or [])
            state = _text(subnet.provisioning_state)
            yield Finding(OK, subject, f"{prefixes or 'no prefix'}, {state}")

    def skus(self, region: RegionCatalogs) -> Iterable[Finding]:
        subject = f"VM sizes in {self.target.region}"
        try:
            listed = region.skus()
        except AzureError as exc:
            yield Finding(MISSING, subject, f"cannot list Resource SKUs: {why(exc)}")
            return
        views: list[tuple[str, AKSNodeClass | None]] = [
            (f"AKSNodeClass {nc.name}", nc) for nc in self.nodeclasses
        ] or [("the defaults", None)]
        for who, nc in views:
            count = len(region.types(catalog_params(self.args, nc)))
            if count == 0:
                yield Finding(MISSING, subject, f"none of {len(listed)} SKUs is usable for {who}")
            else:
                yield Finding(OK, subject, f"{count} of {len(listed)} SKUs usable for {who}")

    def quota(self, region: RegionCatalogs) -> Iterable[Finding]:
        subject = f"vCPU quota in {self.target.region}"
        try:
            usages = list(region.compute.usage.list(self.target.region))
            skus = [s for s in region.skus() if usable(s)]
        except AzureError as exc:
            yield Finding(MISSING, subject, f"cannot read compute usages: {why(exc)}")
            return
        free = {
            str(u.name.value).lower(): int(u.limit) - int(u.current_value)
            for u in usages
            if u.name is not None and u.name.value
        }
        regional = free.get(REGIONAL_CORES)
        smallest = min((s.vcpus or 0 for s in skus), default=0)
        if regional is None:
            yield Finding(UNCHECKED, subject, "no regional vCPU usage reported")
            return
        if regional < smallest:
            yield Finding(
                MISSING,
                subject,
                f"{regional} regional vCPUs left, the smallest size needs {smallest}",
            )
            return
        fits = [s for s in skus if free.get(s.family.lower(), regional) >= (s.vcpus or 0)]
        full = sorted({s.family for s in skus} - {s.family for s in fits})
        if not fits:
            yield Finding(MISSING, subject, f"no VM family has room: {', '.join(full)}")
            return
        note = f"; families at their limit: {', '.join(full)}" if full else ""
        yield Finding(
            OK,
            subject,
            f"{regional} regional vCPUs left; {len(fits)} of {len(skus)} sizes have room{note}",
        )


def run_azure(args: argparse.Namespace) -> int:
    nodeclasses = [aks_nodeclasses.parse(load_nodeclass(p)) for p in args.nodeclass]
    target = azure_target(args, args.endpoint)
    doctor = AzureDoctor(target, args, nodeclasses)
    try:
        region = target.catalogs()
    except ValueError as exc:  # the SDK refuses a malformed endpoint when the client is made
        raise UsageError(f"--endpoint {args.endpoint}: {exc}") from None
    findings = [
        *doctor.subscription(),
        *doctor.resource_group(),
        *doctor.subnets(),
        *doctor.skus(region),
        *doctor.quota(region),
    ]
    for f in findings:
        print(f.line())
    return 1 if any(f.status == MISSING for f in findings) else 0
