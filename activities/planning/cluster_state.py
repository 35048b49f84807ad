"""The cluster as the solver's input: NodePools, unschedulable and bound Pods, Nodes,
in-flight NodeClaims, DaemonSets, PVCs / PVs / StorageClasses and CSINodes (volume attach
limits), as ``Document``s.

Objects the solver would reject one at a time (a malformed Pod, an invalid NodePool, one
asking for what Joinery does not implement, ``models.unimplemented``) are left out and named
in ``skipped`` so one bad object never stops provisioning for the rest.
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
from activities.kubernetes.resources import EC2NODECLASS, CustomResource
from activities.planning.claim_nodes import ClaimNodes, linked
from models import labels as L
from models import unimplemented
from models.errors import field_error
from models.nodepool import NodePool
from scheduling.going_away import going_away_nodes, reschedulable
from scheduling.inputs import Document, parsed_pod
from scheduling.pods import PodError, SpecMemo


@dataclass
class ClusterState:
    documents: list[Document] = field(default_factory=list)
    nodepools: list[NodePool] = field(default_factory=list)
    nodeclasses: dict[str, dict[str, Any]] = field(default_factory=dict)
    pending: int = 0
    # Pods on nodes that are going away which the round plans for too, as Karpenter's
    # provisioner does (``scheduling.going_away``): a replacement starts with the deletion.
    displaced: int = 0
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


@dataclass(frozen=True, slots=True)
class _PodEntry:
    """A watched pod as a round reads it, made once per version of the pod (its Document
    keeps the parse, ``scheduling.inputs.parsed_pod``)."""

    key: str  # namespace/name
    uid: str
    bound: bool
    unschedulable: bool
    doc: Document


def _pod_entry(pod: Obj) -> _PodEntry:
    meta = pod.get("metadata") or {}
    key = f"{meta.get('namespace')}/{meta.get('name')}"
    bound = bool((pod.get("spec") or {}).get("nodeName"))
    return _PodEntry(
        key=key,
        uid=str(meta.get("uid") or ""),
        bound=bound,
        unschedulable=not bound and unschedulable(pod),
        doc=Document({**pod, "kind": "Pod", "apiVersion": "v1"}, f"Pod {key}"),
    )


def _claim_document(claim: Obj) -> Document:
    """One per version of a watched claim, so its parse (``claim_parts``) is kept."""
    return Document(claim, f"NodeClaim {claim['metadata']['name']}")


def _node_document(node: Obj) -> Document:
    """One per version of a watched Node, so its parse (``scheduling.inputs``) is kept."""
    name = node["metadata"]["name"]
    return Document({**node, "kind": "Node", "apiVersion": "v1"}, f"Node {name}")


def _deleting(obj: Obj) -> bool:
    return bool((obj.get("metadata") or {}).get("deletionTimestamp"))


def _listed(watched: ObjectCache, read: Callable[[], list[Obj]]) -> list[Obj]:
    """The worker's watched copy while its watch is synced, else the API server's list."""
    return watched.items() if watched.synced else read()


def read(
    kube: Kube,
    paused_pools: frozenset[str] = frozenset(),
    watched: WatchedObjects | None = None,
    nodeclass_resource: CustomResource = EC2NODECLASS,
    managed_only: bool = False,
) -> ClusterState:
    """The cluster as the solver's input. With ``watched`` (the worker's watches), pods,
    Nodes and NodeClaims come from there while each watch is synced; the rest is listed.
    ``managed_only`` (the worker's rounds) leaves out NodePools of another provider's node
    class, as Karpenter's controllers do; ``joinery plan`` on a live cluster keeps them, to
    name the cluster's provider from them."""
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
        if refused := unimplemented.nodepool_fields(body):
            state.skipped.append(f"NodePool {name}: {unimplemented.message(refused)}")
            continue
        ref = pool.spec.template.spec.node_class_ref
        managed = (ref.group, ref.kind) == (nodeclass_resource.group, nodeclass_resource.kind)
        if managed_only and not managed:
            # Karpenter's IsManaged: another provider's pool is not this worker's to serve.
            state.skipped.append(
                f"NodePool {name}: spec.template.spec.nodeClassRef names {ref.kind} "
                f"({ref.group}), not this provider's {nodeclass_resource.kind}"
            )
            continue
        state.nodepools.append(pool)
        docs.append(Document(body, f"NodePool {name}"))
    classes, _ = custom_objects.list_(kube, nodeclass_resource)  # the provider's kind
    state.nodeclasses = {str(c["metadata"]["name"]): c for c in classes}
    add_watched(
        state,
        watched or WatchedObjects(),  # without watches: never synced, always listed
        lambda: raw.list_all(kube.core.list_pod_for_all_namespaces),
        lambda: nodes.list_(kube),
        lambda: nodeclaims.list_(kube)[0],
    )
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


def add_watched(
    state: ClusterState,
    w: WatchedObjects,
    list_pods: Callable[[], list[Obj]],
    list_nodes: Callable[[], list[Obj]],
    list_claims: Callable[[], list[Obj]],
) -> None:
    """Pods, Nodes and NodeClaims into ``state``: from the watches while each is synced
    (every pod and claim made into a Document once per version, its parse kept on it),
    else from the ``list_*`` answers."""
    docs = state.documents
    pods = _listed(w.pods, list_pods)
    listed_nodes = _listed(w.nodes, list_nodes)
    listed_claims = _listed(w.nodeclaims, list_claims)
    going = going_away_nodes(listed_nodes, listed_claims)
    memo = SpecMemo()  # a Deployment's replicas: one spec, parsed once
    for pod in pods:
        entry = w.pods.derived(pod, _pod_entry)
        if not entry.bound and not entry.unschedulable:
            continue
        if not entry.bound:
            state.uids[entry.key] = entry.uid
        elif going and pod["spec"]["nodeName"] in going and reschedulable(pod):
            state.displaced += 1
        try:
            parsed_pod(entry.doc, memo=memo)
        except (PodError, ValueError) as exc:
            state.skipped.append(f"{entry.doc.where}: {exc}")
            state.invalid_pods[entry.key] = str(exc)
            continue
        if not entry.bound:
            state.pending += 1
        docs.append(entry.doc)
    for node in listed_nodes:
        docs.append(w.nodes.derived(node, _node_document))
    owners = ClaimNodes(listed_nodes, listed_claims)
    for claim in listed_claims:
        meta = claim["metadata"]
        state.claim_rounds[str(meta["name"])] = str(
            (meta.get("annotations") or {}).get(L.PROVISIONING_ROUND, "")
        )
        if _deleting(claim):
            # No capacity, but the solver reads from it that its Node is going away.
            docs.append(w.nodeclaims.derived(claim, _claim_document))
            continue
        owner = owners.node_of(claim)
        if owner is not None:  # its Node is read before its providerID: count it once
            docs.append(_claim_document(linked(claim, owner)))
            continue
        docs.append(w.nodeclaims.derived(claim, _claim_document))
