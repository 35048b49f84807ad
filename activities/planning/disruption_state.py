"""The cluster as a disruption round reads it: what provisioning reads, plus
PodDisruptionBudgets and the NodeClaims already being deleted (a node whose claim is going
away uses up its pool's budget). Plain dicts wrapped as ``Document``s, read-only."""

from __future__ import annotations

from activities.kubernetes import nodeclaims, raw
from activities.kubernetes.client import Kube
from activities.planning.cluster_state import read as read_cluster_state
from scheduling.inputs import Document


def read(kube: Kube) -> list[Document]:
    docs = list(read_cluster_state(kube).documents)
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
    return docs
