"""The Azure provider's VM lifecycle against the emulator, through the real SDKs: launch
(NIC then VM), adoption by a retried launch, each fault's outcome, deletion and garbage
collection."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from activities.azure.provider import AzureProvider
from activities.cloud import registry
from activities.cloud.errors import InsufficientCapacity, Throttled, TransientError
from activities.cloud.launch import LaunchRequest
from models.aksnodeclass import AKSNodeClass
from sandbox.azure.server import AzureServer
from sandbox.azure.vm_nodes import vm_node_maker
from sandbox.azure.worker_env import worker_env
from tests.support.azure_provider import CA, RG, SUBNET, SUBSCRIPTION, azure_provider
from worker.running.app import provider_options
from worker.running.settings import Settings, TemporalSettings

VM_PATH = f"/subscriptions/{SUBSCRIPTION}/resourceGroups/{RG}/providers/Microsoft.Compute"


@pytest.fixture
def provider(azure: AzureServer) -> AzureProvider:
    return azure_provider(azure)


def nodeclass(**spec: Any) -> AKSNodeClass:
    return AKSNodeClass.model_validate(
        {
            "metadata": {"name": "default"},
            "spec": {"vnetSubnetID": SUBNET, "tags": {"team/name": "infra"}, **spec},
        }
    )


def request(
    name: str = "default-abc12",
    sizes: tuple[str, ...] = ("Standard_D2s_v3", "Standard_D4s_v3"),
    capacity: str = "on-demand",
    zones: tuple[str, ...] = ("eastus-2",),
) -> LaunchRequest:
    return LaunchRequest(
        nodeclaim_name=name,
        nodeclaim_uid="uid-" + name,
        nodepool_name="default",
        nodeclass_name="default",
        requirements=[
            {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": list(sizes)},
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": [capacity]},
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": list(zones)},
        ],
        resources={"cpu": "500m", "memory": "1Gi"},
        labels={"team": "infra"},
    )


def vm_count(azure: AzureServer) -> int:
    return len(azure.emulator.vms.vms.all())


def test_launch_makes_the_nic_then_the_vm(azure: AzureServer, provider: AzureProvider) -> None:
    result = provider.launch(request(), nodeclass())
    name = "aks-default-abc12"
    # the cheaper of the two sizes by the public price list (D2s_v3 is half a D4s_v3)
    assert result.instance_type == "Standard_D2s_v3"
    assert result.zone == "eastus-2" and result.capacity_type == "on-demand"
    assert result.provider_id == (
        f"azure:///subscriptions/{SUBSCRIPTION}/resourceGroups/{RG}/providers/"
        f"Microsoft.Compute/virtualMachines/{name}"
    )
    assert provider.instance_id(result.provider_id) == result.instance_id
    assert result.subnet_id == SUBNET
    assert result.image_id.startswith("/CommunityGalleries/AKSUbuntu")
    assert result.labels["team"] == "infra" and result.labels["karpenter.sh/nodepool"] == "default"
    vm = azure.emulator.vms.find(name)
    assert vm is not None
    props = vm["properties"]
    assert props["hardwareProfile"]["vmSize"] == "Standard_D2s_v3"
    assert vm["zones"] == ["2"]
    assert "priority" not in props
    assert vm["tags"]["karpenter.azure.com_cluster"] == "joinery"
    assert vm["tags"]["karpenter.sh_nodepool"] == "default"
    assert vm["tags"]["karpenter.sh_nodeclaim"] == "default-abc12"
    assert vm["tags"]["team_name"] == "infra"
    assert vm["identity"]["type"] == "UserAssigned"
    os_disk = props["storageProfile"]["osDisk"]
    assert os_disk["diskSizeGB"] == 128 and os_disk["deleteOption"] == "Delete"
    # D2s_v3's 50 GiB cache cannot hold 128 GB: a managed disk
    assert "diffDiskSettings" not in os_disk
    custom = base64.b64decode(azure.emulator.vms.custom_data[vm["id"].lower()]).decode()
    assert custom.startswith("#cloud-config") and "joinery.hcp.eastus.azmk8s.io" in custom
    nic = azure.emulator.nics.table.get(props["networkProfile"]["networkInterfaces"][0]["id"])
    assert nic["name"] == name
    assert nic["properties"]["enableAcceleratedNetworking"] is True
    assert nic["properties"]["ipConfigurations"][0]["properties"]["subnet"]["id"] == SUBNET
    found = provider.find_by_nodeclaim("default-abc12")
    assert found is not None and found.id == result.instance_id
    assert [i.id for i in provider.list_owned("default")] == [result.instance_id]


def test_spot_and_ephemeral_os_disk(azure: AzureServer, provider: AzureProvider) -> None:
    result = provider.launch(
        request("spot-1", sizes=("Standard_D4s_v3",), capacity="spot"), nodeclass(osDiskSizeGB=64)
    )
    assert result.capacity_type == "spot"
    vm = azure.emulator.vms.find("aks-spot-1")
    assert vm is not None
    props = vm["properties"]
    assert props["priority"] == "Spot" and props["evictionPolicy"] == "Delete"
    assert props["billingProfile"]["maxPrice"] == -1
    os_disk = props["storageProfile"]["osDisk"]
    assert os_disk["diffDiskSettings"] == {"option": "Local", "placement": "CacheDisk"}
    assert os_disk["diskSizeGB"] == 64


def test_a_retried_launch_adopts_the_vm(azure: AzureServer, provider: AzureProvider) -> None:
    seen: list[tuple[str, str | None]] = []
    provider.observe = lambda method, seconds, error: seen.append((method, error))
    first = provider.launch(request("retry-1"), nodeclass())
    again = provider.launch(request("retry-1"), nodeclass())
    assert seen == [("Create", None), ("Create", None)]  # karpenter_cloudprovider_* metrics
    assert again.instance_id == first.instance_id and again.reused
    assert again.subnet_id == SUBNET
    assert vm_count(azure) == 1
    puts = [
        r
        for r in azure.emulator.requests
        if r[0] == "PUT" and "virtualMachines/aks-retry-1" in r[1]
    ]
    assert len(puts) == 1


def test_throttled_create_is_retried(azure: AzureServer, provider: AzureProvider) -> None:
    azure.emulator.faults.throttle(
        VM_PATH + "/virtualMachines/aks-thr", method="PUT", retry_after=0
    )
    result = provider.launch(request("thr"), nodeclass())
    assert result.instance_type == "Standard_D2s_v3"
    azure.emulator.faults.throttle(
        VM_PATH + "/virtualMachines/aks-thr2", method="PUT", retry_after=0, times=5
    )
    with pytest.raises(Throttled) as err:
        provider.launch(request("thr2"), nodeclass())
    assert err.value.retryable


def test_server_errors_and_timeouts_are_retryable(
    azure: AzureServer, provider: AzureProvider
) -> None:
    azure.emulator.faults.fail(
        VM_PATH + "/virtualMachines/aks-5xx",
        500,
        "InternalServerError",
        "boom",
        times=5,
        method="PUT",
    )
    with pytest.raises(TransientError) as err:
        provider.launch(request("5xx"), nodeclass())
    assert err.value.retryable
    # the next attempt, faults used up, launches (the NIC made before is the same NIC)
    assert provider.launch(request("5xx"), nodeclass()).instance_type == "Standard_D2s_v3"
    assert vm_count(azure) == 1
    # no answer at all (every try of the SDK's): retryable too
    azure.emulator.faults.timeout(
        VM_PATH + "/virtualMachines/aks-5xx", seconds=1.5, times=3, method="GET"
    )
    with pytest.raises(TransientError) as err:
        provider.find_by_nodeclaim("5xx")
    assert err.value.retryable
    found = provider.find_by_nodeclaim("5xx")
    assert found is not None and found.state == "succeeded"


@pytest.mark.parametrize(
    ("kind", "capacity", "marked"),
    [
        ("AllocationFailed", "on-demand", [("on-demand", "eastus-1"), ("spot", "eastus-3")]),
        ("ZonalAllocationFailed", "on-demand", [("on-demand", "eastus-2"), ("spot", "eastus-2")]),
        ("SkuNotAvailable", "spot", [("spot", "eastus-1")]),
        ("OverconstrainedZonalAllocationRequest", "spot", [("spot", "eastus-2")]),
        ("family-quota", "on-demand", [("on-demand", "eastus-3")]),
    ],
)
def test_capacity_refusals_mark_offerings_and_replan(
    azure: AzureServer,
    provider: AzureProvider,
    kind: str,
    capacity: str,
    marked: list[tuple[str, str]],
) -> None:
    azure.emulator.vms.capacity.refuse(kind, size="Standard_D2s_v3")
    with pytest.raises(InsufficientCapacity):
        provider.launch(request("ice", capacity=capacity), nodeclass())
    types = {it.name: it for it in provider.instance_types(nodeclass())}
    offerings = {(o.capacity_type, o.zone): o for o in types["Standard_D2s_v3"].offerings}
    for ct, zone in marked:
        assert not offerings[(ct, zone)].available, (ct, zone)
    assert vm_count(azure) == 0  # a Failed VM is removed, and its NIC
    assert azure.emulator.nics.table.all() == []
    # planned again: the next launch of the claim goes to what is left (the dearer size)
    again = provider.launch(request("ice", capacity=capacity), nodeclass())
    assert again.instance_type == "Standard_D4s_v3"


def test_low_priority_quota_marks_every_spot_offering(
    azure: AzureServer, provider: AzureProvider
) -> None:
    azure.emulator.vms.capacity.refuse("low-priority-quota")
    with pytest.raises(InsufficientCapacity):
        provider.launch(request("lp", capacity="spot"), nodeclass())
    assert all(
        not o.available
        for it in provider.instance_types(nodeclass())
        for o in it.offerings
        if o.capacity_type == "spot"
    )


def test_delete_removes_vm_nic_and_disk(azure: AzureServer, provider: AzureProvider) -> None:
    result = provider.launch(request("del"), nodeclass())
    assert azure.emulator.vms.disks.all()
    for _ in range(10):
        if provider.delete(result.instance_id):
            break
    else:
        pytest.fail("delete never finished")
    assert vm_count(azure) == 0
    assert azure.emulator.nics.table.all() == []
    assert azure.emulator.vms.disks.all() == []
    assert provider.delete(result.instance_id) is True  # idempotent
    assert provider.find_by_nodeclaim("del") is None


def test_garbage_collection(azure: AzureServer, provider: AzureProvider) -> None:
    kept = provider.launch(request("kept"), nodeclass())
    leaked = provider.launch(request("leaked"), nodeclass())
    later = datetime.now(UTC) + timedelta(minutes=5)
    found = provider.leaked(["kept"], later, timedelta(seconds=30))
    assert [i.id for i in found] == [leaked.instance_id]
    assert provider.leaked(["kept"], None, timedelta(minutes=10)) == []  # within grace
    # an orphan NIC: made for a claim whose VM never came
    assert provider.machines is not None
    provider.machines.launcher._nic(
        "aks-orphan", SUBNET, False, {"karpenter.azure.com_cluster": "joinery"}
    )
    now = datetime.now(UTC)
    assert provider.garbage_collect(now=now) == {"networkInterfaces": []}  # first seen
    out = provider.garbage_collect(now=now + timedelta(minutes=3))
    assert out == {"networkInterfaces": ["aks-orphan"]}
    names = sorted(n["name"] for n in azure.emulator.nics.table.all())
    assert names == ["aks-kept", "aks-leaked"]
    assert json.dumps(kept.labels)


def test_a_running_vm_registers_its_node_as_its_custom_data_says(
    azure: AzureServer, provider: AzureProvider
) -> None:
    result = provider.launch(
        request("node-1", sizes=("Standard_D4s_v3",), capacity="spot"), nodeclass()
    )
    claim = {
        "metadata": {"name": "node-1", "labels": {"karpenter.sh/nodepool": "default"}},
        "spec": {"requirements": [], "taints": [{"key": "dedicated", "effect": "NoSchedule"}]},
        "status": {"providerID": result.provider_id, "capacity": {"cpu": "4", "pods": "110"}},
    }
    make = vm_node_maker(azure.emulator)
    node = make(claim)
    assert node is not None
    assert node["metadata"]["name"] == "aks-node-1"
    labels = node["metadata"]["labels"]
    assert labels["kubernetes.azure.com/mode"] == "user"  # from the custom data
    assert labels["karpenter.sh/nodepool"] == "default"
    assert {"key": "karpenter.sh/unregistered", "effect": "NoExecute"} in node["spec"]["taints"]
    assert node["status"]["nodeInfo"]["kubeletVersion"] == "v1.33.0"
    azure.emulator.vms.evict("aks-node-1")
    assert make(claim) is None  # evicted: no kubelet to register


def test_the_worker_settings_build_a_provider_that_launches(
    azure: AzureServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--provider azure`` as the worker builds it: Karpenter Azure's environment (here
    pointing at the emulator) through ``provider_options`` and the registry."""
    env = worker_env(azure, subscription=SUBSCRIPTION, node_resource_group=RG, subnet_id=SUBNET)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    settings = Settings(
        TemporalSettings(),
        cluster="joinery",
        provider="azure",
        region="eastus",
        cluster_endpoint="https://joinery.hcp.eastus.azmk8s.io:443",
        cluster_ca_bundle=CA.decode(),
        kubernetes_version="1.33.0",
    )
    built = registry.build(provider_options(settings))
    assert isinstance(built, AzureProvider) and built.machines is not None
    plain = AKSNodeClass.model_validate({"metadata": {"name": "default"}})  # cluster subnet
    result = built.launch(request("from-env"), plain)
    assert result.subnet_id == SUBNET
    assert "resource group " + RG in built.describe_cluster()
    assert [i.id for i in built.list_owned()] == [result.instance_id]


def test_a_launch_whose_worker_died_mid_create_is_adopted(
    azure: AzureServer, provider: AzureProvider
) -> None:
    """The first try sent the create and died (nobody polls it); Azure goes on, and the
    retried launch waits for that VM and adopts it instead of making a second one."""
    assert provider.machines is not None
    launcher = provider.machines.launcher
    azure.emulator.vms.create_seconds = 2.0
    azure.emulator.vms.create_polls = 1000  # only time ends it
    try:
        nic = launcher._nic("aks-crash", SUBNET, True, {"karpenter.azure.com_cluster": "joinery"})
        body = {
            "location": "eastus",
            "zones": ["1"],
            "tags": {"karpenter.azure.com_cluster": "joinery", "karpenter.sh_nodeclaim": "crash"},
            "properties": {
                "hardwareProfile": {"vmSize": "Standard_D2s_v3"},
                "storageProfile": {"osDisk": {"createOption": "FromImage", "diskSizeGB": 128}},
                "networkProfile": {"networkInterfaces": [{"id": nic}]},
            },
        }
        provider.machines.vms.compute.virtual_machines.begin_create_or_update(
            RG, "aks-crash", body, polling=False
        )
        made = azure.emulator.vms.find("aks-crash")
        assert made is not None and made["properties"]["provisioningState"] == "Creating"
        result = provider.launch(request("crash"), nodeclass())
    finally:
        azure.emulator.vms.create_seconds, azure.emulator.vms.create_polls = 0.5, 1
    assert result.reused and result.instance_type == "Standard_D2s_v3"
    assert result.zone == "eastus-1"  # the VM the first try made, not a new choice
    assert vm_count(azure) == 1
