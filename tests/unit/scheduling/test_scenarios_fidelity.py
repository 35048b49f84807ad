"""Where Joinery follows Karpenter's rules over its own: DaemonSet host ports on new nodes and
custom labels nothing defines (docs/scheduling.md, "Karpenter's rules kept")."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.manifests import daemonset, node_affinity, nodepool, pod, req
from tests.support.plans import plan, reason, where


def _with_host_port(body: dict[str, Any], port: int) -> dict[str, Any]:
    containers = (
        body.get("spec", {}).get("containers") or body["spec"]["template"]["spec"]["containers"]
    )
    containers[0]["ports"] = [{"containerPort": port, "hostPort": port}]
    return body


def test_pod_needing_a_host_port_a_daemonset_holds_is_not_planned_on_a_new_node() -> None:
    out = plan(
        [
            nodepool(),
            _with_host_port(daemonset("node-exporter"), 9100),
            _with_host_port(pod("exporter-too", "100m", "128Mi"), 9100),
            _with_host_port(pod("other-port", "100m", "128Mi"), 9200),
        ]
    )
    assert where(out)["default/exporter-too"] == "unschedulable"
    assert "host port" in reason(out, "default/exporter-too")
    assert where(out)["default/other-port"].startswith("claim")


def test_a_daemonset_that_does_not_run_on_the_pool_leaves_its_port_free() -> None:
    out = plan(
        [
            nodepool(),
            _with_host_port(daemonset("gpu-agent", node_selector={"gpu": "yes"}), 9100),
            _with_host_port(pod("exporter", "100m", "128Mi"), 9100),
        ]
    )
    assert where(out)["default/exporter"].startswith("claim")


@pytest.mark.parametrize(
    ("operator", "values", "schedules"),
    [
        ("Exists", (), False),
        ("In", ("a",), False),
        ("NotIn", ("a",), True),
        ("DoesNotExist", (), True),
    ],
)
def test_a_custom_label_nothing_defines(
    operator: str, values: tuple[str, ...], schedules: bool
) -> None:
    """Karpenter's Compatible: a key no NodePool or instance type defines can only be excluded."""
    docs = [
        nodepool(),
        pod("p", "1", "1Gi", affinity=node_affinity([req("example.com/team", operator, *values)])),
    ]
    out = plan(docs)
    assert where(out)["default/p"].startswith("claim") is schedules
    if not schedules:
        assert "example.com/team" in reason(out, "default/p")


def _namespace(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def _anti_to_db(**term_extra: Any) -> dict[str, Any]:
    term = {
        "labelSelector": {"matchLabels": {"app": "db"}},
        "topologyKey": "kubernetes.io/hostname",
        **term_extra,
    }
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def _claims_shared(out: dict[str, Any], a: str, b: str) -> bool:
    return where(out)[a] == where(out)[b]


@pytest.mark.parametrize(
    ("term_extra", "apart"),
    [
        ({}, False),  # own namespace only: the db in "data" is not selected
        ({"namespaces": ["data"]}, True),
        ({"namespaceSelector": {"matchLabels": {"team": "storage"}}}, True),
        ({"namespaceSelector": {"matchLabels": {"team": "web"}}}, False),
        ({"namespaceSelector": {}}, True),  # every namespace
        (
            {
                "namespaceSelector": {
                    "matchExpressions": [
                        {
                            "key": "kubernetes.io/metadata.name",
                            "operator": "In",
                            "values": ["data"],
                        }
                    ]
                }
            },
            True,
        ),
    ],
)
def test_pod_anti_affinity_namespaces_and_namespace_selector(
    term_extra: dict[str, Any], apart: bool
) -> None:
    """The kube-scheduler's rule: ``namespaces`` and ``namespaceSelector`` add up; neither
    means the pod's own namespace; ``{}`` means every namespace. Namespace labels come from
    Namespace documents, plus ``kubernetes.io/metadata.name`` on every namespace."""
    out = plan(
        [
            nodepool(),
            _namespace("data", team="storage"),
            _namespace("default", team="web"),
            pod("db", "100m", "128Mi", labels={"app": "db"}, namespace="data"),
            pod("web", "100m", "128Mi", affinity=_anti_to_db(**term_extra)),
        ]
    )
    assert _claims_shared(out, "data/db", "default/web") is not apart
