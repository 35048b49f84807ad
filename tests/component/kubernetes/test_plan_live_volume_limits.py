"""``joinery plan --kubeconfig`` reads CSINodes: a node whose CSINode allows one EBS volume,
already used by its pod, takes no pending pod with another EBS volume (as Karpenter, and as the
kube-scheduler that marked the pod unschedulable)."""

from __future__ import annotations

from pathlib import Path

import pytest

from activities.kubernetes import custom_objects
from activities.kubernetes.client import Kube
from activities.kubernetes.resources import NODEPOOL
from sandbox.cluster import Cluster
from tests.support.kube_helpers import ANY_CAPACITY_TYPE, delete_node, kwok_node, plan_live, pod
from tests.support.manifests import nodepool_body
from tests.support.waiting import eventually

EBS = "ebs.csi.aws.com"


def _pvc(name: str, storage_class: str) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": storage_class,
            "resources": {"requests": {"storage": "1Gi"}},
        },
    }


def _with_claim(body: dict[str, object], claim: str) -> dict[str, object]:
    spec = body["spec"]
    assert isinstance(spec, dict)
    spec["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]
    return body


def test_plan_counts_volumes_against_a_live_csinode(
    cluster: Cluster,
    admin: Kube,
    namespace: str,
    unique: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    pool, node, sc = f"vol-{unique}", f"vol-{unique}", f"gp3-{unique}"
    mark = {"example.com/volume-test": unique}
    custom_objects.create(
        admin, NODEPOOL, nodepool_body(pool, requirements=ANY_CAPACITY_TYPE, labels=mark)
    )
    admin.storage.create_storage_class(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": sc},
            "provisioner": EBS,
            "volumeBindingMode": "WaitForFirstConsumer",
        }
    )
    labels = {
        **mark,
        "karpenter.sh/nodepool": pool,
        "karpenter.sh/initialized": "true",
        "karpenter.sh/capacity-type": "on-demand",
        "node.kubernetes.io/instance-type": "m5.large",
        "topology.kubernetes.io/zone": "us-east-1a",
    }
    admin.core.create_node(
        kwok_node(node, labels=labels, capacity={"cpu": "2", "memory": "8Gi", "pods": "29"})
    )
    admin.storage.create_csi_node(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSINode",
            "metadata": {"name": node},
            "spec": {"drivers": [{"name": EBS, "nodeID": node, "allocatable": {"count": 1}}]},
        }
    )
    try:
        for claim in ("used", "wanted"):
            admin.core.create_namespaced_persistent_volume_claim(namespace, _pvc(claim, sc))
        admin.core.create_namespaced_pod(
            namespace, _with_claim(pod("db-0", node_name=node), "used")
        )
        admin.core.create_namespaced_pod(
            namespace, _with_claim(pod("db-1", node_selector=mark), "wanted")
        )
        eventually(
            lambda: any(
                c.type == "PodScheduled" and c.reason == "Unschedulable"
                for c in admin.core.read_namespaced_pod("db-1", namespace).status.conditions or []
            ),
            what="kube-scheduler to find no room for db-1's volume",
        )
        doc = plan_live(cluster.kubeconfig_path, tmp_path, capsys)
        key = f"{namespace}/db-1"
        on_node = [p for n in doc["existingNodes"] for p in n["pods"]]
        assert key not in on_node
        assert [c["nodePool"] for c in doc["nodeClaims"] if key in c["pods"]] == [pool]
    finally:
        delete_node(admin.core, node)
        admin.storage.delete_csi_node(node)
        admin.storage.delete_storage_class(sc)
        custom_objects.delete(admin, NODEPOOL, pool)
