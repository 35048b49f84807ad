"""The emulator's VMs, disks and NICs, driven by the real azure-mgmt-compute and
azure-mgmt-network SDKs: each emulated behaviour asserted as the SDK sees it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from azure.core.exceptions import HttpResponseError, ResourceNotFoundError, ServiceResponseError

from activities.azure.clients import compute_client
from sandbox.azure.credential import FakeCredential
from sandbox.azure.server import AzureServer
from tests.component.azure.conftest import SUBSCRIPTION

RG = "MC_rg_cluster_eastus"
SUBNET = (
    f"/subscriptions/{SUBSCRIPTION}/resourceGroups/rg/providers/Microsoft.Network"
    "/virtualNetworks/aks-vnet/subnets/aks-subnet"
)


@pytest.fixture
def seeded(azure: AzureServer) -> AzureServer:
    azure.emulator.arm.add_resource_group(SUBSCRIPTION, RG, "eastus")
    azure.emulator.arm.add_subnet(SUBNET)
    return azure


def nic_body(accelerated: bool = False) -> dict[str, Any]:
    return {
        "location": "eastus",
        "tags": {"karpenter.azure.com_cluster": "c1"},
        "properties": {
            "enableAcceleratedNetworking": accelerated,
            "ipConfigurations": [
                {"name": "ipconfig1", "properties": {"subnet": {"id": SUBNET}, "primary": True}}
            ],
        },
    }


def vm_body(
    nic_id: str,
    *,
    size: str = "Standard_D2s_v3",
    zone: str = "1",
    spot: bool = False,
    disk_delete: str = "Delete",
    nic_delete: str = "Delete",
    ephemeral: bool = False,
) -> dict[str, Any]:
    os_disk: dict[str, Any] = {
        "createOption": "FromImage",
        "diskSizeGB": 128,
        "deleteOption": disk_delete,
        "managedDisk": {"storageAccountType": "Premium_LRS"},
    }
    if ephemeral:
        os_disk["diffDiskSettings"] = {"option": "Local", "placement": "ResourceDisk"}
        os_disk["caching"] = "ReadOnly"
    props: dict[str, Any] = {
        "hardwareProfile": {"vmSize": size},
        "storageProfile": {"osDisk": os_disk},
        "osProfile": {"computerName": "n", "adminUsername": "azureuser", "customData": "Ym9vdA=="},
        "networkProfile": {
            "networkInterfaces": [
                {"id": nic_id, "properties": {"primary": True, "deleteOption": nic_delete}}
            ]
        },
    }
    if spot:
        props.update(
            {"priority": "Spot", "evictionPolicy": "Delete", "billingProfile": {"maxPrice": -1}}
        )
    return {
        "location": "eastus",
        "zones": [zone],
        "tags": {"karpenter.azure.com_cluster": "c1", "karpenter.sh_nodepool": "default"},
        "properties": props,
    }


def make_nic(network: Any, name: str, accelerated: bool = False) -> str:
    nic = network.network_interfaces.begin_create_or_update(
        RG, name, nic_body(accelerated)
    ).result()
    return str(nic.id)


def test_nic_create_get_list_and_a_missing_subnet(seeded: AzureServer, network: Any) -> None:
    nic = network.network_interfaces.begin_create_or_update(RG, "aks-a", nic_body(True)).result()
    assert nic.provisioning_state == "Succeeded"
    assert nic.enable_accelerated_networking is True
    assert nic.ip_configurations[0].subnet.id == SUBNET
    assert nic.ip_configurations[0].private_ip_address
    seeded.emulator.nics.page_size = 2
    for name in ("aks-b", "aks-c"):
        make_nic(network, name)
    names = [n.name for n in network.network_interfaces.list(RG)]
    assert sorted(names) == ["aks-a", "aks-b", "aks-c"]
    assert network.network_interfaces.get(RG, "aks-b").tags == {"karpenter.azure.com_cluster": "c1"}
    body = nic_body()
    body["properties"]["ipConfigurations"][0]["properties"]["subnet"]["id"] = SUBNET + "x"
    with pytest.raises(HttpResponseError) as err:
        network.network_interfaces.begin_create_or_update(RG, "aks-d", body).result()
    assert err.value.error is not None and err.value.error.code == "InvalidResourceReference"


def test_vm_create_is_a_long_running_operation(
    seeded: AzureServer, compute: Any, network: Any
) -> None:
    nic_id = make_nic(network, "aks-n1")
    seeded.emulator.vms.create_polls = 2
    poller = compute.virtual_machines.begin_create_or_update(
        RG, "aks-n1", vm_body(nic_id, spot=True)
    )
    assert compute.virtual_machines.get(RG, "aks-n1").provisioning_state == "Creating"
    vm = poller.result()
    assert vm.provisioning_state == "Succeeded"
    assert vm.zones == ["1"] and vm.hardware_profile.vm_size == "Standard_D2s_v3"
    assert vm.priority == "Spot" and vm.eviction_policy == "Delete"
    assert vm.billing_profile.max_price == -1
    assert vm.tags["karpenter.sh_nodepool"] == "default"
    assert vm.os_profile.custom_data is None  # never returned, as Azure does
    assert seeded.emulator.vms.custom_data[vm.id.lower()] == "Ym9vdA=="
    view = compute.virtual_machines.get(RG, "aks-n1", expand="instanceView").instance_view
    assert "PowerState/running" in [s.code for s in view.statuses]
    disk = compute.disks.get(RG, vm.storage_profile.os_disk.name)
    assert disk.disk_size_gb == 128 and disk.managed_by == vm.id
    assert network.network_interfaces.get(RG, "aks-n1").virtual_machine.id == vm.id
    # the same PUT again: the same VM (no second one)
    again = compute.virtual_machines.begin_create_or_update(
        RG, "aks-n1", vm_body(nic_id, spot=True)
    ).result()
    assert again.vm_id == vm.vm_id
    assert len(list(compute.virtual_machines.list(RG))) == 1


def test_vm_list_pages(seeded: AzureServer, compute: Any, network: Any) -> None:
    seeded.emulator.vms.page_size = 2
    for i in range(5):
        nic = make_nic(network, f"aks-p{i}")
        compute.virtual_machines.begin_create_or_update(RG, f"aks-p{i}", vm_body(nic)).result()
    before = len(seeded.emulator.requests)
    assert sorted(v.name for v in compute.virtual_machines.list(RG)) == [
        f"aks-p{i}" for i in range(5)
    ]
    listed = [
        r for r in seeded.emulator.requests[before:] if "virtualMachines?" in r[1] and r[0] == "GET"
    ]
    assert len(listed) == 3  # 2 + 2 + 1


def test_delete_takes_disk_and_nic_as_their_delete_options_say(
    seeded: AzureServer, compute: Any, network: Any
) -> None:
    kept_nic = make_nic(network, "aks-keep")
    vm = compute.virtual_machines.begin_create_or_update(
        RG, "aks-keep", vm_body(kept_nic, disk_delete="Detach", nic_delete="Detach")
    ).result()
    with pytest.raises(HttpResponseError) as err:
        network.network_interfaces.begin_delete(RG, "aks-keep").result()
    assert err.value.error is not None and err.value.error.code == "NicInUse"
    compute.virtual_machines.begin_delete(RG, "aks-keep").result()
    with pytest.raises(ResourceNotFoundError):
        compute.virtual_machines.get(RG, "aks-keep")
    disk = compute.disks.get(RG, vm.storage_profile.os_disk.name)
    assert disk.managed_by is None  # left, detached
    assert network.network_interfaces.get(RG, "aks-keep").virtual_machine is None
    network.network_interfaces.begin_delete(RG, "aks-keep").result()
    compute.disks.begin_delete(RG, disk.name).result()
    assert list(network.network_interfaces.list(RG)) == []
    assert list(compute.disks.list_by_resource_group(RG)) == []

    gone_nic = make_nic(network, "aks-gone")
    vm = compute.virtual_machines.begin_create_or_update(RG, "aks-gone", vm_body(gone_nic)).result()
    compute.virtual_machines.begin_delete(RG, "aks-gone").result()
    assert list(compute.disks.list_by_resource_group(RG)) == []
    assert list(network.network_interfaces.list(RG)) == []
    # deleting what is gone answers 204: done
    compute.virtual_machines.begin_delete(RG, "aks-gone").result()


def test_ephemeral_os_disk_is_no_resource(seeded: AzureServer, compute: Any, network: Any) -> None:
    nic = make_nic(network, "aks-eph")
    vm = compute.virtual_machines.begin_create_or_update(
        RG, "aks-eph", vm_body(nic, ephemeral=True)
    ).result()
    assert vm.storage_profile.os_disk.diff_disk_settings.option == "Local"
    assert list(compute.disks.list_by_resource_group(RG)) == []


def test_size_zone_and_accelerated_networking_are_checked(
    seeded: AzureServer, compute: Any, network: Any
) -> None:
    nic = make_nic(network, "aks-z")
    with pytest.raises(HttpResponseError) as err:
        compute.virtual_machines.begin_create_or_update(
            RG, "aks-z", vm_body(nic, size="Standard_DC8s_v3", zone="2")
        )
    assert err.value.error is not None and err.value.error.code == "SkuNotAvailable"
    accel = make_nic(network, "aks-an", accelerated=True)
    with pytest.raises(HttpResponseError) as err:
        compute.virtual_machines.begin_create_or_update(
            RG, "aks-an", vm_body(accel, size="Standard_B1s")
        )
    assert err.value.error is not None
    assert err.value.error.code == "VMSizeIsNotPermittedToEnableAcceleratedNetworking"


@pytest.mark.parametrize(
    ("kind", "code", "words"),
    [
        ("SkuNotAvailable", "SkuNotAvailable", "aka.ms/azureskunotavailable"),
        ("family-quota", "OperationNotAllowed", "Family Cores quota"),
        ("regional-quota", "OperationNotAllowed", "Total Regional Cores quota"),
        ("low-priority-quota", "OperationNotAllowed", "LowPriorityCores quota"),
    ],
)
def test_synchronous_capacity_refusals(
    seeded: AzureServer, compute: Any, network: Any, kind: str, code: str, words: str
) -> None:
    nic = make_nic(network, "aks-q")
    seeded.emulator.vms.capacity.refuse(kind, size="Standard_D2s_v3")
    with pytest.raises(HttpResponseError) as err:
        compute.virtual_machines.begin_create_or_update(RG, "aks-q", vm_body(nic))
    assert err.value.error is not None and err.value.error.code == code
    assert words in str(err.value.error.message)
    assert list(compute.virtual_machines.list(RG)) == []
    # used up: the next create goes through
    compute.virtual_machines.begin_create_or_update(RG, "aks-q", vm_body(nic)).result()


@pytest.mark.parametrize(
    "kind",
    [
        "AllocationFailed",
        "ZonalAllocationFailed",
        "OverconstrainedAllocationRequest",
        "OverconstrainedZonalAllocationRequest",
    ],
)
def test_allocation_failures_fail_the_operation_and_leave_a_failed_vm(
    seeded: AzureServer, compute: Any, network: Any, kind: str
) -> None:
    nic = make_nic(network, "aks-alloc")
    seeded.emulator.vms.capacity.refuse(kind, zone="1", priority="Spot")
    poller = compute.virtual_machines.begin_create_or_update(
        RG, "aks-alloc", vm_body(nic, spot=True)
    )
    with pytest.raises(HttpResponseError) as err:
        poller.result()
    assert err.value.response is not None
    body = json.loads(err.value.response.text())
    assert body["error"]["code"] == kind
    assert compute.virtual_machines.get(RG, "aks-alloc").provisioning_state == "Failed"
    # a PUT of the failed VM tries again (and now succeeds)
    vm = compute.virtual_machines.begin_create_or_update(
        RG, "aks-alloc", vm_body(nic, spot=True)
    ).result()
    assert vm.provisioning_state == "Succeeded"


def test_throttled_and_5xx_writes_are_retried_by_the_sdk(
    seeded: AzureServer, compute: Any, network: Any
) -> None:
    nic = make_nic(network, "aks-t")
    vm_path = f"/subscriptions/{SUBSCRIPTION}/resourceGroups/{RG}/providers/Microsoft.Compute"
    seeded.emulator.faults.throttle(vm_path + "/virtualMachines/aks-t", method="PUT", retry_after=0)
    seeded.emulator.faults.fail(
        vm_path + "/virtualMachines/aks-t", 503, "ServiceUnavailable", "busy", method="PUT"
    )
    vm = compute.virtual_machines.begin_create_or_update(RG, "aks-t", vm_body(nic)).result()
    assert vm.provisioning_state == "Succeeded"
    puts = [r for r in seeded.emulator.requests if r[0] == "PUT" and "aks-t?" in r[1]]
    assert len([p for p in puts if "virtualMachines" in p[1]]) == 3


def test_timeouts_drop_the_connection(seeded: AzureServer) -> None:
    client = compute_client(
        SUBSCRIPTION,
        endpoint=seeded.endpoint,
        credential=FakeCredential(),
        ca_file=seeded.ca_file,
        retry_total=0,
        read_timeout=0.5,
    )
    path = f"/subscriptions/{SUBSCRIPTION}/resourceGroups/{RG}/providers/Microsoft.Compute"
    seeded.emulator.faults.timeout(path + "/virtualMachines/aks-x", seconds=1.0, method="GET")
    with pytest.raises(ServiceResponseError):
        client.virtual_machines.get(RG, "aks-x")


def test_spot_eviction(seeded: AzureServer, compute: Any, network: Any) -> None:
    nic = make_nic(network, "aks-spot")
    vm = compute.virtual_machines.begin_create_or_update(
        RG, "aks-spot", vm_body(nic, spot=True, nic_delete="Detach")
    ).result()
    event = seeded.emulator.vms.evict("aks-spot")
    assert event.policy == "Delete" and event.vm_id == vm.id
    with pytest.raises(ResourceNotFoundError):
        compute.virtual_machines.get(RG, "aks-spot")
    assert list(compute.disks.list_by_resource_group(RG)) == []
    assert network.network_interfaces.get(RG, "aks-spot").virtual_machine is None
    with pytest.raises(ValueError):
        nic2 = make_nic(network, "aks-od")
        compute.virtual_machines.begin_create_or_update(RG, "aks-od", vm_body(nic2)).result()
        seeded.emulator.vms.evict("aks-od")
