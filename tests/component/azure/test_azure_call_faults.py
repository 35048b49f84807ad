"""Every Azure call the worker makes, under each fault ARM can answer with: throttled past
the SDK's retries, 5xx past them, and no answer at all. Each call's outcome is asserted: a
retryable error of the cloud seam's types (the caller's retry or the workflow's), or, for
the node class status, a condition that says so; and the call works once the fault is gone.
(The VM's create under capacity and quota refusals: test_azure_launch.py.)"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest

from activities.azure.provider import AzureProvider
from activities.cloud.errors import CloudError
from activities.cloud.launch import LaunchRequest
from models.aksnodeclass import AKSNodeClass
from sandbox.azure.server import AzureServer
from tests.support.azure_provider import RG, SUBNET, SUBSCRIPTION, azure_provider

SUB = f"/subscriptions/{SUBSCRIPTION}"
COMPUTE = f"{SUB}/resourceGroups/{RG}/providers/Microsoft.Compute"
NETWORK = f"{SUB}/resourceGroups/{RG}/providers/Microsoft.Network"
CLAIM = "faulty-x1"
VM = f"aks-{CLAIM}"


def nodeclass() -> AKSNodeClass:
    return AKSNodeClass.model_validate(
        {"metadata": {"name": "default"}, "spec": {"vnetSubnetID": SUBNET}}
    )


def request(name: str = CLAIM) -> LaunchRequest:
    return LaunchRequest(
        nodeclaim_name=name,
        nodeclaim_uid="uid-" + name,
        nodepool_name="default",
        nodeclass_name="default",
        requirements=[
            {
                "key": "node.kubernetes.io/instance-type",
                "operator": "In",
                "values": ["Standard_D2s_v3"],
            },
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["eastus-2"]},
        ],
        resources={"cpu": "500m", "memory": "1Gi"},
    )


@dataclass(frozen=True)
class Call:
    """One Azure call: the request it makes (path prefix, method), what sets it up, and the
    provider operation that makes it."""

    name: str
    prefix: str
    method: str
    run: Callable[[AzureProvider], Any]
    launched_first: bool = False
    status_call: bool = False  # answered as a node class condition, not an exception


def _delete_vm(p: AzureProvider) -> bool:
    instance = p.find_by_nodeclaim(CLAIM)
    assert instance is not None
    return p.delete(instance.id)


def _delete_all(p: AzureProvider) -> bool:
    """Delete until gone: the NIC's and disk's deletes follow the VM's."""
    instance = p.find_by_nodeclaim(CLAIM)
    vm_id = instance.id if instance is not None else ""
    return any(p.delete(vm_id or f"{COMPUTE}/virtualMachines/{VM}") for _ in range(20))


CALLS = [
    Call(
        "NIC create",
        f"{NETWORK}/networkInterfaces/{VM}",
        "PUT",
        lambda p: p.launch(request(), nodeclass()),
    ),
    Call(
        "VM create",
        f"{COMPUTE}/virtualMachines/{VM}",
        "PUT",
        lambda p: p.launch(request(), nodeclass()),
    ),
    Call(
        "VM get",
        f"{COMPUTE}/virtualMachines/{VM}",
        "GET",
        lambda p: p.find_by_nodeclaim(CLAIM),
        True,
    ),
    Call("VM list", f"{COMPUTE}/virtualMachines", "GET", lambda p: p.list_owned(), True),
    Call("VM delete", f"{COMPUTE}/virtualMachines/{VM}", "DELETE", _delete_vm, True),
    Call("NIC delete", f"{NETWORK}/networkInterfaces/{VM}", "DELETE", _delete_all, True),
    Call("disk delete", f"{COMPUTE}/disks/", "DELETE", _delete_all, True),
    Call(
        "NIC list",
        f"{NETWORK}/networkInterfaces",
        "GET",
        lambda p: p.garbage_collect(now=datetime.now(UTC)),
        True,
    ),
    Call("SKU list", f"{SUB}/providers/Microsoft.Compute/skus", "GET", lambda p: p.load_catalog()),
    Call(
        "gallery versions",
        f"{SUB}/providers/Microsoft.Compute/locations/",
        "GET",
        lambda p: p.nodeclass_status(nodeclass()),
        status_call=True,
    ),
    Call("subnet get", SUBNET, "GET", lambda p: p.nodeclass_status(nodeclass()), status_call=True),
]
FAULTS = ["throttled", "5xx", "no answer"]


def _inject(azure: AzureServer, call: Call, fault: str) -> None:
    faults = azure.emulator.faults
    if fault == "throttled":
        faults.throttle(call.prefix, method=call.method, retry_after=0, times=20)
    elif fault == "5xx":
        faults.fail(
            call.prefix, 503, "ServiceUnavailable", "try later", method=call.method, times=20
        )
    else:
        faults.timeout(call.prefix, seconds=1.3, method=call.method, times=3)


def _not_ready(status: Any) -> list[str]:
    return [f"{c.type}: {c.message}" for c in status.conditions if c.status != "True"]


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("call", CALLS, ids=[c.name for c in CALLS])
def test_each_call_under_each_fault(azure: AzureServer, call: Call, fault: str) -> None:
    provider = azure_provider(azure)
    if call.launched_first:
        provider.launch(request(), nodeclass())
    if call.status_call:
        assert _not_ready(provider.nodeclass_status(nodeclass())) == []
        provider = azure_provider(azure)  # nothing cached: the fault meets the call
    _inject(azure, call, fault)
    if call.status_call:
        said = _not_ready(call.run(provider))
        assert said, f"{call.name} under {fault}: the node class still reads Ready"
    else:
        with pytest.raises(CloudError) as err:
            call.run(provider)
        assert err.value.retryable, f"{call.name} under {fault}: {err.value!r} is final"
    azure.emulator.faults.clear()
    # the fault gone, the same call goes through
    out = call.run(azure_provider(azure) if call.status_call else provider)
    if call.status_call:
        assert _not_ready(out) == []
    elif call.name in ("VM delete", "NIC delete", "disk delete"):
        assert _delete_all(provider)
