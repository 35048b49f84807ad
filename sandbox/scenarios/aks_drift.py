"""The ``drift`` scenario's change on Azure: the pool's AKSNodeClass changes under its nodes.

On EC2 the scenario changes the NodePool's requirements; on Azure it changes what a node
class is for, as an operator would: the pool gets an AKSNodeClass of its own (the default
class's spec), and once the nodes run, its OS disk size is changed. Every node launched from
the class as it was is now drifted (``NodeClassDrift``: the class's hash differs from the
one its claim was launched with); the replacements must be VMs with the new OS disk size,
read from the VMs themselves (ARM, not Joinery's annotations).
"""

from __future__ import annotations

from typing import Any

from activities.kubernetes.resources import AKSNODECLASS
from sandbox.scenarios.common import Sandbox

# The OS disk the drifted class asks for (the default class leaves the default, 128 GB).
NEW_OS_DISK_GB = 64


def own_nodeclass(sandbox: Sandbox, name: str) -> None:
    """An AKSNodeClass ``name`` with the default class's spec."""
    default = sandbox.custom.get_cluster_custom_object(
        AKSNODECLASS.group, AKSNODECLASS.version, AKSNODECLASS.plural, "default"
    )
    body = {
        "apiVersion": AKSNODECLASS.api_version,
        "kind": AKSNODECLASS.kind,
        "metadata": {"name": name},
        "spec": dict(default.get("spec") or {}),
    }
    sandbox.custom.create_cluster_custom_object(
        AKSNODECLASS.group, AKSNODECLASS.version, AKSNODECLASS.plural, body
    )


def change_nodeclass(sandbox: Sandbox, name: str) -> str:
    """Change the class's OS disk size; what was changed, for the log."""
    sandbox.custom.patch_cluster_custom_object(
        AKSNODECLASS.group,
        AKSNODECLASS.version,
        AKSNODECLASS.plural,
        name,
        {"spec": {"osDiskSizeGB": NEW_OS_DISK_GB}},
    )
    return f"AKSNodeClass {name}'s osDiskSizeGB to {NEW_OS_DISK_GB}"


def delete_nodeclass(sandbox: Sandbox, name: str) -> None:
    sandbox.delete_custom(AKSNODECLASS, name)


def os_disks(sandbox: Sandbox, vm_names: set[str]) -> dict[str, int | None]:
    """The OS disk size (GB) of each named VM, as ARM describes it."""
    from sandbox.scenarios.azure_view import AzureView

    view = sandbox.cloud
    assert isinstance(view, AzureView)
    out: dict[str, int | None] = {}
    for vm in view.compute.virtual_machines.list(view.resource_group):
        if str(vm.name) in vm_names:
            disk: Any = vm.storage_profile.os_disk if vm.storage_profile else None
            out[str(vm.name)] = disk.disk_size_gb if disk is not None else None
    return out


def check_rolled(sandbox: Sandbox, node_names: set[str]) -> list[str]:
    """Failures: a replacement VM whose OS disk is not the changed class's."""
    sizes = os_disks(sandbox, node_names)
    return [
        f"replacement VM {vm} has a {size} GB OS disk; the class asks for {NEW_OS_DISK_GB}"
        for vm, size in sorted(sizes.items())
        if size != NEW_OS_DISK_GB
    ] + [f"no VM for node {n}" for n in sorted(node_names - set(sizes))]
