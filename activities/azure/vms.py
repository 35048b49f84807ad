"""The VMs (and their NICs and OS disks) Joinery owns in the node resource group.

Ownership is by name and tags, never by remembered ids: a claim's VM and NIC are both named
``aks-<nodeclaim>`` (as Karpenter Azure names them) and tagged with the cluster
(``karpenter.azure.com_cluster``), the NodePool and the NodeClaim, so a worker that restarts
mid-launch finds what it made. An instance id is the VM's ARM resource id (the provider id
without ``azure://``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from activities.azure.arm_errors import azure_errors
from activities.cloud.errors import InstanceNotFound
from models import labels as L

TAG_CLUSTER = "karpenter.azure.com_cluster"
TAG_NODEPOOL = "karpenter.sh_nodepool"
TAG_NODECLAIM = "karpenter.sh_nodeclaim"
TAG_NODECLASS = "karpenter.azure.com_aksnodeclass"
TAG_BILLING = "compute.aks.billing"
NAME_PREFIX = "aks-"
# An unattached NIC of the cluster with no VM is deleted once seen so this long: a launch
# between its NIC and its VM is never collected.
ORPHAN_NIC_GRACE = timedelta(minutes=2)


def vm_name(nodeclaim: str) -> str:
    """The VM (and NIC) name for a claim, as Karpenter Azure derives it."""
    return f"{NAME_PREFIX}{nodeclaim}"


def disk_name(vm: str) -> str:
    return f"{vm}-osdisk"


def vm_resource_id(subscription: str, resource_group: str, name: str) -> str:
    return (
        f"/subscriptions/{subscription}/resourceGroups/{resource_group}"
        f"/providers/Microsoft.Compute/virtualMachines/{name}"
    )


def parse_vm_id(vm_id: str) -> tuple[str, str]:
    """(resource group, name) of a VM resource id; ValueError for anything else."""
    parts = vm_id.strip("/").split("/")
    lowered = [p.lower() for p in parts]
    if (
        len(parts) != 8
        or lowered[0] != "subscriptions"
        or lowered[2] != "resourcegroups"
        or lowered[6] != "virtualmachines"
    ):
        raise ValueError(f"not a VM resource id: {vm_id!r}")
    return parts[3], parts[7]


@dataclass(frozen=True)
class AzureVM:
    """One VM as callers see it (``activities.cloud.instances.Instance``)."""

    id: str  # the ARM resource id
    name: str
    instance_type: str
    zone: str  # the catalog's zone (``eastus-1``), ``0`` for a VM placed without one
    capacity_type: str
    state: str  # the provisioning state, lower case (creating, succeeded, failed, deleting)
    image_id: str
    launch_time: datetime | None
    tags: dict[str, str] = field(default_factory=dict)
    subnet_id: str = ""
    security_group_ids: tuple[str, ...] = ()
    nic_ids: tuple[str, ...] = ()
    os_disk: str = ""

    @property
    def provider_id(self) -> str:
        return f"azure://{self.id}"

    @property
    def nodeclaim(self) -> str | None:
        return self.tags.get(TAG_NODECLAIM)

    @staticmethod
    def from_api(raw: Mapping[str, Any]) -> AzureVM:
        props = raw.get("properties") or {}
        zones = raw.get("zones") or []
        location = str(raw.get("location") or "")
        storage = props.get("storageProfile") or {}
        image = storage.get("imageReference") or {}
        created = props.get("timeCreated")
        launch_time = None
        if isinstance(created, datetime):
            launch_time = created
        elif created:
            launch_time = datetime.fromisoformat(str(created).replace("Z", "+00:00"))
        nics = (props.get("networkProfile") or {}).get("networkInterfaces") or []
        return AzureVM(
            id=str(raw.get("id") or ""),
            name=str(raw.get("name") or ""),
            instance_type=str((props.get("hardwareProfile") or {}).get("vmSize") or ""),
            zone=f"{location.lower()}-{zones[0]}" if zones else "0",
            capacity_type=(
                L.CAPACITY_TYPE_SPOT
                if props.get("priority") == "Spot"
                else L.CAPACITY_TYPE_ON_DEMAND
            ),
            state=str(props.get("provisioningState") or "").lower(),
            image_id=str(
                image.get("communityGalleryImageId")
                or image.get("sharedGalleryImageId")
                or image.get("id")
                or ""
            ),
            launch_time=launch_time,
            tags=dict(raw.get("tags") or {}),
            nic_ids=tuple(str(n.get("id")) for n in nics if n.get("id")),
            os_disk=str((storage.get("osDisk") or {}).get("name") or ""),
        )


def as_dict(model: Any) -> dict[str, Any]:
    """An SDK model (or a plain mapping) as its REST dictionary."""
    if hasattr(model, "as_dict"):
        return dict(model.as_dict())
    return dict(model)


@dataclass
class VirtualMachines:
    """Reads and deletes of the cluster's VMs, NICs and disks in the node resource group."""

    compute: Any  # azure.mgmt.compute.ComputeManagementClient
    network: Any  # azure.mgmt.network.NetworkManagementClient
    subscription: str
    resource_group: str
    cluster: str
    # how long delete() waits for each deletion before answering "not gone yet"
    delete_wait_seconds: float = 0.0
    _orphans_seen: dict[str, datetime] = field(default_factory=dict)

    def vm_id(self, name: str) -> str:
        return vm_resource_id(self.subscription, self.resource_group, name)

    def read(self, resource_group: str, name: str) -> AzureVM | None:
        """The VM ``name`` of ``resource_group``, in whatever state; None when it is gone."""
        try:
            with azure_errors("VirtualMachines.Get"):
                raw = self.compute.virtual_machines.get(resource_group, name)
        except InstanceNotFound:
            return None
        return AzureVM.from_api(as_dict(raw))

    def get(self, instance_id: str) -> AzureVM:
        """Raises InstanceNotFound for a VM that is gone (or is not a VM id)."""
        try:
            rg, name = parse_vm_id(instance_id)
        except ValueError as exc:
            raise InstanceNotFound(str(exc)) from None
        vm = self.read(rg, name)
        if vm is None:
            raise InstanceNotFound(f"VM {name} not found")
        return vm

    def find_by_nodeclaim(self, nodeclaim: str) -> AzureVM | None:
        """The claim's VM, by its derived name, in whatever state (a Failed create too)."""
        return self.read(self.resource_group, vm_name(nodeclaim))

    def subnet_of(self, vm: AzureVM) -> str:
        """The subnet of the VM's primary NIC ("" when it cannot be read)."""
        if not vm.nic_ids:
            return ""
        try:
            with azure_errors("NetworkInterfaces.Get"):
                nic = as_dict(self.network.network_interfaces.get(self.resource_group, vm.name))
        except InstanceNotFound:
            return ""
        configs = (nic.get("properties") or {}).get("ipConfigurations") or []
        for cfg in configs:
            subnet = ((cfg.get("properties") or {}).get("subnet") or {}).get("id")
            if subnet:
                return str(subnet)
        return ""

    def _owned_raw(self) -> list[AzureVM]:
        with azure_errors("VirtualMachines.List"):
            listed = [
                AzureVM.from_api(as_dict(v))
                for v in self.compute.virtual_machines.list(self.resource_group)
            ]
        return [v for v in listed if v.tags.get(TAG_CLUSTER) == self.cluster]

    def list_owned(self, nodepool: str | None = None) -> list[AzureVM]:
        """The cluster's VMs launched for a NodePool (of ``nodepool`` when named)."""
        owned = [
            v
            for v in self._owned_raw()
            if TAG_NODEPOOL in v.tags
            and (nodepool is None or v.tags[TAG_NODEPOOL] == nodepool)
            and v.state != "deleting"
        ]
        return sorted(owned, key=lambda v: v.id)

    def leaked(
        self, known_nodeclaims: Iterable[str], now: datetime | None, grace: timedelta
    ) -> list[AzureVM]:
        """Owned VMs whose NodeClaim no longer exists, created more than ``grace`` ago (a
        launch between its create and the claim's status write is never collected)."""
        known = set(known_nodeclaims)
        at = now or datetime.now(UTC)
        return [
            v
            for v in self.list_owned()
            if v.nodeclaim not in known and (v.launch_time is None or v.launch_time <= at - grace)
        ]

    # -- deletion ---------------------------------------------------------------------------
    def _wait(self, poller: Any) -> bool:
        if self.delete_wait_seconds > 0:
            poller.wait(timeout=self.delete_wait_seconds)
        return bool(poller.done())

    def _delete_nic(self, name: str) -> bool:
        """Start deleting the NIC; True once it is gone. A NIC still held by its VM (being
        deleted) answers not gone yet."""
        try:
            with azure_errors("NetworkInterfaces.Delete"):
                poller = self.network.network_interfaces.begin_delete(self.resource_group, name)
                return self._wait(poller) and self._nic_gone(name)
        except InstanceNotFound:
            return True
        except Exception as exc:
            if getattr(exc, "code", "") in ("NicInUse", "NicReservedForAnotherVm"):
                return False
            raise

    def _nic_gone(self, name: str) -> bool:
        try:
            with azure_errors("NetworkInterfaces.Get"):
                self.network.network_interfaces.get(self.resource_group, name)
        except InstanceNotFound:
            return True
        return False

    def _delete_disk(self, name: str) -> bool:
        try:
            with azure_errors("Disks.Delete"):
                poller = self.compute.disks.begin_delete(self.resource_group, name)
                if not self._wait(poller):
                    return False
            with azure_errors("Disks.Get"):
                self.compute.disks.get(self.resource_group, name)
        except InstanceNotFound:
            return True
        return False

    def delete(self, instance_id: str) -> bool:
        """Delete the VM, then its NIC, then its OS disk; True once all three are gone.
        Idempotent: each step starts (or finds done) its deletion and the next call goes on."""
        try:
            rg, name = parse_vm_id(instance_id)
        except ValueError:
            return True
        vm = self.read(rg, name)
        if vm is not None:
            if vm.state == "deleting" and self.delete_wait_seconds <= 0:
                return False  # asked already; no second DELETE while Azure works
            with azure_errors("VirtualMachines.Delete"):
                poller = self.compute.virtual_machines.begin_delete(rg, name)
                if not self._wait(poller) or self.read(rg, name) is not None:
                    return False
        nic_gone = self._delete_nic(name)
        disk_gone = self._delete_disk(vm.os_disk if vm and vm.os_disk else disk_name(name))
        return nic_gone and disk_gone

    # -- garbage collection -----------------------------------------------------------------
    def orphan_nics(self, now: datetime | None = None) -> list[str]:
        """Delete the cluster's NICs that no VM holds and whose VM does not exist, once seen
        so for ``ORPHAN_NIC_GRACE``; the names deleted (or being deleted)."""
        at = now or datetime.now(UTC)
        with azure_errors("NetworkInterfaces.List"):
            nics = [as_dict(n) for n in self.network.network_interfaces.list(self.resource_group)]
        vms = {v.name for v in self._owned_raw()}
        seen_now: set[str] = set()
        deleted: list[str] = []
        for nic in nics:
            name = str(nic.get("name") or "")
            props = nic.get("properties") or {}
            if (nic.get("tags") or {}).get(TAG_CLUSTER) != self.cluster:
                continue
            if props.get("virtualMachine") or name in vms:
                continue
            seen_now.add(name)
            first = self._orphans_seen.setdefault(name, at)
            if at - first >= ORPHAN_NIC_GRACE:
                self._delete_nic(name)
                deleted.append(name)
        for name in list(self._orphans_seen):
            if name not in seen_now:
                del self._orphans_seen[name]
        return sorted(deleted)


def vm_zone(zone: str) -> list[str]:
    """The VM's ``zones`` for a catalog zone: ``eastus-1`` → ``["1"]``, ``0`` → none."""
    if "-" not in zone:
        return []
    return [zone.rsplit("-", 1)[1]]


def owned_tags(
    cluster: str, nodepool: str, nodeclaim: str, nodeclass: str, extra: Mapping[str, str]
) -> dict[str, str]:
    """The tags of a claim's VM, NIC and disk: the node class's (``/`` → ``_``, as Karpenter
    Azure maps them), then the ones Joinery owns by, which win."""
    out = {k.replace("/", "_"): v for k, v in extra.items()}
    out.update(
        {
            TAG_CLUSTER: cluster,
            TAG_BILLING: "linux",
            TAG_NODEPOOL: nodepool,
            TAG_NODECLAIM: nodeclaim,
            TAG_NODECLASS: nodeclass,
        }
    )
    return out
