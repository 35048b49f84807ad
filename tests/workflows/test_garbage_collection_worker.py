"""Garbage collection in the whole worker (dev server, real control plane, emulated EC2):
the worker starts the cluster's GarbageCollectionWorkflow; a deleted NodePool's claims are
drained and removed; a claim whose instance died behind Joinery's back is removed and its
lifecycle ends without trying to drain the dead node."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable

import pytest
import pytest_asyncio
from temporalio.client import Client, WorkflowExecution
from temporalio.service import RPCError
from temporalio.testing import WorkflowEnvironment

from activities.kubernetes import custom_objects, nodeclaims, raw
from activities.kubernetes.client import Kube
from activities.kubernetes.errors import NotFound
from activities.kubernetes.resources import NODEPOOL
from models import contract
from models.contract import GarbageCollectionActivity as names
from tests.support.cloud import Cloud
from tests.support.kube_objects import (
    create_claim,
    create_namespace,
    create_pdb,
    create_pod,
    ensure_nodepool,
    kill_node,
    pod,
)
from tests.support.running_worker import claim_ready, worker_running
from tests.support.waiting import until
from workflows.garbage.workflow import GarbageCollectionWorkflow
from workflows.nodeclaim.workflow import NodeClaimWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")

Running = tuple[Client, str, str]


def gone(read: Callable[[], object]) -> Callable[[], bool]:
    def probe() -> bool:
        try:
            read()
        except NotFound:
            return True
        return False

    return probe


@pytest_asyncio.fixture(loop_scope="session")
async def worker(
    dev_env: WorkflowEnvironment, kube: Kube, admin: Kube, cloud: Cloud
) -> AsyncIterator[Running]:
    """Rounds every 2 minutes, as in production."""
    async with worker_running(dev_env, kube, admin, cloud) as running:
        yield running


@pytest_asyncio.fixture(loop_scope="session")
async def fast_worker(
    dev_env: WorkflowEnvironment, kube: Kube, admin: Kube, cloud: Cloud
) -> AsyncIterator[Running]:
    """Rounds every second, so a test sees several; a launch is judged 2 s after it, not 30 s
    (the grace itself is the activity tests' business)."""
    async with worker_running(
        dev_env,
        kube,
        admin,
        cloud,
        garbage_collection_period=1.0,
        garbage_collection_grace=2.0,
    ) as running:
        yield running


async def test_deleting_a_nodepool_drains_and_removes_its_claims(
    worker: Running, admin: Kube, cloud: Cloud
) -> None:
    client, cluster, _queue = worker
    pool = f"pool-{uuid.uuid4().hex[:6]}"
    ensure_nodepool(admin, pool)
    ns = f"t-{uuid.uuid4().hex[:8]}"
    create_namespace(admin, ns)
    create_pod(admin, pod("web-0", ns, spec={"nodeSelector": {"karpenter.sh/nodepool": pool}}))

    def running() -> bool:
        got = raw.call(admin.core.read_namespaced_pod, "web-0", ns)
        return bool(got.get("status", {}).get("phase") == "Running")

    await until(running, timeout=90, what="the pod running on a provisioned node")
    [claim] = nodeclaims.list_(admin, nodepool=pool)[0]
    name = claim["metadata"]["name"]
    live_pool = custom_objects.get(admin, NODEPOOL, pool)
    # as Karpenter's: the claim is owned by its pool
    [owner] = claim["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["uid"]) == (
        "NodePool",
        pool,
        live_pool["metadata"]["uid"],
    )
    gc = client.get_workflow_handle(contract.garbage_collection_id(cluster))
    rounds_before = (await gc.query(GarbageCollectionWorkflow.status)).rounds

    custom_objects.delete(admin, NODEPOOL, pool)
    # Kubernetes' garbage collector follows the owner reference; the lifecycle drains
    await until(gone(lambda: nodeclaims.get(admin, name)), timeout=90, what="claim removed")
    handle = client.get_workflow_handle(contract.nodeclaim_id(cluster, name))
    assert await handle.result() == "Terminated"
    assert cloud.instances_of(name) == []
    await until(
        gone(lambda: raw.call(admin.core.read_namespaced_pod, "web-0", ns)),
        what="the pod evicted",
    )
    # well within the 2-minute period: it was not the garbage-collection round's doing
    assert (await gc.query(GarbageCollectionWorkflow.status)).rounds == rounds_before


async def test_a_claim_whose_instance_died_is_removed_without_a_drain(
    fast_worker: Running, admin: Kube, cloud: Cloud
) -> None:
    client, cluster, _queue = fast_worker
    pool = f"pool-{uuid.uuid4().hex[:6]}"
    ensure_nodepool(admin, pool)
    name = f"{pool}-dies"
    create_claim(admin, name, pool)
    await until(lambda: claim_ready(admin, name), timeout=60, what="claim Ready")
    claim = nodeclaims.get(admin, name)
    node = claim["status"]["nodeName"]
    # a pod whose PDB allows no eviction: a drain of this node would wait forever
    ns = f"t-{uuid.uuid4().hex[:8]}"
    create_namespace(admin, ns)
    create_pdb(admin, ns, "hold", min_available=1)
    create_pod(admin, pod("held", ns, node=node))
    [instance] = cloud.instances_of(name)

    cloud.clients.ec2.terminate_instances(InstanceIds=[instance])  # behind Joinery's back
    kill_node(admin, node)
    await until(gone(lambda: nodeclaims.get(admin, name)), timeout=120, what="claim removed")
    handle = client.get_workflow_handle(contract.nodeclaim_id(cluster, name))
    # ended although the PDB allows no eviction: the dead node was not drained
    assert await handle.result() == "Terminated"
    status = await handle.query(NodeClaimWorkflow.status)
    assert status.blocked == [] and status.ending_reason == "Deleted"
    gc = await client.get_workflow_handle(contract.garbage_collection_id(cluster)).query(
        GarbageCollectionWorkflow.status
    )
    assert gc.removed.get(names.CLAIMS_WITHOUT_INSTANCE, 0) >= 1 and gc.rounds >= 2


async def test_two_workers_run_one_garbage_collection(
    dev_env: WorkflowEnvironment, kube: Kube, admin: Kube, cloud: Cloud
) -> None:
    """Workers of one cluster share its workflow id: one collection, whichever worker runs it."""
    cluster = f"it-{uuid.uuid4().hex[:6]}"
    second = await Client.connect(dev_env.client.service_client.config.target_host)
    async with (
        worker_running(dev_env, kube, admin, cloud, cluster) as (client, _, _),
        worker_running(dev_env, kube, admin, cloud, cluster, second),
    ):
        handle = client.get_workflow_handle(contract.garbage_collection_id(cluster))

        async def collected() -> bool:
            try:
                status = await handle.query(GarbageCollectionWorkflow.status)
            except RPCError:
                return False  # not started yet
            return status.rounds >= 1

        await until(collected, what="a garbage-collection round")
        query = f"WorkflowId = '{contract.garbage_collection_id(cluster)}'"

        async def listed() -> list[WorkflowExecution]:
            return [wf async for wf in client.list_workflows(query)]

        runs = await until(listed, what="the workflow listed")
        assert len(runs) == 1 and runs[0].workflow_type == contract.GARBAGE_COLLECTION_WORKFLOW
