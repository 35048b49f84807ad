"""Every Azure SDK call the worker makes, and the Azure RBAC actions each one needs.

One table, three readers: the custom role definitions in deploy/azure/ are built from it,
docs/azure.md prints them with the reason for each action, and a test checks the table
against the code (every azure-mgmt call in the worker's code is listed here, each entry's
own action is the one the SDK's request URL maps to, and no entry is listed that the code
does not call), so the roles cannot drift from what the worker does.

A call needs its own action (``PUT .../virtualMachines/{name}`` is
``Microsoft.Compute/virtualMachines/write``) and sometimes more, for what its request body
links to: a NIC placed in a subnet joins the subnet, a VM naming a NIC joins the NIC, a VM
given a user-assigned identity assigns it. Each action is granted at one of three scopes:

- ``NODE_GROUP``: the cluster's node resource group (``MC_<group>_<cluster>_<region>``), where
  the VMs, their NICs and OS disks live, and AKS's kubelet identity too;
- ``SUBNET``: the node subnet (in the node resource group when AKS made the VNet, else in
  the VNet's own group: assign there, on the subnet itself);
- ``SUBSCRIPTION``: reads whose URL names no resource group (the region's Resource SKUs,
  AKS's community gallery image versions).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

NODE_GROUP = "node resource group"
SUBNET = "node subnet"
SUBSCRIPTION = "subscription"
SCOPES = (NODE_GROUP, SUBNET, SUBSCRIPTION)


@dataclass(frozen=True)
class Grant:
    action: str
    scope: str


@dataclass(frozen=True)
class Call:
    """One SDK operation: ``sdk`` is the management client (compute, network, resource),
    ``group`` its operations attribute and ``method`` the method called on it. ``grants[0]``
    is the action of the request itself; the others are what its body links to."""

    sdk: str
    group: str
    method: str
    grants: tuple[Grant, ...]
    why: str

    @property
    def name(self) -> str:
        return f"{self.sdk}.{self.group}.{self.method}"


def _g(action: str, scope: str = NODE_GROUP) -> Grant:
    return Grant(action, scope)


VM_READ = _g("Microsoft.Compute/virtualMachines/read")
NIC_READ = _g("Microsoft.Network/networkInterfaces/read")

CALLS: tuple[Call, ...] = (
    # the catalog (activities/azure/catalog.py)
    Call(
        "compute",
        "resource_skus",
        "list",
        (_g("Microsoft.Compute/skus/read", SUBSCRIPTION),),
        "the region's VM sizes, their capabilities and restrictions (the catalog)",
    ),
    # node images (activities/azure/images.py)
    Call(
        "compute",
        "community_gallery_image_versions",
        "list",
        (_g("Microsoft.Compute/locations/communityGalleries/images/versions/read", SUBSCRIPTION),),
        "the newest AKS node image version of each image definition in the region",
    ),
    # the node subnet (the node class's vnetSubnetID, else the cluster's)
    Call(
        "network",
        "subnets",
        "get",
        (_g("Microsoft.Network/virtualNetworks/subnets/read", SUBNET),),
        "the node class's subnet exists (SubnetsReady) and its prefix",
    ),
    # NICs
    Call(
        "network",
        "network_interfaces",
        "begin_create_or_update",
        (
            _g("Microsoft.Network/networkInterfaces/write"),
            _g("Microsoft.Network/virtualNetworks/subnets/join/action", SUBNET),
        ),
        "each node's NIC, in the node subnet (joining it)",
    ),
    Call(
        "network",
        "network_interfaces",
        "get",
        (NIC_READ,),
        "a retried launch finds the NIC the first attempt made",
    ),
    Call(
        "network",
        "network_interfaces",
        "list",
        (NIC_READ,),
        "garbage collection: the cluster's NICs with no VM",
    ),
    Call(
        "network",
        "network_interfaces",
        "begin_delete",
        (_g("Microsoft.Network/networkInterfaces/delete"),),
        "a retired node's NIC, and orphaned ones",
    ),
    # VMs
    Call(
        "compute",
        "virtual_machines",
        "begin_create_or_update",
        (
            _g("Microsoft.Compute/virtualMachines/write"),
            _g("Microsoft.Network/networkInterfaces/join/action"),
            _g("Microsoft.ManagedIdentity/userAssignedIdentities/assign/action"),
        ),
        "each node's VM, on its NIC, with the kubelet identity assigned",
    ),
    Call(
        "compute",
        "virtual_machines",
        "get",
        (VM_READ,),
        "a launch's VM (adopted after a crash), its state and zone",
    ),
    Call(
        "compute",
        "virtual_machines",
        "list",
        (VM_READ,),
        "the cluster's VMs: garbage collection and claims whose VM is gone",
    ),
    Call(
        "compute",
        "virtual_machines",
        "begin_delete",
        (_g("Microsoft.Compute/virtualMachines/delete"),),
        "a retired node's VM, and orphaned ones",
    ),
    # disks
    Call(
        "compute",
        "disks",
        "begin_delete",
        (_g("Microsoft.Compute/disks/delete"),),
        "a retired VM's OS disk",
    ),
    Call(
        "compute",
        "disks",
        "get",
        (_g("Microsoft.Compute/disks/read"),),
        "the OS disk's deletion is confirmed (gone) before the claim lets go",
    ),
)

BY_NAME: dict[str, Call] = {c.name: c for c in CALLS}

# What a request body can link to, by its ARM property, and the action linking it needs: a
# call whose body (a model's keyword or a JSON key, in camelCase or the SDK's snake_case)
# names one needs that action too. The test finds these properties in the Azure code, so a
# new link (a load balancer pool, a security group) fails until its action is granted.
LINKS: dict[str, Grant] = {
    "subnet": _g("Microsoft.Network/virtualNetworks/subnets/join/action", SUBNET),
    "networkInterfaces": _g("Microsoft.Network/networkInterfaces/join/action"),
    "userAssignedIdentities": _g("Microsoft.ManagedIdentity/userAssignedIdentities/assign/action"),
    "loadBalancerBackendAddressPools": _g(
        "Microsoft.Network/loadBalancers/backendAddressPools/join/action"
    ),
    "networkSecurityGroup": _g("Microsoft.Network/networkSecurityGroups/join/action"),
    "publicIPAddress": _g("Microsoft.Network/publicIPAddresses/join/action"),
    "applicationSecurityGroups": _g("Microsoft.Network/applicationSecurityGroups/joinIps/action"),
    "diskEncryptionSet": _g("Microsoft.Compute/diskEncryptionSets/read"),
    "capacityReservationGroup": _g("Microsoft.Compute/capacityReservationGroups/deploy/action"),
}

# The role names operators create; the deploy/azure files carry them.
ROLE_NAMES = {
    NODE_GROUP: "Joinery Node Provisioner",
    SUBNET: "Joinery Subnet Joiner",
    SUBSCRIPTION: "Joinery Catalog Reader",
}
ROLE_FILES = {
    NODE_GROUP: "joinery-node-provisioner.json",
    SUBNET: "joinery-subnet-joiner.json",
    SUBSCRIPTION: "joinery-catalog-reader.json",
}
_DESCRIPTIONS = {
    NODE_GROUP: "What Joinery does to its nodes' VMs, NICs and disks; assign it on the "
    "cluster's node resource group.",
    SUBNET: "Reading and joining the node subnet; assign it on the subnet (or the node "
    "resource group when AKS made the VNet).",
    SUBSCRIPTION: "The subscription-wide reads Joinery makes: Resource SKUs and AKS's "
    "community gallery image versions; assign it on the subscription.",
}
SUBSCRIPTION_PLACEHOLDER = "<subscription-id>"


def actions(scope: str | None = None) -> list[str]:
    """Every action some call needs (at ``scope``, or at any)."""
    return sorted({g.action for c in CALLS for g in c.grants if scope in (None, g.scope)})


def role_definition(scope: str, subscription: str = SUBSCRIPTION_PLACEHOLDER) -> dict[str, Any]:
    """The custom role for one scope, as ``az role definition create --role-definition``
    takes it (assignable anywhere in the subscription; where it is assigned scopes it)."""
    return {
        "Name": ROLE_NAMES[scope],
        "IsCustom": True,
        "Description": _DESCRIPTIONS[scope],
        "Actions": actions(scope),
        "NotActions": [],
        "DataActions": [],
        "NotDataActions": [],
        "AssignableScopes": [f"/subscriptions/{subscription}"],
    }


def role_json(scope: str) -> str:
    """A role file's exact text (deploy/azure/<file>)."""
    return json.dumps(role_definition(scope), indent=2) + "\n"


def write_roles(folder: str) -> list[str]:
    """Write each role's file into ``folder`` (deploy/azure); returns the paths written."""
    from pathlib import Path

    written = []
    for scope, name in ROLE_FILES.items():
        path = Path(folder) / name
        path.write_text(role_json(scope))
        written.append(str(path))
    return written


if __name__ == "__main__":  # python -m activities.azure.permissions deploy/azure
    import sys

    print("\n".join(write_roles(sys.argv[1] if len(sys.argv) > 1 else "deploy/azure")))
