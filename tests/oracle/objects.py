"""Small builders of Kubernetes objects as dicts, for the oracle's tests and generators."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"


def node(
    name: str,
    labels: Mapping[str, str] | None = None,
    taints: Sequence[Mapping[str, Any]] = (),
    cpu: str = "4",
    memory: str = "16Gi",
    pods: int = 110,
    extra: Mapping[str, str] | None = None,
    unschedulable: bool = False,
) -> dict[str, Any]:
    alloc = {"cpu": cpu, "memory": memory, "pods": str(pods), **(extra or {})}
    spec: dict[str, Any] = {"taints": list(taints)}
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {HOSTNAME: name, **(labels or {})}},
        "spec": spec,
        "status": {"allocatable": alloc, "capacity": alloc},
    }


def pod(
    name: str,
    cpu: str | None = "100m",
    memory: str | None = None,
    labels: Mapping[str, str] | None = None,
    namespace: str = "default",
    node_name: str | None = None,
    **spec: Any,
) -> dict[str, Any]:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    body: dict[str, Any] = {
        "containers": [{"name": "c", "image": "x", "resources": {"requests": requests}}],
        **spec,
    }
    if node_name:
        body["nodeName"] = node_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels or {})},
        "spec": body,
    }


def spread(key: str, max_skew: int, match: Mapping[str, str], **extra: Any) -> dict[str, Any]:
    return {
        "topologyKey": key,
        "maxSkew": max_skew,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": dict(match)},
        **extra,
    }


def pod_term(key: str, match: Mapping[str, str], **extra: Any) -> dict[str, Any]:
    return {"topologyKey": key, "labelSelector": {"matchLabels": dict(match)}, **extra}


def affinity(
    node_terms: Sequence[Mapping[str, Any]] | None = None,
    pod_affinity: Sequence[Mapping[str, Any]] = (),
    anti: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if node_terms is not None:
        out["nodeAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": list(node_terms)
            }
        }
    if pod_affinity:
        out["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": list(pod_affinity)}
    if anti:
        out["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": list(anti)}
    return out
