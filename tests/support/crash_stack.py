"""What the crash tests (EC2 and Azure) run against and set up the same way: a Temporal dev
server and a control plane, the ``joinery worker`` command line for them, and a ``web``
Deployment whose pods each need a node of their own."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kubernetes import client as k8s
from temporalio.testing import WorkflowEnvironment

from activities.kubernetes import raw
from activities.kubernetes.client import Kube
from sandbox.cluster import Cluster
from tests.support.temporal_servers import BIN, start_dev_server


@contextmanager
def temporal_and_cluster(
    work: Path,
) -> Iterator[tuple[asyncio.AbstractEventLoop, WorkflowEnvironment, Cluster]]:
    """A Temporal dev server (with the search attributes, on its own event loop, which the
    test uses for its client calls) and a control plane under ``work``."""
    loop = asyncio.new_event_loop()
    env = loop.run_until_complete(start_dev_server())
    try:
        with Cluster.start(work / "k8s") as cluster:
            yield loop, env, cluster
    finally:
        loop.run_until_complete(env.shutdown())
        loop.close()


def worker_argv(
    env: WorkflowEnvironment,
    cluster: Cluster,
    work: Path,
    *,
    cluster_name: str,
    region: str,
    cloud: list[str],
) -> list[str]:
    """``joinery worker`` as an operator runs it against the stack, its task queue named for
    the cluster, its catalog cached in ``work`` (a restart does not load it again); ``cloud``
    holds the provider's own flags."""
    return [
        str(BIN / "joinery"),
        "worker",
        *cloud,
        "--address",
        env.client.service_client.config.target_host,
        "--task-queue",
        cluster_name,
        "--cluster",
        cluster_name,
        "--kubeconfig",
        str(cluster.kubeconfig_path),
        "--region",
        region,
        "--health-port",
        "0",
        "--search-attributes",
        "--catalog-cache",
        str(work / "catalog.cache"),
    ]


def create_web(admin: Kube, namespace: str, pool: str, replicas: int) -> None:
    """The ``web`` Deployment on ``pool``: each pod asks 1.2 CPU, so a 2-CPU node holds one,
    and every pod a drain moves needs a new node."""
    spec = {
        "nodeSelector": {"karpenter.sh/nodepool": pool},
        "terminationGracePeriodSeconds": 0,
        "containers": [
            {
                "name": "web",
                "image": "registry.k8s.io/pause:3.10",
                "resources": {"requests": {"cpu": "1200m", "memory": "1Gi"}},
            }
        ],
    }
    raw.call(
        k8s.AppsV1Api(admin.api_client).create_namespaced_deployment,
        namespace,
        {
            "metadata": {"name": "web"},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": spec},
            },
        },
    )


def running(admin: Kube, namespace: str) -> int:
    """How many pods of ``namespace`` run (and are not being deleted)."""
    pods = raw.call(admin.core.list_namespaced_pod, namespace).get("items") or []
    return sum(
        1
        for p in pods
        if p.get("status", {}).get("phase") == "Running"
        and not p["metadata"].get("deletionTimestamp")
    )
