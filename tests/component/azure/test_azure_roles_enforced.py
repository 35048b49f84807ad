"""The worker's Azure calls under exactly the roles in deploy/azure/, with RBAC emulated.

The emulator authorizes nothing, so each SDK request goes through
``sandbox.azure.authorization.EnforcingTransport``: allowed only when an assignment of the
shipped roles, at the scope an operator gives it (docs/azure.md step 4), holds its action,
and each resource its body links to is allowed too. The catalog runs through the emulator
under the roles; what the lifecycle's requests need (a NIC in a subnet of another resource
group, a VM on that NIC with the kubelet identity) is checked on the SDK's own requests.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from azure.core.exceptions import HttpResponseError

from activities.azure import permissions as P
from activities.azure.arm_errors import AzureError
from sandbox.azure.authorization import (
    Assignment,
    Authorizer,
    assign,
    role_assignments,
)
from sandbox.azure.server import AzureServer
from tests.component.azure.conftest import SUBSCRIPTION
from tests.support.azure_provider import azure_provider
from tests.support.azure_sdk_calls import recorded

ROLES = {
    scope: json.loads(
        (Path(__file__).resolve().parents[3] / "deploy" / "azure" / name)
        .read_text()
        .replace("<subscription-id>", SUBSCRIPTION)
    )
    for scope, name in P.ROLE_FILES.items()
}
SUB = f"/subscriptions/{SUBSCRIPTION}"
NODE_RG = f"{SUB}/resourceGroups/MC_prod_prod-east_eastus"
# a bring-your-own VNet in its own group
SUBNET = f"{SUB}/resourceGroups/net/providers/Microsoft.Network/virtualNetworks/vnet/subnets/nodes"
NIC = f"{NODE_RG}/providers/Microsoft.Network/networkInterfaces/aks-default-abcde"
KUBELET = (
    f"{NODE_RG}/providers/Microsoft.ManagedIdentity/userAssignedIdentities/prod-east-agentpool"
)
AS_DOCUMENTED = {P.NODE_GROUP: [NODE_RG], P.SUBNET: [SUBNET], P.SUBSCRIPTION: [SUB]}


def test_the_catalog_runs_under_the_documented_roles(azure: AzureServer) -> None:
    authorizer = Authorizer(role_assignments(ROLES, AS_DOCUMENTED))
    types = azure_provider(azure, authorizer=authorizer).instance_types()
    assert types
    assert authorizer.checks and all(ok for _, _, ok in authorizer.checks)
    assert authorizer.actions_checked() == {"Microsoft.Compute/skus/read"}


def test_without_the_catalog_reader_arm_refuses_the_catalog(azure: AzureServer) -> None:
    scopes = {k: v for k, v in AS_DOCUMENTED.items() if k != P.SUBSCRIPTION}
    authorizer = Authorizer(role_assignments(ROLES, scopes))
    with pytest.raises(AzureError) as refused:  # the seam's error, not the SDK's
        azure_provider(azure, authorizer=authorizer).instance_types()
    assert not refused.value.retryable
    assert refused.value.code == "AuthorizationFailed"
    assert "'Microsoft.Compute/skus/read' over scope" in str(refused.value)
    cause = refused.value.__cause__
    assert isinstance(cause, HttpResponseError) and cause.status_code == 403


def _nic_put() -> tuple[str, str, Any]:
    """The NIC as ARM takes it (the SDK accepts the JSON body as it is)."""
    nic = {
        "location": "eastus",
        "properties": {
            "enableAcceleratedNetworking": True,
            "ipConfigurations": [
                {"name": "ipconfig1", "properties": {"primary": True, "subnet": {"id": SUBNET}}}
            ],
        },
    }
    group, name = NODE_RG.split("/")[-1], NIC.split("/")[-1]
    return recorded("network", "network_interfaces", "begin_create_or_update", group, name, nic)


def _vm_put() -> tuple[str, str, Any]:
    vm = {
        "location": "eastus",
        "identity": {"type": "UserAssigned", "userAssignedIdentities": {KUBELET: {}}},
        "properties": {
            "networkProfile": {"networkInterfaces": [{"id": NIC, "properties": {"primary": True}}]},
        },
    }
    group = NODE_RG.split("/")[-1]
    return recorded(
        "compute", "virtual_machines", "begin_create_or_update", group, "aks-default-abcde", vm
    )


def _denials(assignments: list[Assignment], *requests: tuple[str, str, Any]) -> list[str]:
    authorizer = Authorizer(assignments)
    return [
        f"{action} @ {scope.rsplit('/', 1)[-1]}"
        for method, path, body in requests
        for action, scope in authorizer.denials(method, path, body)
    ]


def test_a_nic_and_its_vm_need_the_links_at_the_linked_resources() -> None:
    """A NIC in a subnet of another group, and a VM on it with the kubelet identity: allowed
    with the roles where docs/azure.md assigns them, and each link refused where it is not."""
    nic, vm = _nic_put(), _vm_put()
    documented = role_assignments(ROLES, AS_DOCUMENTED)
    assert _denials(documented, nic, vm) == []
    # the subnet joiner on the node resource group does not reach a subnet in another group
    on_node_rg = role_assignments(ROLES, {**AS_DOCUMENTED, P.SUBNET: [NODE_RG]})
    assert _denials(on_node_rg, nic, vm) == [
        "Microsoft.Network/virtualNetworks/subnets/join/action @ nodes"
    ]
    # the kubelet identity elsewhere needs the assign action there
    other_group = KUBELET.replace(NODE_RG, f"{SUB}/resourceGroups/ids")
    elsewhere = vm[0], vm[1], json.loads(json.dumps(vm[2]).replace(KUBELET, other_group))
    assert _denials(documented, elsewhere) == [
        "Microsoft.ManagedIdentity/userAssignedIdentities/assign/action @ prod-east-agentpool"
    ]


def test_each_role_alone_is_not_enough() -> None:
    """Without the provisioner no NIC or VM is written; the catalog reader at the
    subscription grants no write anywhere under it."""
    nic, vm = _nic_put(), _vm_put()
    no_provisioner = role_assignments(
        ROLES, {k: v for k, v in AS_DOCUMENTED.items() if k != P.NODE_GROUP}
    )
    assert sorted(_denials(no_provisioner, nic, vm)) == [
        "Microsoft.Compute/virtualMachines/write @ aks-default-abcde",
        "Microsoft.ManagedIdentity/userAssignedIdentities/assign/action @ prod-east-agentpool",
        "Microsoft.Network/networkInterfaces/join/action @ aks-default-abcde",
        "Microsoft.Network/networkInterfaces/write @ aks-default-abcde",
    ]
    reader = [assign(ROLES[P.SUBSCRIPTION], SUB)]
    assert sorted(_denials(reader, nic, vm)) == sorted(
        [
            *_denials(no_provisioner, nic, vm),
            "Microsoft.Network/virtualNetworks/subnets/join/action @ nodes",
        ]
    )


def test_operation_polls_pass_and_other_subscription_reads_do_not() -> None:
    """The status of a long-running operation is followed without a role (ARM lets its caller
    poll it); any other subscription-wide read is checked as usual."""
    authorizer = Authorizer([assign(ROLES[P.NODE_GROUP], NODE_RG)])
    for poll in (
        f"{SUB}/providers/Microsoft.Network/locations/eastus/operations/abc",
        f"{SUB}/providers/Microsoft.Compute/locations/eastus/operations/abc",
        f"{SUB}/providers/Microsoft.Compute/locations/eastus/operationResults/abc",
    ):
        assert authorizer.denials("GET", poll) == []
    assert authorizer.polls == 3 and authorizer.checks == []
    usages = f"{SUB}/providers/Microsoft.Compute/locations/eastus/usages"
    assert authorizer.denials("GET", usages) == [
        ("Microsoft.Compute/locations/usages/read", usages)
    ]
    # a DELETE of an operation is no poll
    op = f"{SUB}/providers/Microsoft.Compute/locations/eastus/operations/abc"
    assert authorizer.denials("DELETE", op) != []
