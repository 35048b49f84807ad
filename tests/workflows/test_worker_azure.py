"""The whole worker with ``--provider azure`` on the dev server, the real control plane and
the emulated Azure, driven by the real SDKs: a pending pod gets a NodeClaim, the claim a VM
(and NIC) in the node resource group, the VM's simulated kubelet a Node, and the pod runs;
deleting the claim retires the VM, its NIC and its disk."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from temporalio.testing import WorkflowEnvironment

from activities.kubernetes import custom_objects, nodeclaims, raw
from activities.kubernetes.client import Kube
from activities.kubernetes.errors import AlreadyExists
from activities.kubernetes.resources import AKSNODECLASS, NODECLAIM, NODEPOOL
from sandbox.azure.server import AzureServer, start_server
from sandbox.azure.vm_nodes import vm_node_maker
from sandbox.nodes import NodeSimulator
from tests.support.azure_provider import SUBNET, azure_provider
from tests.support.kube_objects import create_namespace, pod
from tests.support.running_worker import claim_ready
from tests.support.waiting import until
from worker.running.app import run_worker
from worker.running.settings import Settings, TemporalSettings

pytestmark = pytest.mark.asyncio(loop_scope="session")
CLASS = "az-worker"
REF = {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": CLASS}


@pytest.fixture(scope="module")
def azure(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AzureServer]:
    server = start_server(certs_dir=Path(tmp_path_factory.mktemp("azure-certs")))
    yield server
    server.stop()


def _nodeclass_and_pool(admin: Kube, pool: str) -> None:
    body: dict[str, Any] = {
        "apiVersion": "karpenter.azure.com/v1beta1",
        "kind": "AKSNodeClass",
        "metadata": {"name": CLASS},
        "spec": {"vnetSubnetID": SUBNET},
    }
    with contextlib.suppress(AlreadyExists):
        custom_objects.create(admin, AKSNODECLASS, body)
    requirements = [
        {
            "key": "node.kubernetes.io/instance-type",
            "operator": "In",
            "values": ["Standard_D2s_v3", "Standard_D4s_v3"],
        },
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
    ]
    custom_objects.create(
        admin,
        NODEPOOL,
        {
            "apiVersion": "karpenter.sh/v1",
            "kind": "NodePool",
            "metadata": {"name": pool},
            "spec": {"template": {"spec": {"nodeClassRef": REF, "requirements": requirements}}},
        },
    )


async def test_a_pending_pod_gets_an_azure_vm(
    dev_env: WorkflowEnvironment, kube: Kube, admin: Kube, azure: AzureServer
) -> None:
    provider = azure_provider(azure)
    cluster = f"az-{uuid.uuid4().hex[:6]}"
    settings = Settings(
        TemporalSettings(task_queue=f"q-{cluster}"),
        cluster=cluster,
        provider="azure",
        region="eastus",
        health_port=0,
        search_attributes=True,
        disruption_validation_delay=2.0,
    )
    pool = f"azpool-{uuid.uuid4().hex[:6]}"
    _nodeclass_and_pool(admin, pool)
    stop = asyncio.Event()
    task = asyncio.create_task(
        run_worker(settings, stop=stop, kube=kube, cloud=provider, client=dev_env.client)
    )
    with NodeSimulator(admin, interval=0.2, make_node=vm_node_maker(azure.emulator)):
        try:
            ns = f"az-{uuid.uuid4().hex[:8]}"
            create_namespace(admin, ns)
            body = pod("web-0", ns, spec={"nodeSelector": {"karpenter.sh/nodepool": pool}})
            raw.call(admin.core.create_namespaced_pod, ns, body)

            def running() -> bool:
                got = raw.call(admin.core.read_namespaced_pod, "web-0", ns)
                return bool(got.get("status", {}).get("phase") == "Running")

            await until(running, timeout=120, what="the pod running on an Azure VM")
            [claim] = nodeclaims.list_(admin, nodepool=pool)[0]
            name = claim["metadata"]["name"]
            await until(lambda: claim_ready(admin, name), what="claim Ready")
            vms = azure.emulator.vms.vms.all()
            assert [v["name"] for v in vms] == [f"aks-{name}"]
            assert vms[0]["properties"]["hardwareProfile"]["vmSize"] == "Standard_D2s_v3"
            assert [n["name"] for n in azure.emulator.nics.table.all()] == [f"aks-{name}"]

            custom_objects.delete(admin, NODECLAIM, name)

            def retired() -> bool:
                azure.emulator.operations.settle()
                return not (
                    azure.emulator.vms.vms.all()
                    or azure.emulator.nics.table.all()
                    or azure.emulator.vms.disks.all()
                )

            await until(retired, timeout=120, what="the VM, its NIC and disk deleted")

            def claim_gone() -> bool:
                return name not in {
                    c["metadata"]["name"] for c in nodeclaims.list_(admin, nodepool=pool)[0]
                }

            # The control plane is shared with later files (their AWS workers): leave no
            # Azure claim, pool or class behind.
            await until(claim_gone, timeout=60, what="the NodeClaim's finalizer removed")
        finally:
            stop.set()
            await asyncio.wait_for(task, 90)
            with contextlib.suppress(Exception):
                custom_objects.delete(admin, NODEPOOL, pool)
