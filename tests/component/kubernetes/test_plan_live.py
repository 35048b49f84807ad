"""``joinery plan --kubeconfig``: the same inputs as the manifest files, read from a real API
server with Joinery's own (read-only) service account, with and without ``--disruption``."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from activities.kubernetes import custom_objects
from activities.kubernetes.client import Kube
from activities.kubernetes.resources import NODEPOOL
from sandbox.cluster import Cluster
from tests.support.kube_helpers import ANY_CAPACITY_TYPE, delete_node, kwok_node, plan_live, pod
from tests.support.manifests import nodepool_body
from tests.support.waiting import eventually


def _managed(name: str, pool: str) -> dict[str, object]:
    return kwok_node(
        name,
        labels={
            "karpenter.sh/nodepool": pool,
            "karpenter.sh/initialized": "true",
            "karpenter.sh/capacity-type": "on-demand",
            "node.kubernetes.io/instance-type": "m5.large",
            "topology.kubernetes.io/zone": "us-east-1a",
        },
        capacity={"cpu": "2", "memory": "8Gi", "pods": "29"},
    )


def test_plan_reads_a_live_cluster_read_only(
    cluster: Cluster,
    admin: Kube,
    kube: Kube,
    namespace: str,
    unique: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    pool = f"live-{unique}"
    busy, empty = f"busy-{unique}", f"empty-{unique}"
    custom_objects.create(
        admin,
        NODEPOOL,
        nodepool_body(
            pool,
            requirements=ANY_CAPACITY_TYPE,
            disruption={"consolidateAfter": "0s", "budgets": [{"nodes": "100%"}]},
        ),
    )
    for name in (busy, empty):
        admin.core.create_node(_managed(name, pool))
    try:
        admin.core.create_namespaced_pod(
            namespace, pod("web-0", labels={"app": "web"}, node_name=busy)
        )
        admin.core.create_namespaced_pod(namespace, pod("pending-0", node_selector={"x": "y"}))
        eventually(
            lambda: admin.core.read_namespaced_pod("web-0", namespace).status.phase == "Running",
            what="kwok to run the pod",
        )
        plain = plan_live(cluster.kubeconfig_path, tmp_path, capsys)
        assert "disruption" not in plain
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        args = ("--disruption", "--now", now)
        doc = plan_live(cluster.kubeconfig_path, tmp_path, capsys, *args)["disruption"]
        mine = {busy, empty}
        verdicts = {n: c["reason"] for c in doc["commands"] for n in c["nodes"] if n in mine}
        verdicts |= {v["node"]: "blocked" for v in doc["blocked"] if v["node"] in mine}
        verdicts |= {v["node"]: "kept" for v in doc["kept"] if v["node"] in mine}
        assert verdicts[empty] == "Empty"
        assert set(verdicts) == mine
    finally:
        for name in (busy, empty):
            delete_node(admin.core, name)
        custom_objects.delete(admin, NODEPOOL, pool)
