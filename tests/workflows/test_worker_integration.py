"""The whole worker (workflows, real activities, watchers) on the dev server, against the real
control plane, emulated EC2 and simulated kubelets: pods → NodeClaims → Nodes → pods running;
search attributes and queries; a PDB-held drain; an operator disruption; the metrics and
events all of it leaves, read from the worker's own ``/metrics`` and the Events API."""

from __future__ import annotations

import asyncio
import socket
import uuid
from collections.abc import AsyncIterator
from typing import Any, TypeVar

import pytest
import pytest_asyncio
from kubernetes import client as k8s
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from activities.kubernetes import custom_objects, nodeclaims, nodes, pods, raw
from activities.kubernetes.client import Kube
from activities.kubernetes.errors import NotFound
from activities.kubernetes.resources import NODECLAIM, NODEPOOL
from models import contract, karpenter_hash
from models.nodepool import NodePool
from models.nodepool_hash import hash_annotations
from tests.support.cloud import Cloud
from tests.support.kube_objects import (
    condition,
    create_claim,
    create_namespace,
    create_pdb,
    create_pod,
    ensure_nodepool,
    nodeclaim,
    pod,
)
from tests.support.running_worker import claim_ready, worker_running
from tests.support.waiting import until
from worker.running import sdk_metrics
from workflows.disruption.workflow import DisruptionWorkflow
from workflows.nodeclaim.state import DisruptRequest
from workflows.nodeclaim.workflow import NodeClaimWorkflow
from workflows.provisioner import ProvisionerWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")
T = TypeVar("T")


@pytest.fixture
def worker_metrics() -> str:
    """The worker's ``/metrics`` (a free loopback port for its health server)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/metrics"


@pytest_asyncio.fixture(loop_scope="session")
async def running_worker(
    dev_env: WorkflowEnvironment, kube: Kube, admin: Kube, cloud: Cloud, worker_metrics: str
) -> AsyncIterator[tuple[Client, str, str]]:
    # as `joinery worker` connects: through the runtime that records the SDK's metrics
    client = await Client.connect(
        dev_env.client.service_client.config.target_host,
        namespace=dev_env.client.namespace,
        runtime=sdk_metrics.shared().runtime,
    )
    port = int(worker_metrics.split(":")[2].split("/")[0])
    async with worker_running(
        dev_env, kube, admin, cloud, client=client, health_port=port, health_host="127.0.0.1"
    ) as running:
        yield running


async def test_unschedulable_pods_get_a_node(
    running_worker: tuple[Client, str, str],
    admin: Kube,
    cloud: Cloud,
    worker_metrics: str,
    scrape: Any,
) -> None:
    client, cluster, queue = running_worker
    pool = f"pool-{uuid.uuid4().hex[:6]}"
    ensure_nodepool(admin, pool)
    ns = f"t-{uuid.uuid4().hex[:8]}"
    create_namespace(admin, ns)
    apps = k8s.AppsV1Api(admin.api_client)
    template = pod("web", ns, spec={"nodeSelector": {"karpenter.sh/nodepool": pool}})
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": ns},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": template["spec"]},
        },
    }
    raw.call(apps.create_namespaced_deployment, ns, deployment)

    def running() -> bool:
        listed = raw.call(admin.core.list_namespaced_pod, ns).get("items") or []
        live = [
            p
            for p in listed
            if not p["metadata"].get("deletionTimestamp")
            and p.get("status", {}).get("phase") == "Running"
        ]
        return len(live) == 3

    await until(running, timeout=90, what="pods running on a provisioned node")
    claims_of_pool, _ = nodeclaims.list_(admin, nodepool=pool)
    assert len(claims_of_pool) == 1
    name = claims_of_pool[0]["metadata"]["name"]
    await until(lambda: claim_ready(admin, name), what="claim Ready")
    prov = await client.get_workflow_handle(contract.provisioner_id(cluster)).query(
        ProvisionerWorkflow.status
    )
    assert prov.created >= 1
    # the cluster's own workflows have a queue (and worker slots) of their own; the
    # lifecycles they start run on the worker's queue
    for cluster_workflow in (
        contract.provisioner_id(cluster),
        contract.disruption_id(cluster),
        contract.garbage_collection_id(cluster),
    ):
        described_cluster = await client.get_workflow_handle(cluster_workflow).describe()
        assert described_cluster.task_queue == contract.cluster_workflows_queue(queue)

    handle = client.get_workflow_handle(contract.nodeclaim_id(cluster, name))
    assert (await handle.describe()).task_queue == queue
    status = await handle.query(NodeClaimWorkflow.status)
    assert status.phase == "Ready" and status.nodepool == pool
    # search attributes make it findable in the UI
    query = f"NodePool = '{pool}' AND Phase = 'Ready' AND InstanceType = '{status.instance_type}'"

    async def listed() -> list[str]:
        return [wf.id async for wf in client.list_workflows(query)]

    assert await until(listed, what="visible by search attributes") == [
        contract.nodeclaim_id(cluster, name)
    ]
    described = await handle.describe()
    summary = await described.static_summary()
    assert summary is not None and f"pool {pool}" in summary and len(summary.encode()) <= 200

    # the pool's status, as `kubectl get nodepools` shows it: Ready, one node, its capacity
    def pool_status() -> dict[str, Any] | None:
        body = custom_objects.get(admin, NODEPOOL, pool)
        ready = condition(body, "Ready")
        status: dict[str, Any] = body.get("status") or {}
        resources = status.get("resources") or {}
        # the claim counts once it exists, its capacity once it has launched
        counted = status.get("nodes") and resources.get("cpu")
        return status if ready and ready["status"] == "True" and counted else None

    reported = await until(pool_status, what="the NodePool's status")
    assert reported["nodes"] == 1 and reported["resources"]["cpu"] in ("2", "4")

    # what a Karpenter dashboard reads, from the worker's /metrics
    def usage_seen() -> Any:
        m = scrape(worker_metrics)
        return m if m.has("karpenter_nodepools_usage", nodepool=pool, resource_type="cpu") else None

    m = await until(usage_seen, what="the pool's usage on /metrics")
    cpu = float(reported["resources"]["cpu"])
    assert m.value("karpenter_nodepools_usage", nodepool=pool, resource_type="cpu") == cpu
    assert m.value("karpenter_nodepools_usage", nodepool=pool, resource_type="nodes") == 1
    created = "karpenter_nodeclaims_created_total"
    assert m.value(created, nodepool=pool, reason="provisioned") == 1
    transitions = "operator_nodeclaim_status_condition_transitions_total"
    for step in ("Launched", "Registered", "Initialized"):
        done = {"type": step, "status": "True", "karpenter_sh_nodepool": pool}
        assert m.value(transitions, **done) == 1
    assert m.value("karpenter_nodes_created_total", nodepool=pool) == 1
    allocatable = "karpenter_nodes_allocatable"
    node = nodeclaims.get(admin, name)["status"]["nodeName"]
    assert m.value(allocatable, nodepool=pool, node_name=node, resource_type="cpu") > 0
    scheduling = "karpenter_scheduler_scheduling_duration_seconds_count"
    assert m.value(scheduling, controller="provisioner") >= 1
    assert m.has("karpenter_scheduler_queue_depth", controller="provisioner")
    assert m.value("karpenter_cloudprovider_duration_seconds_count", method="Create") >= 1
    assert m.value("karpenter_cloudprovider_duration_seconds_count", method="GetInstanceTypes") >= 1
    assert m.value("karpenter_pods_state", namespace=ns, phase="Running") == 3
    assert m.value("karpenter_pods_startup_duration_seconds_count") >= 3
    assert m.value("karpenter_cluster_state_node_count") >= 1
    # and the Temporal SDK's own series on the same endpoint
    assert m.names() >= sdk_metrics.RELIED_ON, sdk_metrics.RELIED_ON - m.names()

    # an operator drains it; the pods go pending again and get a new node
    await handle.execute_update(NodeClaimWorkflow.disrupt, DisruptRequest("Maintenance"))
    assert await handle.result() == "Terminated"
    with pytest.raises(NotFound):
        nodeclaims.get(admin, name)
    await until(running, timeout=120, what="pods running again on a replacement")
    remaining, _ = nodeclaims.list_(admin, nodepool=pool)
    assert [c["metadata"]["name"] for c in remaining] != [name]
    assert cloud.instances_of(name) == []
    m = scrape(worker_metrics)
    disrupted = "karpenter_nodeclaims_disrupted_total"
    assert m.value(disrupted, nodepool=pool, reason="maintenance") == 1
    assert m.value("karpenter_nodeclaims_terminated_total", nodepool=pool) == 1
    assert m.value("karpenter_nodes_terminated_total", nodepool=pool) == 1
    assert m.value("karpenter_pods_eviction_requests_total", code="200") >= 3


async def test_an_invalid_nodepool_is_reported_and_left_out(
    running_worker: tuple[Client, str, str], admin: Kube
) -> None:
    """A NodePool the CRD accepts but Joinery cannot use gets a condition and a Warning event
    naming the field; its pods stay pending, and nothing else in the worker stops."""
    pool = f"bad-{uuid.uuid4().hex[:6]}"
    restricted = [{"key": "kubernetes.io/team", "operator": "In", "values": ["a"]}]
    ensure_nodepool(admin, pool, requirements=restricted)
    ns = f"t-{uuid.uuid4().hex[:8]}"
    create_namespace(admin, ns)
    create_pod(admin, pod("web-0", ns, spec={"nodeSelector": {"karpenter.sh/nodepool": pool}}))

    def validation() -> dict[str, Any] | None:
        found = condition(custom_objects.get(admin, NODEPOOL, pool), "ValidationSucceeded")
        return found if found and found["status"] == "False" else None

    failed = await until(validation, what="ValidationSucceeded=False")
    assert failed["message"] == (
        "spec.template.spec.requirements[0].key: label 'kubernetes.io/team' is restricted"
    )

    def warning() -> list[dict[str, Any]]:
        listed = raw.call(admin.core.list_namespaced_event, "default").get("items") or []
        return [e for e in listed if e["involvedObject"]["name"] == pool]

    [event] = await until(warning, what="a Warning event on the NodePool")
    assert event["type"] == "Warning" and event["involvedObject"]["kind"] == "NodePool"

    # the pod is told why no node comes (kubectl describe finds events by the pod's uid)
    uid = raw.call(admin.core.read_namespaced_pod, "web-0", ns)["metadata"]["uid"]

    def told() -> list[dict[str, Any]]:
        listed = raw.call(admin.core.list_namespaced_event, ns).get("items") or []
        return [
            e
            for e in listed
            if e["involvedObject"].get("uid") == uid and e.get("reportingComponent") == "joinery"
        ]

    [pod_event] = await until(told, what="a FailedScheduling event on the pod")
    assert pod_event["reason"] == "FailedScheduling" and pod_event["type"] == "Warning"
    assert "no node can be provisioned" in pod_event["message"]
    await asyncio.sleep(3)  # a provisioning round or two
    assert nodeclaims.list_(admin, nodepool=pool)[0] == []


async def test_deleting_a_claim_drains_through_a_pdb(
    running_worker: tuple[Client, str, str], admin: Kube, cloud: Cloud
) -> None:
    client, cluster, _queue = running_worker
    pool = f"pool-{uuid.uuid4().hex[:6]}"
    ensure_nodepool(admin, pool)
    name = f"{pool}-manual"
    create_claim(admin, name, pool)  # made outside the provisioner: the watcher adopts it
    handle = client.get_workflow_handle(contract.nodeclaim_id(cluster, name))
    try:
        await until(lambda: claim_ready(admin, name), timeout=60, what="claim Ready")
    except AssertionError:
        print(
            "STATUS",
            await handle.query(NodeClaimWorkflow.status),
            cloud.provider.unavailable.entries(),
            cloud.emulation.insufficient,
        )
        raise
    node = nodeclaims.get(admin, name)["status"]["nodeName"]
    ns = f"t-{uuid.uuid4().hex[:8]}"
    create_namespace(admin, ns)
    create_pod(admin, pod("db-0", ns, node=node))
    create_pdb(admin, ns, "db-pdb")
    await until(
        lambda: pods.get(admin, ns, "db-0").get("status", {}).get("phase") == "Running",
        what="db-0 running",
    )

    raw.call(admin.custom.delete_cluster_custom_object, "karpenter.sh", "v1", "nodeclaims", name)
    handle = client.get_workflow_handle(contract.nodeclaim_id(cluster, name))

    async def blocked() -> list[str]:
        return (await handle.query(NodeClaimWorkflow.status)).blocked

    assert await until(blocked, what="drain blocked by the PDB") == [f"{ns}/db-0 ({ns}/db-pdb)"]
    drained = condition(nodeclaims.get(admin, name), "Drained")
    assert drained is not None and drained["reason"] == "PDBViolation"
    assert nodes.get(admin, node)  # still there while the PDB holds
    raw.call(admin.policy.delete_namespaced_pod_disruption_budget, "db-pdb", ns)
    assert await asyncio.wait_for(handle.result(), 90) == "Terminated"
    with pytest.raises(NotFound):
        nodes.get(admin, node)
    assert cloud.instances_of(name) == []


async def test_an_empty_node_is_removed_by_a_disruption_round(
    running_worker: tuple[Client, str, str],
    admin: Kube,
    cloud: Cloud,
    worker_metrics: str,
    scrape: Any,
) -> None:
    """The worker's DisruptionWorkflow finds an initialized node without pods, marks it,
    waits out the validation delay and deletes its claim; the lifecycle then terminates it."""
    client, cluster, _queue = running_worker
    pool = f"pool-{uuid.uuid4().hex[:6]}"
    ensure_nodepool(admin, pool)
    name = f"{pool}-empty"
    create_claim(admin, name, pool)
    await until(lambda: claim_ready(admin, name), timeout=60, what="claim Ready")
    handle = client.get_workflow_handle(contract.disruption_id(cluster))

    async def gone() -> bool:
        try:
            nodeclaims.get(admin, name)
        except NotFound:
            return True
        return False

    await until(gone, timeout=150, what="the empty node's claim removed")
    status = await handle.query(DisruptionWorkflow.status)
    assert status.commands_done >= 1 and "empty node" in status.last_action
    assert cloud.instances_of(name) == []  # the claim's finalizer waited for termination
    m = scrape(worker_metrics)
    decided = {"decision": "delete", "reason": "empty", "consolidation_type": "empty"}
    assert m.value("karpenter_voluntary_disruption_decisions_total", **decided) >= 1
    assert m.value("karpenter_nodeclaims_disrupted_total", nodepool=pool, reason="empty") == 1
    evaluated = "karpenter_voluntary_disruption_decision_evaluation_duration_seconds_count"
    assert m.value(evaluated) >= 2  # decided, then validated
    assert m.has("karpenter_voluntary_disruption_eligible_nodes", reason="empty")
    # the pool's budget (10% of 1 node, rounded up) allowed one
    allowed = "karpenter_nodepools_allowed_disruptions"
    assert m.value(allowed, nodepool=pool, reason="empty") in (0, 1)
    terminating = raw.call(
        admin.core.list_namespaced_event,
        "default",
        field_selector=f"involvedObject.name={name},reason=DisruptionTerminating",
    )
    (event,) = terminating["items"]
    assert event["message"] == "Disrupting NodeClaim: Empty"


async def test_claim_status_hash_stamp_and_last_pod_event(
    running_worker: tuple[Client, str, str], admin: Kube
) -> None:
    """A claim Karpenter stamped from its pool's current template is re-stamped with Joinery's
    hash of that pool (never drift); a pod bound to its node moves ``status.lastPodEventTime``.
    (A Karpenter hash that differs from the template's is drift: tests/component/activities.)"""
    _client, _cluster, _queue = running_worker
    pool = f"pool-{uuid.uuid4().hex[:6]}"
    ensure_nodepool(admin, pool)
    name = f"{pool}-stamped"
    body = nodeclaim(name, pool)
    raw_pool = custom_objects.get(admin, NODEPOOL, pool)
    body["metadata"]["annotations"] = {  # as Karpenter stamps it
        "karpenter.sh/nodepool-hash": karpenter_hash.nodepool_hash(raw_pool["spec"]["template"]),
        "karpenter.sh/nodepool-hash-version": karpenter_hash.HASH_VERSION,
    }
    custom_objects.create(admin, NODECLAIM, body)
    live = NodePool.model_validate(raw_pool)

    def stamped() -> bool:
        annotations = nodeclaims.get(admin, name)["metadata"].get("annotations") or {}
        # (the launch adds its own annotations beside them)
        return annotations.items() >= hash_annotations(live).items()

    await until(stamped, timeout=30, what="re-stamped with the pool's hash")
    await until(lambda: claim_ready(admin, name), timeout=60, what="claim Ready")
    node = nodeclaims.get(admin, name)["status"]["nodeName"]
    ns = f"t-{uuid.uuid4().hex[:8]}"
    create_namespace(admin, ns)
    create_pod(admin, pod("web-0", ns, node=node))
    at = await until(
        lambda: nodeclaims.get(admin, name)["status"].get("lastPodEventTime"),
        timeout=30,
        what="lastPodEventTime",
    )
    assert at.endswith("Z")


async def test_deleting_a_node_starts_its_replacement_before_its_pods_are_evicted(
    running_worker: tuple[Client, str, str], admin: Kube, cloud: Cloud
) -> None:
    """``kubectl delete node``: as Karpenter's provisioner counts the pods of deleting nodes,
    a replacement NodeClaim is made while the node's pod still runs there (a PDB holds its
    eviction), not once the pod has been evicted and turned Unschedulable."""
    client, cluster, _queue = running_worker
    pool = f"pool-{uuid.uuid4().hex[:6]}"
    ensure_nodepool(admin, pool, disruption={"consolidateAfter": "Never"})
    name = f"{pool}-going"
    create_claim(admin, name, pool)
    await until(lambda: claim_ready(admin, name), timeout=60, what="claim Ready")
    node = nodeclaims.get(admin, name)["status"]["nodeName"]
    ns = f"t-{uuid.uuid4().hex[:8]}"
    create_namespace(admin, ns)
    selector = {"nodeSelector": {"karpenter.sh/nodepool": pool}}
    create_pod(admin, pod("db-0", ns, node=node, spec=selector))
    create_pdb(admin, ns, "db-pdb")
    await until(
        lambda: pods.get(admin, ns, "db-0").get("status", {}).get("phase") == "Running",
        what="db-0 running",
    )

    raw.call(admin.core.delete_node, node)

    def replacement() -> str | None:
        listed, _ = nodeclaims.list_(admin, nodepool=pool)
        others = [c["metadata"]["name"] for c in listed if c["metadata"]["name"] != name]
        return others[0] if others else None

    new = await until(replacement, timeout=60, what="a replacement NodeClaim")
    still = pods.get(admin, ns, "db-0")
    assert still["spec"]["nodeName"] == node and not still["metadata"].get("deletionTimestamp")
    # made by a provisioning round (the workflow counts it only once its lifecycle started)
    made = nodeclaims.get(admin, new)["metadata"].get("annotations") or {}
    assert made.get("joinery.dev/provisioning-round")
    # let it go: the drain ends, the old claim terminates, the replacement comes up
    raw.call(admin.policy.delete_namespaced_pod_disruption_budget, "db-pdb", ns)
    handle = client.get_workflow_handle(contract.nodeclaim_id(cluster, name))
    assert await asyncio.wait_for(handle.result(), 90) == "Terminated"
    await until(lambda: claim_ready(admin, new), timeout=60, what="the replacement Ready")
    raw.call(admin.custom.delete_cluster_custom_object, "karpenter.sh", "v1", "nodeclaims", new)
