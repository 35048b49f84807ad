"""A fleet made to be consolidated, in a few rounds: the crash test's consolidation phase and
``benchmarks/round_overhead.py`` build it.

A NodePool offering m5.large and m5.xlarge. ``filler`` pods (2 CPU, one per node) need an
m5.xlarge each; ``web`` pods (1.2 CPU, one per node, behind a PDB with ``maxUnavailable: 1``)
then land beside them. Scaling ``filler`` to 0 and ``web`` to half leaves empty nodes (Empty:
deleted) and m5.xlarge nodes holding one ``web`` pod that an m5.large holds for half the
price (Underutilized: replaced). With the pool's budget at 10% of its nodes (Karpenter's
default), that is one command per round on a small fleet.
"""

from __future__ import annotations

from typing import Any

from kubernetes import client as k8s

from activities.kubernetes import custom_objects, nodeclaims, raw
from activities.kubernetes.client import Kube
from activities.kubernetes.resources import NODEPOOL
from models import labels as L
from sandbox.scenarios.common import deployment

FILLER, WEB = "filler", "web"
SMALL, LARGE = "m5.large", "m5.xlarge"
BUDGET_PERCENT = 10
MAX_UNAVAILABLE = 1

Obj = dict[str, Any]


def create_nodepool(admin: Kube, name: str, nodeclass: str = "default") -> None:
    custom_objects.create(
        admin,
        NODEPOOL,
        {
            "metadata": {"name": name},
            "spec": {
                "disruption": {
                    "consolidationPolicy": "WhenEmptyOrUnderutilized",
                    "consolidateAfter": "0s",
                    "budgets": [{"nodes": f"{BUDGET_PERCENT}%"}],
                },
                "template": {
                    "spec": {
                        "nodeClassRef": {
                            "group": "karpenter.k8s.aws",
                            "kind": "EC2NodeClass",
                            "name": nodeclass,
                        },
                        "requirements": [
                            {"key": L.INSTANCE_TYPE, "operator": "In", "values": [SMALL, LARGE]},
                            {"key": L.CAPACITY_TYPE, "operator": "In", "values": ["on-demand"]},
                        ],
                    }
                },
            },
        },
    )


def create_web_pdb(admin: Kube, namespace: str) -> None:
    raw.call(
        admin.policy.create_namespaced_pod_disruption_budget,
        namespace,
        {
            "metadata": {"name": WEB},
            "spec": {
                "maxUnavailable": MAX_UNAVAILABLE,
                "selector": {"matchLabels": {"app": WEB}},
            },
        },
    )


def create_spread(admin: Kube, namespace: str, pool: str, app: str, replicas: int) -> None:
    """``replicas`` pods of ``app`` (``filler`` or ``web``) in ``pool``, one per node."""
    cpu = "2" if app == FILLER else "1200m"
    body = deployment(
        app, scenario="spread-fleet", replicas=replicas, cpu=cpu, memory="1Gi", one_per_node=True
    )
    body["spec"]["template"]["spec"]["nodeSelector"] = {L.NODEPOOL: pool}
    raw.call(k8s.AppsV1Api(admin.api_client).create_namespaced_deployment, namespace, body)


def scale(admin: Kube, namespace: str, app: str, replicas: int) -> None:
    raw.call(
        k8s.AppsV1Api(admin.api_client).patch_namespaced_deployment_scale,
        app,
        namespace,
        {"spec": {"replicas": replicas}},
    )


def running(admin: Kube, namespace: str, app: str) -> list[Obj]:
    listed = (
        raw.call(admin.core.list_namespaced_pod, namespace, label_selector=f"app={app}").get(
            "items"
        )
        or []
    )
    return [
        p
        for p in listed
        if p.get("status", {}).get("phase") == "Running"
        and not p["metadata"].get("deletionTimestamp")
    ]


def consolidated(admin: Kube, namespace: str, pool: str, keep: int) -> bool:
    """The end state: ``keep`` m5.large nodes, their claims Ready, ``keep`` web pods running."""
    claims, _ = nodeclaims.list_(admin, nodepool=pool)
    nodes = raw.call(admin.core.list_node, label_selector=f"{L.NODEPOOL}={pool}").get("items") or []
    return (
        len(claims) == keep
        and all(_ready(c) and not c["metadata"].get("deletionTimestamp") for c in claims)
        and len(nodes) == keep
        and all(n["metadata"]["labels"].get(L.INSTANCE_TYPE) == SMALL for n in nodes)
        and len(running(admin, namespace, WEB)) == keep
    )


def _ready(claim: Obj) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (claim.get("status") or {}).get("conditions") or []
    )
