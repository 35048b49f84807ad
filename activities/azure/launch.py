"""Launch one VM for a NodeClaim: a NIC in the node class's subnet, then the VM.

Both are named from the claim (``aks-<nodeclaim>``), so a retried launch finds what an
earlier try made: a VM already there is adopted (waited for while Azure still creates it),
never created a second time and never re-PUT with a different size; a NIC PUT again is the
same NIC. The wait for the create is inside the launch activity (which heartbeats), so a
worker killed mid-create leaves the VM to Azure and the next attempt adopts it.

The offering is chosen as on EC2 (``activities.cloud.offering_choice``): the cheapest
available offering of the capacity type the claim allows first (spot before on-demand).
Capacity, quota, SKU and spot-allocation refusals mark offerings unavailable
(``activities.azure.refusals``), remove what the failed create left (a Failed VM, its NIC)
and raise ``InsufficientCapacity`` so the provisioner plans again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from activities.azure import refusals
from activities.azure.arm_errors import AzureError, azure_errors
from activities.azure.bootstrap import ClusterJoin
from activities.azure.launch_spec import LaunchSpec, launch_spec
from activities.azure.nodeclasses import AKSNodeClassResolver
from activities.azure.skus import Sku
from activities.azure.type_labels import AKS
from activities.azure.vms import (
    AzureVM,
    VirtualMachines,
    as_dict,
    disk_name,
    owned_tags,
    vm_name,
    vm_zone,
)
from activities.cloud.errors import InsufficientCapacity, LaunchFailed
from activities.cloud.kinds import AKS_NODECLASS
from activities.cloud.launch import LaunchRequest, LaunchResult
from activities.cloud.offering_choice import (
    cheapest_offerings,
    choose_capacity_type,
    compatible_types,
)
from activities.cloud.unavailable_offerings import UnavailableOfferings
from models import labels as L
from models.aksnodeclass import AKSNodeClass
from models.instancetype import InstanceType, Offering
from models.labels import WELL_KNOWN_LABELS
from models.resources import parse_resources, render

log = logging.getLogger(__name__)
ADMIN_USER = "azureuser"
# How long a launch waits for a VM an earlier try left being created.
ADOPT_WAIT_SECONDS = 90.0


@dataclass
class VMSettings:
    """The cluster-wide parts of every VM: where it goes and who it is."""

    location: str
    subscription: str
    resource_group: str
    cluster: str
    node_identities: tuple[str, ...] = ()
    ssh_public_key: str = ""


@dataclass
class Launcher:
    vms: VirtualMachines
    settings: VMSettings
    unavailable: UnavailableOfferings
    resolver: Callable[[], AKSNodeClassResolver]
    cluster: Callable[[], ClusterJoin]
    catalog: Callable[[AKSNodeClass], list[InstanceType]]  # with unavailable offerings
    skus: Callable[[], dict[str, Sku]]
    max_pods: Callable[[AKSNodeClass], int]
    sleep: Callable[[float], None] = time.sleep
    _adopt_wait: float = field(default=ADOPT_WAIT_SECONDS)

    # -- the launch ----------------------------------------------------------------------
    def launch(self, request: LaunchRequest, nodeclass: AKSNodeClass) -> LaunchResult:
        name = vm_name(request.nodeclaim_name)
        existing = self._settled(self.vms.find_by_nodeclaim(request.nodeclaim_name))
        if existing is not None and existing.state != "failed":
            return self._result_for(existing, nodeclass, reused=True)
        if existing is not None:  # a failed create: gone before this one starts
            self._remove_failed(existing)
        self.unavailable.sync()
        it, offering = self._choose(request, nodeclass)
        sku = self.skus().get(it.name)
        subnet = self.resolver().subnet_id(nodeclass)
        if not subnet:
            raise LaunchFailed(
                f"AKSNodeClass {nodeclass.name}: no vnetSubnetID and no cluster subnet"
            )
        labels = self._labels(it, offering, request)
        spec = launch_spec(
            self.resolver(),
            self.cluster(),
            nodeclass,
            request,
            it,
            sku,
            subnet_id=subnet,
            max_pods=self.max_pods(nodeclass),
            labels=labels,
        )
        tags = owned_tags(
            self.settings.cluster,
            request.nodepool_name,
            request.nodeclaim_name,
            nodeclass.name,
            nodeclass.spec.tags,
        )
        nic_id = self._nic(name, subnet, bool(sku and sku.accelerated_networking), tags)
        body = self._vm_body(name, nic_id, it, offering, nodeclass, sku, spec, tags)
        try:
            with azure_errors("VirtualMachines.CreateOrUpdate"):
                poller = self.vms.compute.virtual_machines.begin_create_or_update(
                    self.settings.resource_group, name, body
                )
                raw = as_dict(poller.result())
        except AzureError as exc:
            kind = refusals.kind_of(exc.code, str(exc))
            if kind is None:
                raise
            self._remove_failed_by_name(name)
            raise refusals.insufficient_capacity(
                kind,
                str(exc),
                self.unavailable,
                it.name,
                offering.zone,
                offering.capacity_type,
                request.nodeclaim_name,
            ) from exc
        vm = AzureVM.from_api(raw)
        result = self._result(vm, it, labels, spec.image_id)
        result.subnet_id = subnet
        return result

    def _choose(
        self, request: LaunchRequest, nodeclass: AKSNodeClass
    ) -> tuple[InstanceType, Offering]:
        types = self.catalog(nodeclass)
        reqs = request.requirement_set()
        requests = parse_resources(request.resources)
        # Karpenter's and Karpenter Azure's well-known keys, and AKS's own (kubernetes.azure.com)
        aks = {k for it in types for k, _ in it.requirements.items() if k.startswith(AKS + "/")}
        known = WELL_KNOWN_LABELS | AKS_NODECLASS.well_known_labels | frozenset(aks)
        compatible = compatible_types(types, reqs, requests, known)
        capacity_type = choose_capacity_type(compatible, reqs)
        pairs = cheapest_offerings(compatible, reqs, capacity_type) if capacity_type else []
        if not pairs:
            raise InsufficientCapacity(
                f"NodeClaim {request.nodeclaim_name}: no available offering among "
                f"{len(compatible)} compatible VM sizes"
            )
        return pairs[0]

    def _settled(self, vm: AzureVM | None) -> AzureVM | None:
        """The VM once Azure has finished creating it (or given up), waiting up to
        ``_adopt_wait``; a VM being deleted counts as none, once it is gone."""
        waited = 0.0
        while vm is not None and vm.state in ("creating", "updating", "deleting"):
            if waited >= self._adopt_wait:
                raise LaunchFailed(f"VM {vm.name} still {vm.state} after {waited:.0f}s")
            self.sleep(1.0)
            waited += 1.0
            vm = self.vms.read(self.settings.resource_group, vm.name)
        return vm

    def _remove_failed(self, vm: AzureVM) -> None:
        """Delete a VM whose create failed (Azure keeps it, Failed) and wait for it to go,
        so the next create starts clean."""
        with azure_errors("VirtualMachines.Delete"):
            self.vms.compute.virtual_machines.begin_delete(
                self.settings.resource_group, vm.name
            ).result()

    def _remove_failed_by_name(self, name: str) -> None:
        try:
            vm = self.vms.read(self.settings.resource_group, name)
            if vm is not None:
                self._remove_failed(vm)
            self.vms.delete(self.vms.vm_id(name))
        except Exception as exc:  # garbage collection removes what this leaves
            log.warning("cleaning up after a refused create of %s: %s", name, exc)

    # -- the request bodies ----------------------------------------------------------------
    def _nic(self, name: str, subnet: str, accelerated: bool, tags: dict[str, str]) -> str:
        body = {
            "location": self.settings.location,
            "tags": tags,
            "properties": {
                "enableAcceleratedNetworking": accelerated,
                "ipConfigurations": [
                    {
                        "name": "ipconfig1",
                        "properties": {
                            "primary": True,
                            "privateIPAllocationMethod": "Dynamic",
                            "subnet": {"id": subnet},
                        },
                    }
                ],
            },
        }
        with azure_errors("NetworkInterfaces.CreateOrUpdate"):
            nic = self.vms.network.network_interfaces.begin_create_or_update(
                self.settings.resource_group, name, body
            ).result()
        return str(as_dict(nic)["id"])

    def _vm_body(
        self,
        name: str,
        nic_id: str,
        it: InstanceType,
        offering: Offering,
        nodeclass: AKSNodeClass,
        sku: Sku | None,
        spec: LaunchSpec,
        tags: dict[str, str],
    ) -> dict[str, Any]:
        size_gb = nodeclass.spec.os_disk_size_gb
        os_disk: dict[str, Any] = {
            "name": disk_name(name),
            "createOption": "FromImage",
            "diskSizeGB": size_gb,
            "deleteOption": "Delete",
            "osType": "Linux",
        }
        placement = ephemeral_placement(sku, size_gb)
        if placement:
            os_disk["caching"] = "ReadOnly"
            os_disk["diffDiskSettings"] = {"option": "Local", "placement": placement}
        else:
            premium = sku is not None and sku.premium_io
            os_disk["managedDisk"] = {
                "storageAccountType": "Premium_LRS" if premium else "Standard_LRS"
            }
        linux: dict[str, Any] = {"disablePasswordAuthentication": True}
        if self.settings.ssh_public_key:
            linux["ssh"] = {
                "publicKeys": [
                    {
                        "path": f"/home/{ADMIN_USER}/.ssh/authorized_keys",
                        "keyData": self.settings.ssh_public_key,
                    }
                ]
            }
        props: dict[str, Any] = {
            "hardwareProfile": {"vmSize": it.name},
            "storageProfile": {"imageReference": spec.image_reference(), "osDisk": os_disk},
            "osProfile": {
                "computerName": name,
                "adminUsername": ADMIN_USER,
                "customData": spec.custom_data,
                "linuxConfiguration": linux,
            },
            "networkProfile": {
                "networkInterfaces": [
                    {"id": nic_id, "properties": {"primary": True, "deleteOption": "Delete"}}
                ]
            },
        }
        if offering.capacity_type == L.CAPACITY_TYPE_SPOT:
            props["priority"] = "Spot"
            props["evictionPolicy"] = "Delete"
            props["billingProfile"] = {"maxPrice": -1}
        if nodeclass.spec.encryption_at_host:
            props["securityProfile"] = {"encryptionAtHost": True}
        body: dict[str, Any] = {
            "location": self.settings.location,
            "tags": tags,
            "properties": props,
        }
        zones = vm_zone(offering.zone)
        if zones:
            body["zones"] = zones
        if self.settings.node_identities:
            body["identity"] = {
                "type": "UserAssigned",
                "userAssignedIdentities": {i: {} for i in self.settings.node_identities},
            }
        return body

    # -- results ---------------------------------------------------------------------------
    def _labels(
        self, it: InstanceType, offering: Offering, request: LaunchRequest
    ) -> dict[str, str]:
        labels = dict(it.requirements.labels())
        labels.update(
            {
                L.INSTANCE_TYPE: it.name,
                L.ZONE: offering.zone,
                L.CAPACITY_TYPE: offering.capacity_type,
            }
        )
        labels.update(request.labels)
        labels[L.NODEPOOL] = request.nodepool_name
        return labels

    def _result(
        self, vm: AzureVM, it: InstanceType | None, labels: dict[str, str], image_id: str
    ) -> LaunchResult:
        return LaunchResult(
            instance_id=vm.id,
            provider_id=vm.provider_id,
            instance_type=vm.instance_type,
            zone=vm.zone,
            capacity_type=vm.capacity_type,
            image_id=image_id or vm.image_id,
            capacity=render(dict(it.capacity)) if it else {},
            allocatable=render(dict(it.allocatable)) if it else {},
            labels=labels,
        )

    def _result_for(self, vm: AzureVM, nodeclass: AKSNodeClass, *, reused: bool) -> LaunchResult:
        it = next((t for t in self.catalog(nodeclass) if t.name == vm.instance_type), None)
        labels = dict(it.requirements.labels()) if it else {}
        labels.update(
            {L.INSTANCE_TYPE: vm.instance_type, L.ZONE: vm.zone, L.CAPACITY_TYPE: vm.capacity_type}
        )
        if vm.tags.get("karpenter.sh_nodepool"):
            labels[L.NODEPOOL] = vm.tags["karpenter.sh_nodepool"]
        result = self._result(vm, it, labels, vm.image_id)
        result.reused = reused
        result.subnet_id = self.vms.subnet_of(vm)
        return result


def ephemeral_placement(sku: Sku | None, size_gb: int) -> str:
    """Where an ephemeral OS disk of ``size_gb`` fits on the size, as Karpenter Azure places
    it (NVMe, else the cache, else the resource disk), or "" for a managed disk."""
    if sku is None or not sku._flag("EphemeralOSDiskSupported"):
        return ""
    placements = sku.capabilities.get("SupportedEphemeralOSDiskPlacements", "").lower()
    nvme_gb = sku._int("NvmeDiskSizeInMiB") * 2**20 // 10**9
    if "nvmedisk" in placements and nvme_gb >= size_gb:
        return "NvmeDisk"
    if "cachedisk" in placements and sku._int("CachedDiskBytes") // 10**9 >= size_gb:
        return "CacheDisk"
    if "resourcedisk" in placements and sku._int("MaxResourceVolumeMB") * 2**20 // 10**9 >= size_gb:
        return "ResourceDisk"
    return ""
