"""Issue 32's whole Azure path under exactly the roles in deploy/azure/, RBAC emulated.

For after azvms and azdeploy are merged (it needs AzureProvider.attach_machines): the node
class's status (subnet, images), the catalog, two launches (NIC, then VM with the kubelet
identity), get, find, list, leaked, garbage collection and a deletion (VM, NIC, disk) run
through sandbox.azure.authorization.EnforcingTransport with the three roles assigned where
docs/azure.md step 4 assigns them. Nothing is refused, and every action of the roles is
used, so the roles are both enough and no more than the lifecycle needs.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from activities.azure import permissions as P
from sandbox.azure.authorization import Authorizer, role_assignments
from sandbox.azure.server import AzureServer
from tests.component.azure.test_azure_launch import nodeclass, request
from tests.component.azure.test_azure_roles_enforced import ROLES
from tests.support.azure_provider import RG, SUBNET, SUBSCRIPTION, azure_provider

SUB = f"/subscriptions/{SUBSCRIPTION}"
NODE_RG = f"{SUB}/resourceGroups/{RG}"
KUBELET = f"{NODE_RG}/providers/Microsoft.ManagedIdentity/userAssignedIdentities/kubelet"


def test_the_lifecycle_runs_under_exactly_the_documented_roles(azure: AzureServer) -> None:
    scopes = {P.NODE_GROUP: [NODE_RG], P.SUBNET: [SUBNET], P.SUBSCRIPTION: [SUB]}
    authorizer = Authorizer(role_assignments(ROLES, scopes))
    provider = azure_provider(azure, authorizer=authorizer, node_identity=KUBELET)
    assert provider.machines is not None

    nc = nodeclass()
    status = provider.nodeclass_status(nc)
    assert all(c.status == "True" for c in status.conditions), status
    kept = provider.launch(request("kept"), nc)
    leaked = provider.launch(request("leaked"), nc)
    assert provider.get(kept.instance_id)
    assert provider.find_by_nodeclaim("kept") is not None
    assert len(provider.list_owned("default")) == 2
    later = datetime.now(UTC) + timedelta(minutes=5)
    assert [i.id for i in provider.leaked(["kept"], later, timedelta(seconds=30))] == [
        leaked.instance_id
    ]
    provider.garbage_collect(now=datetime.now(UTC))
    assert any(provider.delete(leaked.instance_id) for _ in range(10))

    refused = [(a, r) for a, r, ok in authorizer.checks if not ok]
    assert refused == []
    assert authorizer.actions_checked() == set(P.actions())
    assert authorizer.polls > 0  # the creations and deletions were followed
