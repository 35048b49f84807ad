"""NodeResourcesFit: what a pod requests and whether a node has room for it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tests.oracle.cluster import Cluster, Obj
from tests.oracle.quantities import amounts


def _container_requests(c: Mapping[str, Any]) -> dict[str, int]:
    """API defaulting: a resource with a limit and no request requests its limit."""
    res = c.get("resources") or {}
    out = amounts(res.get("limits"))
    out.update(amounts(res.get("requests")))
    return out


def _add(a: dict[str, int], b: Mapping[str, int]) -> dict[str, int]:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + v
    return out


def _max(a: dict[str, int], b: Mapping[str, int]) -> dict[str, int]:
    out = dict(a)
    for k, v in b.items():
        out[k] = max(out.get(k, 0), v)
    return out


def pod_requests(pod: Obj, cluster: Cluster) -> dict[str, int]:
    """Containers summed; init containers by the max rule, where restartable init containers
    (sidecars) keep running and add to everything started after them; plus pod overhead
    (``spec.overhead``, or the RuntimeClass's ``overhead.podFixed`` admission would set)."""
    spec = pod.get("spec") or {}
    running: dict[str, int] = {}
    for c in spec.get("containers") or []:
        running = _add(running, _container_requests(c))
    sidecars: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for c in spec.get("initContainers") or []:
        req = _container_requests(c)
        if c.get("restartPolicy") == "Always":
            sidecars = _add(sidecars, req)
            init_peak = _max(init_peak, sidecars)
        else:
            init_peak = _max(init_peak, _add(sidecars, req))
    total = _max(_add(running, sidecars), init_peak)
    overhead = spec.get("overhead")
    if overhead is None and spec.get("runtimeClassName"):
        rc = cluster.runtime_classes.get(str(spec["runtimeClassName"])) or {}
        overhead = (rc.get("overhead") or {}).get("podFixed")
    return _add(total, amounts(overhead))


def node_allocatable(node: Obj) -> dict[str, int]:
    status = node.get("status") or {}
    return amounts(status.get("allocatable") or status.get("capacity"))


def fit_failure(pod: Obj, node: Obj, cluster: Cluster) -> str | None:
    """Too many pods, or a requested resource (> 0) beyond what is left of allocatable."""
    name = node["metadata"]["name"]
    alloc = node_allocatable(node)
    others = cluster.pods_on(name)
    if len(others) + 1 > alloc.get("pods", 0):
        return f"Too many pods ({len(others)} there, allocatable pods {alloc.get('pods', 0)})"
    used: dict[str, int] = {}
    for p in others:
        used = _add(used, pod_requests(p, cluster))
    for resource, want in sorted(pod_requests(pod, cluster).items()):
        if want <= 0 or resource == "pods":
            continue
        free = alloc.get(resource, 0) - used.get(resource, 0)
        if want > free:
            return f"Insufficient {resource} (requests {want}, free {free})"
    return None
