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
from typing import Any

from activities.azure import permissions as P
from activities.azure.clients import compute_client, network_client
from activities.azure.nodeclasses import resolver_for
from activities.azure.pricing import AzurePricing
from activities.azure.provider import AzureProvider
from activities.cloud.options import ProviderOptions
from sandbox.azure.authorization import Authorizer, EnforcingTransport, role_assignments
from sandbox.azure.credential import FakeCredential
from sandbox.azure.server import AzureServer
from tests.component.azure.conftest import SUBSCRIPTION
from tests.component.azure.test_azure_launch import CA, RG, SUBNET, nodeclass, request
from tests.component.azure.test_azure_roles_enforced import ROLES

SUB = f"/subscriptions/{SUBSCRIPTION}"
NODE_RG = f"{SUB}/resourceGroups/{RG}"
KUBELET = f"{NODE_RG}/providers/Microsoft.ManagedIdentity/userAssignedIdentities/kubelet"


def test_the_lifecycle_runs_under_exactly_the_documented_roles(azure: AzureServer) -> None:
    azure.emulator.arm.add_resource_group(SUBSCRIPTION, RG, "eastus")
    azure.emulator.arm.add_subnet(SUBNET)
    scopes = {P.NODE_GROUP: [NODE_RG], P.SUBNET: [SUBNET], P.SUBSCRIPTION: [SUB]}
    authorizer = Authorizer(role_assignments(ROLES, scopes))

    def client_kwargs() -> dict[str, Any]:
        return {
            "endpoint": azure.endpoint,
            "credential": FakeCredential(),
            "ca_file": azure.ca_file,
            "retry_backoff_factor": 0.05,
            "retry_total": 2,
            "polling_interval": 0.05,
            "transport": EnforcingTransport(authorizer, connection_verify=azure.ca_file),
        }

    compute = compute_client(SUBSCRIPTION, **client_kwargs())
    network = network_client(SUBSCRIPTION, **client_kwargs())
    opts = ProviderOptions(
        provider="azure",
        cluster="joinery",
        region="eastus",
        subscription_id=SUBSCRIPTION,
        cluster_endpoint="https://joinery.hcp.eastus.azmk8s.io:443",
        cluster_ca_bundle=CA.decode(),
        kubernetes_version="1.33.0",
        node_resource_group=RG,
        tenant_id="11111111-1111-1111-1111-111111111111",
        kubelet_bootstrap_token="abcdef.0123456789abcdef",
        node_identities=(KUBELET,),
    )
    provider = AzureProvider(
        "eastus",
        compute,
        AzurePricing("eastus", fetch=None),
        nodeclasses=resolver_for(opts, compute, network=network),
    )
    provider.attach_machines(opts, network)
    assert provider.machines is not None
    provider.machines.vms.delete_wait_seconds = 2.0

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
