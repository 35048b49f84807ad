"""The cluster as a disruption round reads it: what provisioning reads, plus
PodDisruptionBudgets and the NodeClaims already being deleted (a node whose claim is going
away uses up its pool's budget). Plain dicts wrapped as ``Document``s, read-only.

In the worker, pods, Nodes and NodeClaims come from its watches while each is synced (as
provisioning reads them; Karpenter's rounds read its informers): a scale-down runs a round
every few seconds, and listing them each time was most of the API requests it cost.

The node classes are kept apart (``ClusterState.nodeclasses``: the catalogs are built from
them); ``nodeclass_documents`` wraps them for the round, whose drift checks read them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from activities.kubernetes import nodeclaims, raw
from activities.kubernetes.client import Kube
from activities.kubernetes.object_cache import WatchedObjects
from activities.kubernetes.resources import EC2NODECLASS, CustomResource
from activities.planning.cluster_state import ClusterState
from activities.planning.cluster_state import read as read_cluster_state
from scheduling.inputs import Document


def read(kube: Kube, nodeclass_resource: CustomResource = EC2NODECLASS) -> list[Document]:
    return read_state(kube, nodeclass_resource).documents


def read_state(
    kube: Kube,
    nodeclass_resource: CustomResource = EC2NODECLASS,
    watched: WatchedObjects | None = None,
    *,
    managed_only: bool = False,
) -> ClusterState:
    """The cluster state (NodePools and the provider's node classes parsed, for the
    catalog) whose ``documents`` are what the disruption engine reads; with ``watched``,
    pods, Nodes and NodeClaims from the watches while each is synced."""
    state = read_cluster_state(
        kube, watched=watched, nodeclass_resource=nodeclass_resource, managed_only=managed_only
    )
    docs = state.documents
    if watched is not None and watched.nodeclaims.synced:
        claims = watched.nodeclaims.items()
    else:
        claims, _ = nodeclaims.list_(kube)
    for claim in claims:
        if claim["metadata"].get("deletionTimestamp"):
            docs.append(Document(claim, f"NodeClaim {claim['metadata']['name']}"))
    for pdb in raw.list_all(kube.policy.list_pod_disruption_budget_for_all_namespaces):
        body = {**pdb, "kind": "PodDisruptionBudget", "apiVersion": "policy/v1"}
        meta = body.get("metadata") or {}
        docs.append(
            Document(body, f"PodDisruptionBudget {meta.get('namespace')}/{meta.get('name')}")
        )
    return state


def nodeclass_documents(
    nodeclasses: Mapping[str, Mapping[str, Any]], resource: CustomResource = EC2NODECLASS
) -> list[Document]:
    """The node class bodies (by name; EC2NodeClasses unless ``resource`` names the
    AKSNodeClass) as the round's documents, kind and apiVersion set (a listed object may
    lack them)."""
    return [
        Document(
            {"apiVersion": resource.api_version, **body, "kind": resource.kind},
            f"{resource.kind} {name}",
        )
        for name, body in nodeclasses.items()
    ]
