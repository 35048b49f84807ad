"""The Azure emulator as scenarios see it: VMs and NICs read through ARM (the SDK against the
emulator, not Joinery's provider), prices from the bundled table the worker prices with, spot
evictions played as Azure and AKS play them (``sandbox/azure/spot_eviction.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from activities.azure.clients import compute_client, network_client
from activities.azure.pricing import AzurePricing
from sandbox.azure.credential import FakeCredential
from sandbox.azure.spot_eviction import SpotEvictions
from sandbox.dev import DevStack
from sandbox.scenarios.cloud_view import Machine, Obj

SKU_CPU = "karpenter.azure.com/sku-cpu"


@dataclass(frozen=True)
class VM:
    id: str  # the VM's name, which its Node carries
    instance_type: str
    zone: str
    capacity_type: str
    provisioning_state: str = ""


def vm_of(raw: Any, region: str) -> VM:
    """A scenario's reading of one SDK ``VirtualMachine``; its zone as the Node's label
    writes it (``eastus-1``, ``0`` for none)."""
    zones = list(raw.zones or [])
    size = raw.hardware_profile.vm_size if raw.hardware_profile else ""
    priority = _text(raw.priority) or "Regular"
    return VM(
        id=str(raw.name),
        instance_type=_text(size),
        # AKS labels a VM placed in no zone "0"
        zone=f"{region}-{zones[0]}" if zones else "0",
        capacity_type="spot" if priority.lower() == "spot" else "on-demand",
        provisioning_state=_text(raw.provisioning_state),
    )


def _text(value: Any) -> str:
    """An SDK field as its wire text (the SDK's enums print as ``Type.MEMBER``)."""
    return str(getattr(value, "value", value) or "")


class AzureView:
    name = "azure"

    def __init__(self, stack: DevStack) -> None:
        cloud = stack.azure
        assert cloud is not None and stack.admin is not None
        self.stack = stack
        self.cloud = cloud
        self.region = cloud.region
        self.resource_group = cloud.resource_group
        credential = FakeCredential()
        self.compute = compute_client(
            cloud.subscription,
            endpoint=cloud.endpoint,
            credential=credential,
            ca_file=cloud.ca_file,
        )
        self.network = network_client(
            cloud.subscription,
            endpoint=cloud.endpoint,
            credential=credential,
            ca_file=cloud.ca_file,
        )
        self.pricing = AzurePricing(self.region)
        core = stack.admin.core
        self.evictions = SpotEvictions(
            patch_node_status=lambda name, body: core.patch_node_status(name, body),
            delete_vm=self._delete_vm,
        )

    def vms(self) -> list[VM]:
        return [
            vm_of(v, self.region) for v in self.compute.virtual_machines.list(self.resource_group)
        ]

    def live(self) -> list[Machine]:
        return list(self.vms())

    def price(self, machine: Machine) -> float:
        if machine.capacity_type == "spot":
            return self.pricing.spot(machine.instance_type)
        return self.pricing.on_demand(machine.instance_type)

    def interrupt(self, machine: Machine) -> str:
        """Azure evicts only Spot VMs: the notice on the Node now, the VM taken at its
        deadline (``SpotEvictions``)."""
        from sandbox.scenarios.common import ScenarioFailed

        if machine.capacity_type != "spot":
            raise ScenarioFailed(f"VM {machine.id} is not a Spot VM: Azure would not evict it")
        return self.evictions.evict(machine.id).event_id

    def _delete_vm(self, name: str) -> None:
        """Azure reclaiming the spot VM at its deadline (the emulator's eviction: under policy
        Delete the VM goes, its disk and NICs as their deleteOptions say). A VM already gone
        (Joinery terminated it first) has nothing left to take."""
        try:
            self.cloud.emulator.vms.evict(name)
        except KeyError:
            return

    def nics(self) -> list[str]:
        return [str(n.name) for n in self.network.network_interfaces.list(self.resource_group)]

    def disks(self) -> list[str]:
        return [str(d.name) for d in self.compute.disks.list_by_resource_group(self.resource_group)]

    def leftovers(self) -> dict[str, int]:
        return {"network interfaces": len(self.nics()), "disks": len(self.disks())}

    def max_cpu_requirement(self, cpus: int) -> Obj:
        return {"key": SKU_CPU, "operator": "Lt", "values": [str(cpus + 1)]}

    def catalog_args(self) -> list[str]:
        return [
            "--provider",
            "azure",
            "--region",
            self.region,
            "--endpoint-url",
            self.cloud.endpoint,
            "--subscription-id",
            self.cloud.subscription,
            "--ca-file",
            self.cloud.ca_file,
        ]

    def close(self) -> None:
        self.evictions.stop()
