"""Karpenter's capacity and performance dashboards, as rewritten in deploy/grafana, render from
a worker's metrics: a sandbox run (pods provisioned on nodes of a pool with limits, an empty
node consolidated away) is scraped twice, and every panel's every query, evaluated as
Prometheus would (tests/support/promql.py), returns series; so does every variable."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import uuid
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client as k8s
from temporalio.client import Client

from activities.kubernetes import custom_objects, nodeclaims, raw
from activities.kubernetes.client import Kube
from activities.kubernetes.errors import AlreadyExists, NotFound
from activities.kubernetes.resources import NODEPOOL
from tests.support.kube_objects import M5, create_claim, create_namespace, pod
from tests.support.manifests import nodepool_body
from tests.support.promql import Store, evaluate, parse_scrape
from tests.support.running_worker import claim_ready
from tests.support.waiting import until
from tests.workflows.test_worker_integration import (  # noqa: F401 - fixtures
    running_worker,
    worker_metrics,
)

pytestmark = pytest.mark.asyncio(loop_scope="session")
GRAFANA = Path(__file__).parents[2] / "deploy" / "grafana"
BOARDS = ("karpenter-capacity-dashboard.json", "karpenter-performance-dashboard.json")
JOB = "joinery"
VARIABLE = re.compile(r"\$(__rate_interval|[a-z_]+)")


def _panels(panels: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for p in panels:
        out.append(p)
        out.extend(_panels(p.get("panels") or []))
    return out


def _label_values(query: str, store: Store) -> set[str]:
    """Grafana's ``label_values(metric, label)``: the label's non-empty values."""
    m = re.fullmatch(r"label_values\((\w+)(?:\{[^}]*\})?,\s*(\w+)\)", query.strip())
    assert m, query
    metric, label = m.groups()
    return {
        dict(ls).get(label, "")
        for ls, _ in store.after
        if dict(ls)["__name__"] == metric and dict(ls).get(label)
    }


def _fill(expr: str, values: dict[str, str]) -> str:
    return VARIABLE.sub(lambda m: values.get(m.group(1), m.group(0)), expr)


async def test_karpenters_dashboards_render_from_a_sandbox_run(
    running_worker: tuple[Client, str, str],  # noqa: F811
    admin: Kube,
    worker_metrics: str,  # noqa: F811
    scrape: Any,
) -> None:
    _client, _cluster, _queue = running_worker
    pool = f"dash-{uuid.uuid4().hex[:6]}"
    body = nodepool_body(pool, requirements=M5, limits={"cpu": "1000", "memory": "4000Gi"})
    with contextlib.suppress(AlreadyExists):
        custom_objects.create(admin, NODEPOOL, body)
    ns = f"t-{uuid.uuid4().hex[:8]}"
    create_namespace(admin, ns)
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
    raw.call(k8s.AppsV1Api(admin.api_client).create_namespaced_deployment, ns, deployment)

    def running() -> bool:
        listed = raw.call(admin.core.list_namespaced_pod, ns).get("items") or []
        return sum(p.get("status", {}).get("phase") == "Running" for p in listed) == 3

    await until(running, timeout=120, what="the deployment's pods running")
    # then a node nothing will run on: a disruption round removes it
    empty = f"{pool}-empty"
    create_claim(admin, empty, pool)
    await until(lambda: claim_ready(admin, empty), timeout=60, what="the empty claim Ready")

    async def consolidated() -> bool:
        try:
            nodeclaims.get(admin, empty)
        except NotFound:
            return True
        return False

    await until(consolidated, timeout=180, what="the empty node consolidated away")
    claims, _ = nodeclaims.list_(admin, nodepool=pool)
    for c in claims:
        await until(lambda c=c: claim_ready(admin, c["metadata"]["name"]), what="claims Ready")

    def terminated_seen() -> Any:
        m = scrape(worker_metrics)
        return m if m.has("karpenter_nodes_terminated_total", nodepool=pool) else None

    before = await until(terminated_seen, what="the termination on /metrics")
    await asyncio.sleep(5)
    after = scrape(worker_metrics)
    store = Store(parse_scrape(before.text, JOB), parse_scrape(after.text, JOB), seconds=5)

    # the series Karpenter's dashboards do not chart carry the run's real values too
    m = after
    assert m.value("karpenter_nodes_total_pod_requests", nodepool=pool, resource_type="pods") >= 3
    assert m.value("karpenter_nodepools_cost_total", nodepool=pool) > 0
    assert m.has("karpenter_cloudprovider_instance_type_offering_price_estimate")
    assert m.value("karpenter_cloudprovider_batcher_batch_size_count", batcher="create_fleet") >= 1
    assert m.value("karpenter_nodeclaims_termination_duration_seconds_count", nodepool=pool) == 1
    assert m.value("karpenter_nodes_lifetime_duration_seconds_count", nodepool=pool) == 1
    assert m.value("karpenter_nodes_termination_duration_seconds_count", nodepool=pool) == 1
    assert m.value("karpenter_nodes_drained_total", nodepool=pool) == 1
    assert m.value("karpenter_pods_bound_duration_seconds_count") >= 3
    assert m.value("karpenter_cluster_state_synced") == 1
    assert 0 < m.value("karpenter_cluster_utilization_percent", resource_type="cpu") <= 100

    empty_panels: list[str] = []
    for board_name in BOARDS:
        board = json.loads((GRAFANA / board_name).read_text())
        values = {"job": JOB, "__rate_interval": "1m"}
        choices: dict[str, list[str]] = {}
        for var in board["templating"]["list"]:
            if var["type"] == "query" and var["name"] != "job":
                query = var["query"]["query"]
                found = _label_values(query, store)
                assert found, f"{board_name}: variable {var['name']} ({query}) has no values"
                values[var["name"]] = ".*"  # "All"
            elif var["type"] == "custom":
                choices[var["name"]] = var["query"].split(",")
        for panel in _panels(board["panels"]):
            for target in panel.get("targets") or []:
                variants = [values]
                for name, options in choices.items():
                    if f"${name}" in target["expr"]:
                        variants = [{**values, name: o} for o in options]
                for filled in variants:
                    expr = _fill(target["expr"], filled)
                    assert "$" not in expr, expr
                    result = evaluate(expr, store)
                    if not isinstance(result, list) or not result:
                        empty_panels.append(f"{board_name}: {panel['title']}: {expr}")
    assert not empty_panels, "panels without series:\n" + "\n".join(empty_panels)
