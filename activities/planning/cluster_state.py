"""The cluster as the solver's input: NodePools, unschedulable and bound Pods, Nodes,
in-flight NodeClaims, DaemonSets, PVCs / PVs / StorageClasses and CSINodes (volume attach
limits), as ``Document``s.

Objects the solver would reject one at a time (a malformed Pod, an invalid NodePool) are
left out and named in ``skipped`` so one bad object never stops provisioning for the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubernetes import client as k8s
from pydantic import ValidationError

from activities.kubernetes import custom_objects, nodeclaims, nodepools, nodes, raw
from activities.kubernetes.client import Kube
from activities.kubernetes.object_cache import ObjectCache, WatchedObjects
from activities.kubernetes.resources import EC2NODECLASS
from models import labels as L
from models.errors import field_error
from models.nodepool import NodePool
from scheduling.inputs import Document
from scheduling.pods import PodError, parse_pod


@dataclass
class ClusterState:
    documents: list[Document] = field(default_factory=list)
    nodepools: list[NodePool] = field(default_factory=list)
    nodeclasses: dict[str, dict[str, Any]] = field(default_factory=dict)
    pending: int = 0
    skipped: list[str] = field(default_factory=list)
    invalid_pods: dict[str, str] = field(default_factory=dict)  # "ns/name" -> field: why
    uids: dict[str, str] = field(default_factory=dict)  # of unschedulable pods, for events
    # Every NodeClaim's name (deleting ones too) -> the provisioning round that made it ("").
    claim_rounds: dict[str, str] = field(default_factory=dict)


Obj = dict[str, Any]


def unschedulable(pod: dict[str, Any]) -> bool:
    """Pending, unbound and marked unschedulable by kube-scheduler (what Karpenter acts on)."""
    if (pod.get("spec") or {}).get("nodeName"):
        return False
    status = pod.get("status") or {}
    if status.get("phase") not in (None, "Pending"):
        return False
    return any(
        c.get("type") == "PodScheduled"
        and c.get("status") == "False"
        and c.get("reason") == "Unschedulable"
        for c in status.get("conditions") or []
    )


def _typed(items: list[dict[str, Any]], kind: str, api_version: str) -> list[dict[str, Any]]:
    return [{**i, "kind": kind, "apiVersion": api_version} for i in items]


def _listed(watched: ObjectCache, read: Callable[[], list[Obj]]) -> list[Obj]:
    """The worker's watched copy while its watch is synced, else the API server's list."""
    return watched.items() if watched.synced else read()


def read(
    kube: Kube,
    paused_pools: frozenset[str] = frozenset(),
    watched: WatchedObjects | None = None,
) -> ClusterState:
    """The cluster as the solver's input. With ``watched`` (the worker's watches), pods,
    Nodes and NodeClaims come from there while each watch is synced; the rest is listed."""
    state = ClusterState()
    docs = state.documents
    pools, _ = nodepools.list_(kube)
    for body in pools:
        name = str(body["metadata"]["name"])
        if name in paused_pools or body["metadata"].get("deletionTimestamp"):
            continue
        try:
            pool = NodePool.model_validate(body)
        except ValidationError as exc:
            state.skipped.append(f"NodePool {name}: {field_error(exc)}")
            continue
        state.nodepools.append(pool)
        docs.append(Document(body, f"NodePool {name}"))
    classes, _ = custom_objects.list_(kube, EC2NODECLASS)
    state.nodeclasses = {str(c["metadata"]["name"]): c for c in classes}
    w = watched or WatchedObjects()  # without watches: never synced, always listed
    pods = _listed(w.pods, lambda: raw.list_all(kube.core.list_pod_for_all_namespaces))
    for pod in pods:
        meta = pod.get("metadata") or {}
        key = f"{meta.get('namespace')}/{meta.get('name')}"
        where = f"Pod {key}"
        bound = bool((pod.get("spec") or {}).get("nodeName"))
        if not bound and not unschedulable(pod):
            continue
        if not bound:
            state.uids[key] = str(meta.get("uid") or "")
        try:
            parse_pod(pod)
        except (PodError, ValueError) as exc:
            state.skipped.append(f"{where}: {exc}")
            state.invalid_pods[key] = str(exc)
            continue
        if not bound:
            state.pending += 1
        docs.append(Document({**pod, "kind": "Pod", "apiVersion": "v1"}, where))
    for node in _typed(_listed(w.nodes, lambda: nodes.list_(kube)), "Node", "v1"):
        docs.append(Document(node, f"Node {node['metadata']['name']}"))
    claims = _listed(w.nodeclaims, lambda: nodeclaims.list_(kube)[0])
    for claim in claims:
        meta = claim["metadata"]
        state.claim_rounds[str(meta["name"])] = str(
            (meta.get("annotations") or {}).get(L.PROVISIONING_ROUND, "")
        )
        if meta.get("deletionTimestamp"):
            continue
        docs.append(Document(claim, f"NodeClaim {claim['metadata']['name']}"))
    apps = k8s.AppsV1Api(kube.api_client)
    for ds in _typed(raw.list_all(apps.list_daemon_set_for_all_namespaces), "DaemonSet", "apps/v1"):
        docs.append(Document(ds, f"DaemonSet {ds['metadata']['name']}"))
    listing = (
        (kube.core.list_persistent_volume_claim_for_all_namespaces, "PersistentVolumeClaim", "v1"),
        (kube.core.list_persistent_volume, "PersistentVolume", "v1"),
        (kube.storage.list_storage_class, "StorageClass", "storage.k8s.io/v1"),
        (kube.storage.list_csi_node, "CSINode", "storage.k8s.io/v1"),
    )
    for method, kind, version in listing:
        for item in _typed(raw.list_all(method), kind, version):
            docs.append(Document(item, f"{kind} {item['metadata']['name']}"))
    return state
