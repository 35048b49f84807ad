"""For the Kubernetes component tests: Nodes that kwok runs, plain Pods, ``joinery plan``
against the test cluster, a Node deleted if present, and a write retried on Conflict."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import yaml
from kubernetes import client as k8s

from sandbox.cluster import KWOK_NODE_ANNOTATION, KWOK_NODE_ANNOTATION_VALUE

T = TypeVar("T")


def kwok_node(
    name: str,
    *,
    labels: dict[str, str] | None = None,
    provider_id: str | None = None,
    capacity: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A Node that kwok will run (mark Ready, start its pods), as a registering kubelet would."""
    resources = capacity or {"cpu": "4", "memory": "16Gi", "pods": "110"}
    node: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "annotations": {KWOK_NODE_ANNOTATION: KWOK_NODE_ANNOTATION_VALUE},
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                **(labels or {}),
            },
        },
        "spec": {},
        "status": {"capacity": resources, "allocatable": resources},
    }
    if provider_id:
        node["spec"]["providerID"] = provider_id
    return node


def pod(
    name: str,
    *,
    labels: dict[str, str] | None = None,
    node_selector: dict[str, str] | None = None,
    node_name: str | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "app",
                "image": "registry.k8s.io/pause:3.10",
                "resources": {"requests": {"cpu": "100m"}},
            }
        ],
        "terminationGracePeriodSeconds": 0,
    }
    if node_selector:
        spec["nodeSelector"] = node_selector
    if node_name:
        spec["nodeName"] = node_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": spec,
    }


# A NodePool requirement that allows every capacity type.
ANY_CAPACITY_TYPE = [{"key": "karpenter.sh/capacity-type", "operator": "Exists"}]

# A one-type catalog for `joinery plan --catalog` against the test cluster.
M5_CATALOG = {
    "instanceTypes": [
        {
            "name": "m5.large",
            "capacity": {"cpu": "2", "memory": "8Gi", "pods": "29"},
            "offerings": [{"zone": "us-east-1a", "capacityType": "on-demand", "price": 0.096}],
        }
    ]
}


def plan_live(kubeconfig: Path, tmp_path: Path, capsys: Any, *args: str) -> dict[str, Any]:
    """Run ``joinery plan --kubeconfig`` on the test cluster with M5_CATALOG; its JSON."""
    from worker.cli import main  # the CLI only for the tests that run it

    catalog = tmp_path / "catalog.yaml"
    catalog.write_text(yaml.safe_dump(M5_CATALOG))
    assert main(["plan", "--kubeconfig", str(kubeconfig), "--catalog", str(catalog), *args]) == 0
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    return doc


def delete_node(admin_core: k8s.CoreV1Api, name: str) -> None:
    try:
        admin_core.delete_node(name)
    except k8s.ApiException as exc:
        if exc.status != 404:
            raise


def on_fresh_read(write: Callable[[], T], attempts: int = 10) -> T:
    """Run ``write`` (which reads the object itself) again on ``Conflict``, as activities do.

    Kubelet-like writers (kwok heartbeats, the node lifecycle controller) move a Node's
    resourceVersion on their own, so a read-then-write can lose the race a few times.
    """
    from activities.kubernetes.errors import Conflict

    for _ in range(attempts - 1):
        try:
            return write()
        except Conflict:
            time.sleep(0.05)
    return write()
