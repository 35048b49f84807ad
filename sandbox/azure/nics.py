"""Emulated ``Microsoft.Network/networkInterfaces``: create-or-update and delete as long-
running operations, get, and list per resource group in pages.

As Azure does: a NIC's subnet must exist (``arm_reads`` seeds subnets), each gets the next
private address of its subnet, a NIC attached to a VM cannot be deleted (``NicInUse``) until
the VM is gone, and a VM's deletion detaches (or, with deleteOption Delete, deletes) it.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field
from typing import Any

from sandbox.azure.arm_reads import ArmReads, NotFound
from sandbox.azure.operations import Operations, async_headers
from sandbox.azure.resource_table import Answer, ArmFailure, ResourceTable, listed
from sandbox.azure.resource_type import ResourceType, put_fields, stored

NIC = ResourceType("Microsoft.Network", "networkInterfaces")


@dataclass
class NetworkInterfaces:
    arm: ArmReads
    operations: Operations
    table: ResourceTable = field(default_factory=lambda: ResourceTable("network interface"))
    page_size: int = 50
    poll_after: int = 0  # Retry-After on LRO answers (seconds)
    op_seconds: float = 0.2  # an operation ends this long after it starts, polled or not
    _addresses: itertools.count[int] = field(default_factory=lambda: itertools.count(4))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def handle(
        self, method: str, path: str, query: dict[str, str], body: dict[str, Any], base_url: str
    ) -> Answer | None:
        self.operations.settle()
        if m := NIC.item_path.match(path):
            rid = path
            if method == "GET":
                return 200, self.table.get(rid), {}
            if method == "PUT":
                return self._put(m["sub"], m["rg"], m["name"], rid, body, base_url)
            if method == "DELETE":
                return self._delete(m["sub"], rid, base_url)
        if method == "GET" and (m := NIC.list_path.match(path)):
            return listed(
                self.table.in_group(m["sub"], m["rg"]), base_url, path, query, self.page_size
            )
        return None

    def _put(
        self, sub: str, rg: str, name: str, rid: str, body: dict[str, Any], base_url: str
    ) -> Answer:
        location, props = put_fields(body)
        configs = list(props.get("ipConfigurations") or [])
        if not configs:
            raise ArmFailure(
                400,
                "InvalidRequestFormat",
                f"Network interface {rid} must have one or more IP configurations.",
            )
        existing = self.table.live(rid)
        out_configs = []
        for i, cfg in enumerate(configs):
            cprops = dict(cfg.get("properties") or {})
            subnet = str((cprops.get("subnet") or {}).get("id") or "")
            try:
                self.arm.subnet(subnet)
            except NotFound:
                raise ArmFailure(
                    400,
                    "InvalidResourceReference",
                    f"Resource {subnet} referenced by resource {rid} was not found.",
                ) from None
            old = (existing or {}).get("properties", {}).get("ipConfigurations") or []
            address = (
                old[i]["properties"]["privateIPAddress"] if i < len(old) else self._next_address()
            )
            cprops.update(
                {
                    "privateIPAddress": address,
                    "privateIPAllocationMethod": cprops.get("privateIPAllocationMethod")
                    or "Dynamic",
                    "privateIPAddressVersion": "IPv4",
                    "primary": cprops.get("primary", i == 0),
                    "provisioningState": "Succeeded",
                }
            )
            cfg_name = cfg.get("name") or f"ipconfig{i + 1}"
            out_configs.append(
                {"name": cfg_name, "id": f"{rid}/ipConfigurations/{cfg_name}", "properties": cprops}
            )
        props["ipConfigurations"] = out_configs
        props["provisioningState"] = "Succeeded"
        props.setdefault("enableAcceleratedNetworking", False)
        props.setdefault("enableIPForwarding", False)
        if existing is not None and "virtualMachine" in existing.get("properties", {}):
            props["virtualMachine"] = existing["properties"]["virtualMachine"]
        etag = 'W/"00000000-0000-0000-0000-000000000001"'
        self.table.put(stored(NIC, rid, name, location, body, etag=etag, properties=props))
        op = self.operations.start(seconds=self.op_seconds)
        headers = async_headers(base_url, sub, NIC.namespace, location, op, self.poll_after)
        return (200 if existing is not None else 201), self.table.get(rid), headers

    def _next_address(self) -> str:
        with self._lock:
            n = next(self._addresses)
        return f"10.224.{n // 250}.{n % 250 + 4}"

    def _delete(self, sub: str, rid: str, base_url: str) -> Answer:
        nic = self.table.live(rid)
        if nic is None:
            return 204, {}, {}
        vm = (nic.get("properties") or {}).get("virtualMachine")
        if vm:
            raise ArmFailure(
                400,
                "NicInUse",
                f"Network Interface {rid} is used by existing resource {vm['id']}. In order to "
                "delete the network interface, it must be dissociated from the resource.",
            )
        location = str(nic.get("location") or "")
        nic["properties"]["provisioningState"] = "Deleting"
        op = self.operations.start(seconds=self.op_seconds, on_done=lambda: self._gone(rid))
        return 202, {}, async_headers(base_url, sub, NIC.namespace, location, op, self.poll_after)

    def _gone(self, rid: str) -> None:
        self.table.remove(rid)

    # -- what the VMs do to their NICs --------------------------------------------------
    def attach(self, nic_id: str, vm_id: str) -> None:
        nic = self.table.live(nic_id)
        if nic is not None:
            nic["properties"]["virtualMachine"] = {"id": vm_id}

    def attached_to(self, nic_id: str) -> str | None:
        nic = self.table.live(nic_id)
        vm = (nic or {}).get("properties", {}).get("virtualMachine")
        return str(vm["id"]) if vm else None

    def exists(self, nic_id: str) -> bool:
        return self.table.live(nic_id) is not None

    def release(self, nic_id: str, *, delete: bool) -> None:
        """The VM using it is gone: detach it, or delete it (deleteOption Delete)."""
        if delete:
            self.table.remove(nic_id)
            return
        nic = self.table.live(nic_id)
        if nic is not None:
            nic["properties"].pop("virtualMachine", None)

    def accelerated(self, nic_id: str) -> bool:
        nic = self.table.live(nic_id)
        return bool((nic or {}).get("properties", {}).get("enableAcceleratedNetworking"))
