"""The workflows that matter, on ``temporal-server`` with PostgreSQL: pending pods get a node
through the provisioner, the NodeClaim lifecycle is findable by its search attributes (SQL
visibility, not the dev server's), and an operator disruption drains and terminates it."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from kubernetes import client as k8s
from temporalio.api.enums.v1 import EventType

from activities.kubernetes import nodeclaims, raw
from activities.kubernetes.client import Kube
from activities.kubernetes.errors import NotFound
from models import contract
from tests.support.cloud import Cloud
from tests.support.kube_objects import create_namespace, ensure_nodepool, pod
from tests.support.prod_worker import RunningWorker
from tests.support.waiting import until
from workflows.nodeclaim.state import DisruptRequest
from workflows.nodeclaim.workflow import NodeClaimWorkflow
from workflows.provisioner import ProvisionerWorkflow

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.production]


def deployment(ns: str, pool: str, replicas: int) -> dict[str, Any]:
    template = pod("web", ns, spec={"nodeSelector": {"karpenter.sh/nodepool": pool}})
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": ns},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": template["spec"]},
        },
    }


def running_pods(admin: Kube, ns: str) -> int:
    listed = raw.call(admin.core.list_namespaced_pod, ns).get("items") or []
    return sum(
        1
        for p in listed
        if not p["metadata"].get("deletionTimestamp")
        and p.get("status", {}).get("phase") == "Running"
    )


async def test_pending_pods_get_a_node_and_a_disruption_retires_it(
    prod_worker: RunningWorker,
    admin: Kube,
    cloud: Cloud,
) -> None:
    client = prod_worker.client
    pool = f"pool-{uuid.uuid4().hex[:6]}"
    ensure_nodepool(admin, pool)
    ns = f"t-{uuid.uuid4().hex[:8]}"
    create_namespace(admin, ns)
    apps = k8s.AppsV1Api(admin.api_client)
    raw.call(apps.create_namespaced_deployment, ns, deployment(ns, pool, 3))

    await until(lambda: running_pods(admin, ns) == 3, timeout=120, what="pods running")
    [claim] = nodeclaims.list_(admin, nodepool=pool)[0]
    name = claim["metadata"]["name"]
    prov = await client.get_workflow_handle(contract.provisioner_id(prod_worker.cluster)).query(
        ProvisionerWorkflow.status
    )
    assert prov.created >= 1
    handle = client.get_workflow_handle(contract.nodeclaim_id(prod_worker.cluster, name))
    status = await until(lambda: _phase(handle, "Ready"), timeout=60, what="the lifecycle Ready")
    assert status.nodepool == pool
    assert len(cloud.instances_of(name)) == 1

    # SQL visibility answers the same queries the Temporal UI sends
    query = f"NodePool = '{pool}' AND Phase = 'Ready' AND InstanceType = '{status.instance_type}'"

    async def listed() -> list[str]:
        return [wf.id async for wf in client.list_workflows(query)]

    assert await until(listed, timeout=60, what="listed by search attributes") == [
        contract.nodeclaim_id(prod_worker.cluster, name)
    ]

    await handle.execute_update(NodeClaimWorkflow.disrupt, DisruptRequest("Maintenance"))
    assert await handle.result() == "Terminated"
    # every call of the lifecycle is a local activity (shape 3: the launch too), each one
    # marker in its workflow task: the run schedules no regular activity at all
    history = await handle.fetch_history()
    scheduled = [
        e.activity_task_scheduled_event_attributes.activity_type.name
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    ]
    assert scheduled == [], scheduled
    assert contract.NodeClaimActivity.LAUNCH in _local_activities(history)
    with pytest.raises(NotFound):
        nodeclaims.get(admin, name)
    assert cloud.instances_of(name) == []
    await until(lambda: running_pods(admin, ns) == 3, timeout=120, what="pods on a replacement")
    raw.call(apps.delete_namespaced_deployment, "web", ns)


def _local_activities(history: Any) -> list[str]:
    """The local activities a history records (one marker each), by type."""
    return [
        json.loads(e.marker_recorded_event_attributes.details["data"].payloads[0].data)[
            "activity_type"
        ]
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED
        and "data" in e.marker_recorded_event_attributes.details
    ]


async def _phase(handle: Any, phase: str) -> Any:
    status = await handle.query(NodeClaimWorkflow.status)
    return status if status.phase == phase else None
