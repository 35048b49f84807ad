"""Two whole workers (same cluster, same task queue, each with its own Temporal connection,
Kubernetes client and EC2 provider, as two replicas of the Deployment would run) against one
cluster: pods go pending and a consolidation follows, and nothing is done twice.

Checked: one NodeClaim per node the pods need, one instance per NodeClaim (ever, terminated
ones included), one provisioner and one disruption workflow (one run each), every carried
out command's candidates in no other command and deleted once, and both workers took part
(workflow or activity tasks ran under both identities)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from activities.kubernetes.client import Kube, from_kubeconfig
from models import contract
from sandbox import fleet_checks
from sandbox.cluster import Cluster
from sandbox.nodes import NodeSimulator
from sandbox.scenarios import spread_fleet as fleet
from tests.support.cloud import Cloud
from tests.support.kube_objects import create_namespace, ensure_nodeclass
from tests.support.round_history import read_rounds
from tests.support.waiting import until
from worker.running.app import run_worker
from worker.running.settings import Settings, TemporalSettings

pytestmark = pytest.mark.asyncio(loop_scope="session")
NODES = 2  # fillers, so nodes before the scale-down; web is scaled to 1 after
IDENTITIES = ("replica-a", "replica-b")


@pytest_asyncio.fixture(loop_scope="session")
async def two_workers(
    dev_env: WorkflowEnvironment, cluster: Cluster, admin: Kube, cloud: Cloud
) -> AsyncIterator[tuple[Client, str]]:
    ensure_nodeclass(admin)
    name = f"two-{uuid.uuid4().hex[:6]}"
    settings = Settings(
        TemporalSettings(task_queue=f"q-{name}"),
        cluster=name,
        health_port=0,
        search_attributes=True,
        disruption_validation_delay=3.0,  # Karpenter's 15 s adds nothing this test checks
    )
    target = dev_env.client.service_client.config.target_host
    stop = asyncio.Event()
    kubes = [from_kubeconfig(cluster.kubeconfig_path) for _ in IDENTITIES]
    tasks = []
    for identity, kube in zip(IDENTITIES, kubes, strict=True):
        client = await Client.connect(target, identity=identity)
        tasks.append(
            asyncio.create_task(
                run_worker(
                    settings, stop=stop, kube=kube, cloud=cloud.fresh_provider(), client=client
                )
            )
        )
    try:
        with NodeSimulator(admin, interval=0.2):
            yield dev_env.client, name
    finally:
        stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks), 60)
        for kube in kubes:
            kube.close()


async def _runs(client: Client, query: str) -> list[Any]:
    return [wf async for wf in client.list_workflows(query)]


async def _worker_identities(client: Client, cluster: str) -> set[str]:
    """The workers that ran this cluster's activity tasks or workflow tasks, on both queues.
    A lifecycle's calls are all local activities since shape 3 (the launch too), run by the
    worker that runs its workflow task, so its workflow tasks are where its workers show."""
    seen: set[str] = set()
    queues = (f"q-{cluster}", contract.cluster_workflows_queue(f"q-{cluster}"))
    for queue in queues:
        async for wf in client.list_workflows(f"TaskQueue = '{queue}'"):
            history = await client.get_workflow_handle(wf.id, run_id=wf.run_id).fetch_history()
            for event in history.events:
                if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
                    seen.add(event.activity_task_started_event_attributes.identity)
                elif event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
                    seen.add(event.workflow_task_completed_event_attributes.identity)
    return seen


async def test_two_workers_do_no_double_work(
    two_workers: tuple[Client, str], admin: Kube, cloud: Cloud
) -> None:
    client, cluster = two_workers
    pool = f"pool-{uuid.uuid4().hex[:6]}"
    fleet.create_nodepool(admin, pool)
    ns = f"t-{uuid.uuid4().hex[:8]}"
    create_namespace(admin, ns)
    fleet.create_web_pdb(admin, ns)

    # pods go pending: one claim per node they need, though both workers watch them
    fleet.create_spread(admin, ns, pool, fleet.FILLER, NODES)
    await until(
        lambda: len(fleet.running(admin, ns, fleet.FILLER)) == NODES, timeout=150, what="fillers"
    )
    fleet.create_spread(admin, ns, pool, fleet.WEB, NODES)
    await until(lambda: len(fleet.running(admin, ns, fleet.WEB)) == NODES, timeout=90, what="web")
    provisioned = fleet_checks.instances(cloud.clients.ec2, nodepool=pool)
    assert len(provisioned) == NODES, provisioned

    # a consolidation: the empty node deleted, the other replaced by an m5.large
    fleet.scale(admin, ns, fleet.FILLER, 0)
    fleet.scale(admin, ns, fleet.WEB, 1)
    await until(
        lambda: fleet.consolidated(admin, ns, pool, 1), timeout=300, what="consolidated to 1"
    )

    rounds = await read_rounds(client, cluster)
    # the suite's control plane is shared: this cluster's rounds may also remove other
    # tests' leftover empty nodes, so only this pool's claims are counted
    ours = [c for c in rounds.commands if any(n.startswith(f"{pool}-") for n in c.claims)]
    candidates = [claim for c in ours for claim in c.claims if claim.startswith(f"{pool}-")]
    replacements = [r for c in ours for r in c.replacements if r.startswith(f"{pool}-")]
    assert sorted(candidates) == sorted(provisioned), ours  # each removed once
    assert len(replacements) == 1, ours
    ever = fleet_checks.instances(cloud.clients.ec2, nodepool=pool)
    assert set(ever) == set(provisioned) | set(replacements)
    assert all(len(ids) == 1 for ids in ever.values()), ever
    for kind, wid in (
        ("Disruption", contract.disruption_id(cluster)),
        ("Provisioner", contract.provisioner_id(cluster)),
    ):
        queue = contract.cluster_workflows_queue(f"q-{cluster}")
        runs = await _runs(client, f"WorkflowType = '{kind}' AND TaskQueue = '{queue}'")
        assert [r.id for r in runs] == [wid]
    assert await _worker_identities(client, cluster) >= set(IDENTITIES)
