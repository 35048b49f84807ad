"""A NodeClaim's life on Azure through the same lifecycle activities as on EC2, on a real
control plane and the emulated Azure: prepare, launch (twice: one VM), the simulated
kubelet on the VM registers its Node, and termination removes the VM, its NIC and disk."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from activities.azure.provider import AzureProvider
from activities.azure.vms import TAG_CLUSTER
from activities.cloud.launch import LaunchRequest
from activities.deps import Deps
from activities.garbage import launch_templates, orphan_instances
from activities.garbage.types import CollectInput
from activities.kubernetes import custom_objects, nodeclaims
from activities.kubernetes.client import Kube
from activities.kubernetes.errors import AlreadyExists, NotFound
from activities.kubernetes.resources import AKSNODECLASS, NODECLAIM, NODEPOOL
from activities.lifecycle import claims, launch, registration, termination
from activities.lifecycle.types import InstanceInput, RegisterInput
from models import aksnodeclass_hash
from models.aksnodeclass import AKSNodeClass
from sandbox.azure.server import AzureServer
from sandbox.azure.vm_nodes import vm_node_maker
from sandbox.nodes import register_node
from tests.support.azure_provider import RG, SUBNET, SUBSCRIPTION, azure_provider
from tests.support.kube_objects import condition
from tests.support.waiting import eventually

POOL = "azpool"
CLASS = "azclass"
REF = {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": CLASS}
REQUIREMENTS = [
    {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["Standard_D2s_v3"]},
    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
    {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["eastus-3"]},
]


@pytest.fixture(scope="module", autouse=True)
def _no_pool_left(admin: Kube) -> Iterator[None]:
    """The control plane is the process's: an AKS pool left there would be in every later
    test's cluster (a live `joinery explain` then asks for an Azure catalog)."""
    yield
    for crd, name in ((NODEPOOL, POOL), (AKSNODECLASS, CLASS)):
        with contextlib.suppress(NotFound):
            custom_objects.delete(admin, crd, name)


@pytest.fixture
def deps(kube: Kube, admin: Kube, azure: AzureServer) -> Deps:
    body: dict[str, Any] = {
        "apiVersion": "karpenter.azure.com/v1beta1",
        "kind": "AKSNodeClass",
        "metadata": {"name": CLASS},
        "spec": {"vnetSubnetID": SUBNET, "imageFamily": "AzureLinux"},
    }
    pool = {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": POOL},
        "spec": {"template": {"spec": {"nodeClassRef": REF, "requirements": REQUIREMENTS}}},
    }
    with contextlib.suppress(AlreadyExists):
        custom_objects.create(admin, AKSNODECLASS, body)
    with contextlib.suppress(AlreadyExists):
        custom_objects.create(admin, NODEPOOL, pool)
    return Deps(kube=kube, cloud=azure_provider(azure))


def test_a_claims_life_on_azure(deps: Deps, admin: Kube, azure: AzureServer) -> None:
    name = f"az-{uuid.uuid4().hex[:6]}"
    custom_objects.create(
        admin,
        NODECLAIM,
        {
            "metadata": {"name": name, "labels": {"karpenter.sh/nodepool": POOL}},
            "spec": {
                "nodeClassRef": REF,
                "requirements": REQUIREMENTS,
                "resources": {"requests": {"cpu": "1", "memory": "1Gi", "pods": "2"}},
            },
        },
    )
    claim = claims.prepare(deps, name)
    assert claim is not None and claim.nodeclass == CLASS

    out = launch.launch(deps, claim)
    again = launch.launch(deps, claim)  # a retried launch adopts the VM
    assert again.instance_id == out.instance_id
    assert len(azure.emulator.vms.vms.all()) == 1
    vm_name = f"aks-{name}"
    assert out.provider_id == (
        f"azure:///subscriptions/{SUBSCRIPTION}/resourceGroups/{RG}/providers/"
        f"Microsoft.Compute/virtualMachines/{vm_name}"
    )
    assert out.zone == "eastus-3" and out.instance_type == "Standard_D2s_v3"
    assert out.image_id.startswith("/CommunityGalleries/AKSAzureLinux")
    stored = nodeclaims.get(admin, name)
    assert stored["status"]["providerID"] == out.provider_id
    assert stored["metadata"]["labels"]["node.kubernetes.io/instance-type"] == "Standard_D2s_v3"
    live_class = AKSNodeClass.model_validate(custom_objects.get(admin, AKSNODECLASS, CLASS))
    noted = stored["metadata"]["annotations"]
    assert noted.items() >= aksnodeclass_hash.hash_annotations(live_class).items()
    assert condition(stored, "Launched")["status"] == "True"  # type: ignore[index]

    # the VM's kubelet registers its Node (as the custom data says), and the claim finds it
    node = vm_node_maker(azure.emulator)(stored)
    assert node is not None
    register_node(admin, node)
    node_name = eventually(
        lambda: registration.register(deps, RegisterInput(claim, out.provider_id))
    )
    assert node_name == vm_name

    # termination: the VM, then its NIC and disk, found by providerID
    provider = deps.provider()
    assert isinstance(provider, AzureProvider)

    def gone() -> bool:
        return termination.terminate_instance(deps, InstanceInput(name, out.provider_id))

    assert eventually(gone)
    assert azure.emulator.vms.vms.all() == []
    assert azure.emulator.nics.table.all() == []
    assert azure.emulator.vms.disks.all() == []
    assert provider.find_by_nodeclaim(name) is None


def test_garbage_collection_on_azure(deps: Deps, admin: Kube, azure: AzureServer) -> None:
    """A VM whose claim is gone is deleted (its NIC and disk go with it, as their delete
    options say), and a NIC no VM holds goes once past its grace."""
    provider = deps.provider()
    assert isinstance(provider, AzureProvider) and provider.machines is not None
    provider.machines.vms.delete_wait_seconds = 0.0  # as in production: rounds come back
    request = LaunchRequest(
        f"gone-{uuid.uuid4().hex[:6]}", "uid", POOL, CLASS, requirements=REQUIREMENTS
    )
    leaked = provider.launch(
        request, AKSNodeClass.model_validate(custom_objects.get(admin, AKSNODECLASS, CLASS))
    )
    provider.machines.launcher._nic("aks-orphan", SUBNET, False, {TAG_CLUSTER: "joinery"})
    later = datetime.now(UTC) + timedelta(minutes=10)
    out = orphan_instances.collect(deps, CollectInput(), later)
    assert out.removed == [leaked.instance_id]
    assert eventually(lambda: provider.find_by_nodeclaim(request.nodeclaim_name) is None or None)
    assert azure.emulator.vms.vms.all() == []
    assert azure.emulator.vms.disks.all() == []
    launch_templates.collect(deps, CollectInput(), later)  # the orphan NIC is first seen
    gone = launch_templates.collect(deps, CollectInput(), later + timedelta(minutes=3))
    assert gone.removed == ["aks-orphan"]

    def no_nics() -> bool | None:
        azure.emulator.operations.settle()  # Azure finishes the deletion on its own time
        return azure.emulator.nics.table.all() == [] or None

    assert eventually(no_nics)
