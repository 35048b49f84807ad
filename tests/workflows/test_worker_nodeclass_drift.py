"""The whole worker on the dev server, the real control plane, emulated EC2 and simulated
kubelets: when an EC2NodeClass's ``amiSelectorTerms`` move to a newer image, its status
follows, the claim on the old image is marked Drifted (AMIDrift) and a disruption round rolls
it onto a node launched from the new image, its pod moving along."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from kubernetes import client as k8s
from temporalio.testing import WorkflowEnvironment

from activities.kubernetes import custom_objects, nodeclaims, raw
from activities.kubernetes.client import Kube
from activities.kubernetes.errors import NotFound
from activities.kubernetes.resources import EC2NODECLASS
from models import contract
from models import labels as L
from sandbox.ec2.seed import add_image
from tests.support.cloud import Cloud
from tests.support.kube_objects import condition, create_namespace, ensure_nodepool, pod
from tests.support.running_worker import claim_ready, worker_running
from tests.support.waiting import until
from workflows.disruption.workflow import DisruptionWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")
REGION = "us-east-1"


def images(cloud: Cloud, tag: str) -> tuple[str, str]:
    """Two amd64 images tagged ``test=<tag>``, ``release=a`` (older) and ``release=b``."""
    out = []
    for release, day in (("a", 1), ("b", 2)):
        image = add_image(
            REGION, f"custom-{tag}-{release}", "x86_64", datetime(2026, 1, day, tzinfo=UTC)
        )
        cloud.clients.ec2.create_tags(
            Resources=[image],
            Tags=[{"Key": "test", "Value": tag}, {"Key": "release", "Value": release}],
        )
        out.append(image)
    return out[0], out[1]


def nodeclass(name: str, tag: str, release: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "wf-cluster"}}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "wf-cluster"}}],
            "amiSelectorTerms": [{"tags": {"test": tag, "release": release}}],
            "amiFamily": "AL2023",
            "role": "KarpenterNodeRole",
        },
    }


def first_ami(admin: Kube, name: str) -> str | None:
    amis = (custom_objects.get(admin, EC2NODECLASS, name).get("status") or {}).get("amis") or []
    return str(amis[0]["id"]) if amis else None


async def test_new_ami_selector_terms_roll_the_node_onto_the_new_image(
    dev_env: WorkflowEnvironment, kube: Kube, admin: Kube, cloud: Cloud
) -> None:
    tag = uuid.uuid4().hex[:6]
    old, new = images(cloud, tag)
    klass = f"drift-{tag}"
    custom_objects.create(admin, EC2NODECLASS, nodeclass(klass, tag, "a"))
    pool = f"pool-{tag}"
    ensure_nodepool(
        admin,
        pool,
        nodeClassRef={"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": klass},
    )
    ns = f"t-{tag}"
    async with worker_running(dev_env, kube, admin, cloud) as (client, cluster, _queue):
        create_namespace(admin, ns)
        template = pod("web", ns, spec={"nodeSelector": {L.NODEPOOL: pool}})
        deployment = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": ns},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": template["spec"]},
            },
        }
        raw.call(k8s.AppsV1Api(admin.api_client).create_namespaced_deployment, ns, deployment)

        def one_ready_claim() -> str | None:
            claims, _ = nodeclaims.list_(admin, nodepool=pool)
            ready = [c for c in claims if claim_ready(admin, c["metadata"]["name"])]
            return str(ready[0]["metadata"]["name"]) if len(claims) == 1 and ready else None

        first = await until(one_ready_claim, timeout=120, what="the pool's first node Ready")
        launched = nodeclaims.get(admin, first)
        assert launched["status"]["imageID"] == old
        noted = launched["metadata"]["annotations"]
        assert noted[L.SUBNET_ID_ANNOTATION].startswith("subnet-")
        assert noted[L.SECURITY_GROUP_IDS_ANNOTATION].startswith("sg-")

        # the class now selects the newer image: its status follows, and the node drifts
        custom_objects.merge_patch(
            admin,
            EC2NODECLASS,
            klass,
            {"spec": {"amiSelectorTerms": [{"tags": {"test": tag, "release": "b"}}]}},
        )
        await until(lambda: first_ami(admin, klass) == new, timeout=60, what="status.amis")

        def drifted() -> dict[str, Any] | None:
            return condition(nodeclaims.get(admin, first), "Drifted")

        mark = await until(drifted, timeout=90, what="the old claim marked Drifted")
        assert mark["reason"] == "AMIDrift"
        assert mark["message"] == f"{old} -> {new} (EC2NodeClass {klass}'s AMI for m5.large)"

        def rolled() -> str | None:
            try:
                nodeclaims.get(admin, first)
                return None
            except NotFound:
                pass
            return one_ready_claim()

        second = await until(rolled, timeout=180, what="the node rolled onto a new one")
        assert nodeclaims.get(admin, second)["status"]["imageID"] == new
        handle = client.get_workflow_handle(contract.disruption_id(cluster))
        status = await handle.query(DisruptionWorkflow.status)
        assert status.commands_done >= 1

        def web_running_on_new_node() -> bool:
            node = nodeclaims.get(admin, second)["status"].get("nodeName")
            listed = raw.call(admin.core.list_namespaced_pod, ns).get("items") or []
            return any(
                p["spec"].get("nodeName") == node
                and p.get("status", {}).get("phase") == "Running"
                and not p["metadata"].get("deletionTimestamp")
                for p in listed
            )

        await until(web_running_on_new_node, timeout=60, what="the pod running on the new node")
