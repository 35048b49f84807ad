"""Emulated ``Microsoft.Compute/virtualMachines`` and their OS disks (``.../disks``).

What Azure does that the launch and the cleanup depend on, emulated:

- PUT create-or-update is a long-running operation (201 + ``Azure-AsyncOperation``; the VM
  reads ``Creating`` until it ends, ``Succeeded`` after); a PUT of an existing name updates
  it (200): a retried launch gets the same VM, never a second one.
- The size must be sold in the location and the zone (``SkuNotAvailable`` otherwise);
  accelerated networking on a NIC of a size without it is refused
  (``VMSizeIsNotPermittedToEnableAcceleratedNetworking``); the NICs named must exist and not
  belong to another VM.
- Spot (``priority: Spot``) keeps its ``evictionPolicy`` (Deallocate by default) and
  ``billingProfile.maxPrice`` (-1: up to the on-demand price).
- The OS disk is a resource of its own (``Microsoft.Compute/disks``) unless ephemeral
  (``diffDiskSettings.option: Local``); deleting the VM deletes it when its ``deleteOption`` is
  Delete, else leaves it; NICs likewise (deleteOption Delete, else detached).
- Capacity refusals injected through :attr:`VirtualMachines.capacity`
  (``sandbox.azure.capacity_faults`` lists them and how each is answered).
- Spot eviction (:meth:`VirtualMachines.evict`): with eviction policy Delete the VM (and its
  disk and NICs as their deleteOptions say) is gone, as Azure does; with Deallocate it stays,
  deallocated.
- ``$expand=instanceView`` adds the provisioning and power states.
"""

from __future__ import annotations

import datetime
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sandbox.azure.capacity_faults import CapacityFaults, refusal
from sandbox.azure.nics import NetworkInterfaces
from sandbox.azure.operations import Operations, async_headers
from sandbox.azure.resource_table import Answer, ArmFailure, ResourceTable, listed
from sandbox.azure.resource_type import ResourceType, put_fields, stored

NAMESPACE = "Microsoft.Compute"
VM = ResourceType(NAMESPACE, "virtualMachines")
DISK = ResourceType(NAMESPACE, "disks")
RUNNING, DEALLOCATED = "running", "deallocated"


@dataclass(frozen=True)
class Eviction:
    """One spot eviction the emulator carried out (the sandbox's interruption source)."""

    vm_id: str
    name: str
    policy: str
    at: datetime.datetime


def _capabilities(sku: dict[str, Any]) -> dict[str, str]:
    return {str(c["name"]): str(c["value"]) for c in sku.get("capabilities") or []}


@dataclass
class VirtualMachines:
    skus_in: Callable[[str], list[dict[str, Any]]]  # the seed's SKUs of a location
    nics: NetworkInterfaces
    operations: Operations
    vms: ResourceTable = field(default_factory=lambda: ResourceTable("virtual machine"))
    disks: ResourceTable = field(default_factory=lambda: ResourceTable("disk"))
    capacity: CapacityFaults = field(default_factory=CapacityFaults)
    page_size: int = 50
    poll_after: int = 0  # Retry-After on LRO answers (seconds)
    create_seconds: float = 0.5  # a create ends this long after it starts, polled or not
    create_polls: int = 1
    delete_seconds: float = 0.2
    evictions: list[Eviction] = field(default_factory=list)
    # what Azure never returns in a GET (osProfile.customData), kept for tests to read
    custom_data: dict[str, str] = field(default_factory=dict)
    _power: dict[str, str] = field(default_factory=dict)
    _lock: threading.RLock = field(default_factory=threading.RLock)

    # -- requests -----------------------------------------------------------------------
    def handle(
        self, method: str, path: str, query: dict[str, str], body: dict[str, Any], base_url: str
    ) -> Answer | None:
        if m := VM.item_path.match(path):
            self.operations.settle()
            if method == "GET":
                return 200, self._read(path, query), {}
            if method == "PUT":
                return self._put(m["sub"], m["rg"], m["name"], path, body, base_url)
            if method == "DELETE":
                return self._delete(m["sub"], path, base_url)
        if method == "GET" and (m := VM.list_path.match(path)):
            self.operations.settle()
            items = [self._read(str(v["id"]), query) for v in self.vms.in_group(m["sub"], m["rg"])]
            return listed(items, base_url, path, query, self.page_size)
        if m := DISK.item_path.match(path):
            self.operations.settle()
            if method == "GET":
                return 200, self.disks.get(path), {}
            if method == "DELETE":
                return self._delete_disk(m["sub"], path, base_url)
        if method == "GET" and (m := DISK.list_path.match(path)):
            self.operations.settle()
            return listed(
                self.disks.in_group(m["sub"], m["rg"]), base_url, path, query, self.page_size
            )
        return None

    def _read(self, rid: str, query: dict[str, str]) -> dict[str, Any]:
        body = self.vms.get(rid)
        if "instanceview" in query.get("$expand", "").lower():
            body["properties"]["instanceView"] = self._instance_view(body)
        return body

    def _instance_view(self, body: dict[str, Any]) -> dict[str, Any]:
        state = str(body["properties"].get("provisioningState", "Succeeded"))
        statuses = [
            {
                "code": f"ProvisioningState/{state.lower()}",
                "level": "Error" if state == "Failed" else "Info",
                "displayStatus": f"Provisioning {state.lower()}",
            }
        ]
        power = self._power.get(str(body["id"]).lower())
        if power:
            statuses.append(
                {"code": f"PowerState/{power}", "level": "Info", "displayStatus": f"VM {power}"}
            )
        return {"statuses": statuses}

    def _sku(self, location: str, size: str) -> dict[str, Any] | None:
        for sku in self.skus_in(location):
            if sku.get("resourceType") == "virtualMachines" and sku.get("name") == size:
                return sku
        return None

    def _check(
        self, rid: str, location: str, props: dict[str, Any], zones: list[str]
    ) -> dict[str, Any]:
        size = str((props.get("hardwareProfile") or {}).get("vmSize") or "")
        sku = self._sku(location, size)
        zone_info: dict[str, Any] = next(
            (i for i in (sku or {}).get("locationInfo") or [] if i.get("location") == location),
            {},
        )
        if sku is None or any(z not in (zone_info.get("zones") or []) for z in zones):
            where = f"location '{location}'" + (f" zone '{zones[0]}'" if zones else "")
            raise ArmFailure(
                409,
                "SkuNotAvailable",
                f"The requested VM size {size or '(none)'} is currently not available in "
                f"{where}. See https://aka.ms/azureskunotavailable for details.",
            )
        nic_refs = ((props.get("networkProfile") or {}).get("networkInterfaces")) or []
        if not nic_refs:
            raise ArmFailure(
                400, "InvalidParameter", "Required parameter 'networkProfile' is missing (null)."
            )
        accelerated_ok = _capabilities(sku).get("AcceleratedNetworkingEnabled") == "True"
        for ref in nic_refs:
            nic_id = str(ref.get("id") or "")
            if not self.nics.exists(nic_id):
                raise ArmFailure(
                    400,
                    "InvalidResourceReference",
                    f"Resource {nic_id} referenced by resource {rid} was not found.",
                )
            owner = self.nics.attached_to(nic_id)
            if owner and owner.lower() != rid.lower():
                raise ArmFailure(
                    400,
                    "NicInUse",
                    f"Network Interface {nic_id} is used by existing resource {owner}.",
                )
            if self.nics.accelerated(nic_id) and not accelerated_ok:
                raise ArmFailure(
                    400,
                    "VMSizeIsNotPermittedToEnableAcceleratedNetworking",
                    f"VM size {size} is not compatible with enabling Accelerated Networking on "
                    f"network interface {nic_id}.",
                )
        return sku

    def _put(
        self, sub: str, rg: str, name: str, rid: str, body: dict[str, Any], base_url: str
    ) -> Answer:
        location, props = put_fields(body)
        zones = [str(z) for z in body.get("zones") or []]
        existing = self.vms.live(rid)
        if existing is not None and existing["properties"].get("provisioningState") not in (
            "Failed",
        ):
            return self._update(sub, rid, existing, body, base_url)
        sku = self._check(rid, location, props, zones)
        size = str(props["hardwareProfile"]["vmSize"])
        priority = str(props.get("priority") or "Regular")
        if priority == "Spot":
            props.setdefault("evictionPolicy", "Deallocate")
            props.setdefault("billingProfile", {"maxPrice": -1})
        kind = self.capacity.take(size, zones[0] if zones else "", priority)
        refused = None
        if kind is not None:
            refused = refusal(
                kind,
                size=size,
                zone=zones[0] if zones else "",
                priority=priority,
                location=location,
                cores=int(_capabilities(sku).get("vCPUs", "2")),
            )
            if refused.synchronous:
                raise ArmFailure(refused.status, refused.code, refused.message)
        storage = dict(props.get("storageProfile") or {})
        os_disk = dict(storage.get("osDisk") or {})
        ephemeral = (os_disk.get("diffDiskSettings") or {}).get("option") == "Local"
        disk_name = str(os_disk.get("name") or f"{name}_OsDisk_1_{uuid.uuid4().hex[:32]}")
        os_disk["name"] = disk_name
        os_disk.setdefault("deleteOption", "Detach")
        if not ephemeral:
            disk_id = DISK.resource_id(sub, rg, disk_name)
            os_disk["managedDisk"] = {**(os_disk.get("managedDisk") or {}), "id": disk_id}
        storage["osDisk"] = os_disk
        props["storageProfile"] = storage
        os_profile = dict(props.get("osProfile") or {})
        if "customData" in os_profile:
            self.custom_data[rid.lower()] = str(os_profile.pop("customData"))
        props["osProfile"] = os_profile
        props["provisioningState"] = "Creating"
        props["vmId"] = str(uuid.uuid4())
        props["timeCreated"] = datetime.datetime.now(datetime.UTC).isoformat()
        vm = stored(VM, rid, name, location, body, properties=props)
        if zones:
            vm["zones"] = zones
        if body.get("identity"):
            vm["identity"] = body["identity"]
        self.vms.put(vm)
        for ref in props["networkProfile"]["networkInterfaces"]:
            self.nics.attach(str(ref["id"]), rid)
        error = {"code": refused.code, "message": refused.message} if refused else None
        op = self.operations.start(
            polls=self.create_polls,
            seconds=self.create_seconds,
            error=error,
            on_done=lambda: self._created(rid, failed=error is not None),
        )
        return 201, self.vms.get(rid), self._lro(sub, location, op, base_url)

    def _created(self, rid: str, *, failed: bool) -> None:
        vm = self.vms.live(rid)
        if vm is None:
            return
        props = vm["properties"]
        if failed:
            props["provisioningState"] = "Failed"
            return
        props["provisioningState"] = "Succeeded"
        self._power[rid.lower()] = RUNNING
        os_disk = props["storageProfile"]["osDisk"]
        disk_id = (os_disk.get("managedDisk") or {}).get("id")
        if disk_id and self.disks.live(disk_id) is None:
            self.disks.put(
                {
                    "id": disk_id,
                    "name": os_disk["name"],
                    "type": DISK.type,
                    "location": vm["location"],
                    "tags": dict(vm.get("tags") or {}),
                    **({"zones": vm["zones"]} if vm.get("zones") else {}),
                    "managedBy": rid,
                    "properties": {
                        "diskSizeGB": int(os_disk.get("diskSizeGB") or 30),
                        "osType": "Linux",
                        "diskState": "Attached",
                        "provisioningState": "Succeeded",
                        "creationData": {"createOption": "FromImage"},
                    },
                }
            )

    def _update(
        self, sub: str, rid: str, existing: dict[str, Any], body: dict[str, Any], base_url: str
    ) -> Answer:
        """A PUT of a VM that exists: its tags change; the rest is what it already is (a
        retried create gets the first one back)."""
        if body.get("tags") is not None:
            existing["tags"] = dict(body["tags"])
        state = existing["properties"].get("provisioningState")
        op = self.operations.start(polls=0 if state == "Succeeded" else self.create_polls)
        return 200, self.vms.get(rid), self._lro(sub, str(existing["location"]), op, base_url)

    def _lro(self, sub: str, location: str, op: str, base_url: str) -> dict[str, str]:
        return async_headers(base_url, sub, NAMESPACE, location, op, self.poll_after)

    def _delete(self, sub: str, rid: str, base_url: str) -> Answer:
        vm = self.vms.live(rid)
        if vm is None:
            return 204, {}, {}
        vm["properties"]["provisioningState"] = "Deleting"
        op = self.operations.start(seconds=self.delete_seconds, on_done=lambda: self._remove(rid))
        return 202, {}, self._lro(sub, str(vm["location"]), op, base_url)

    def _remove(self, rid: str) -> None:
        """The VM is gone; its disk and NICs go or stay as their deleteOptions say."""
        vm = self.vms.remove(rid)
        self._power.pop(rid.lower(), None)
        if vm is None:
            return
        props = vm["properties"]
        os_disk = props["storageProfile"]["osDisk"]
        disk_id = (os_disk.get("managedDisk") or {}).get("id")
        if disk_id:
            if os_disk.get("deleteOption") == "Delete":
                self.disks.remove(disk_id)
            elif (disk := self.disks.live(disk_id)) is not None:
                disk.pop("managedBy", None)
                disk["properties"]["diskState"] = "Unattached"
        for ref in props["networkProfile"]["networkInterfaces"]:
            delete = (ref.get("properties") or {}).get("deleteOption") == "Delete"
            self.nics.release(str(ref["id"]), delete=delete)

    def _delete_disk(self, sub: str, rid: str, base_url: str) -> Answer:
        disk = self.disks.live(rid)
        if disk is None:
            return 204, {}, {}
        if disk.get("managedBy"):
            raise ArmFailure(
                409,
                "OperationNotAllowed",
                f"Disk {rid.rsplit('/', 1)[-1]} is attached to VM {disk['managedBy']}.",
            )
        op = self.operations.start(
            seconds=self.delete_seconds, on_done=lambda: self._disk_gone(rid)
        )
        return 202, {}, self._lro(sub, str(disk["location"]), op, base_url)

    def _disk_gone(self, rid: str) -> None:
        self.disks.remove(rid)

    # -- what the sandbox does to VMs ---------------------------------------------------
    def evict(self, name_or_id: str) -> Eviction:
        """Evict a Spot VM as Azure does: gone (with its disk and NICs as their deleteOptions
        say) under eviction policy Delete, deallocated under Deallocate."""
        self.operations.settle()
        vm = self.find(name_or_id)
        if vm is None:
            raise KeyError(f"no VM {name_or_id}")
        rid = str(vm["id"])
        props = vm["properties"]
        if props.get("priority") != "Spot":
            raise ValueError(f"VM {vm['name']} is not a Spot VM")
        policy = str(props.get("evictionPolicy") or "Deallocate")
        if policy == "Delete":
            self._remove(rid)
        else:
            self._power[rid.lower()] = DEALLOCATED
        event = Eviction(rid, str(vm["name"]), policy, datetime.datetime.now(datetime.UTC))
        with self._lock:
            self.evictions.append(event)
        return event

    def find(self, name_or_id: str) -> dict[str, Any] | None:
        """A VM by its resource id, or by its name alone (any group)."""
        if name_or_id.startswith("/"):
            return self.vms.live(name_or_id)
        for vm in self.vms.all():
            if str(vm["name"]).lower() == name_or_id.lower():
                return self.vms.live(str(vm["id"]))
        return None

    def is_running(self, name_or_id: str) -> bool:
        """Whether the VM is created and running (not deallocated, evicted or gone)."""
        self.operations.settle()
        vm = self.find(name_or_id)
        if vm is None or vm["properties"].get("provisioningState") != "Succeeded":
            return False
        return self._power.get(str(vm["id"]).lower()) == RUNNING

    def running(self) -> list[dict[str, Any]]:
        """Every VM created and running (what a node simulator boots)."""
        self.operations.settle()
        return [
            vm
            for vm in self.vms.all()
            if vm["properties"].get("provisioningState") == "Succeeded"
            and self._power.get(str(vm["id"]).lower()) == RUNNING
        ]

    def clear(self) -> None:
        self.vms.clear()
        self.disks.clear()
        self.capacity.clear()
        self.custom_data.clear()
        self._power.clear()
        with self._lock:
            self.evictions.clear()
