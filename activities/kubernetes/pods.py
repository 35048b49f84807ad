"""Pods: which run on a node, and deleting them when eviction is not the tool."""

from __future__ import annotations

from typing import Any

from activities.kubernetes import raw
from activities.kubernetes.client import Kube
from activities.kubernetes.errors import NotFound
from activities.kubernetes.raw import Obj


def get(kube: Kube, namespace: str, name: str) -> Obj:
    return raw.call(kube.core.read_namespaced_pod, name, namespace)


def on_node(kube: Kube, node_name: str) -> list[Obj]:
    """Every pod bound to ``node_name``, in all namespaces (server-side field selector)."""
    return raw.list_all(
        kube.core.list_pod_for_all_namespaces, field_selector=f"spec.nodeName={node_name}"
    )


def is_terminal(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def is_daemonset_pod(pod: Obj) -> bool:
    owners = (pod.get("metadata") or {}).get("ownerReferences") or []
    return any(o.get("kind") == "DaemonSet" and o.get("controller") for o in owners)


def is_mirror_pod(pod: Obj) -> bool:
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    return "kubernetes.io/config.mirror" in annotations


def delete(
    kube: Kube,
    namespace: str,
    name: str,
    *,
    grace_period_seconds: int | None = None,
    uid: str | None = None,
) -> bool:
    """Delete a pod (bypassing PDBs); False when it was already gone.

    With ``uid`` only that incarnation is deleted, so a retried call never kills a
    same-named replacement (StatefulSet pods keep their names).
    """
    body: dict[str, Any] = {}
    if grace_period_seconds is not None:
        body["gracePeriodSeconds"] = grace_period_seconds
    if uid:
        body["preconditions"] = {"uid": uid}
    try:
        raw.call(kube.core.delete_namespaced_pod, name, namespace, body=body)
    except NotFound:
        return False
    return True
