"""Evicting pods through the ``pods/eviction`` subresource, which honours PodDisruptionBudgets.

A refused eviction says which budgets protect the pod (``EvictionBlocked.pdbs``); the drain
retries it with backoff, as ``kubectl drain`` does, until the budget allows or the node's
terminationGracePeriod runs out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubernetes.client.exceptions import ApiException

from activities.kubernetes import raw, selectors
from activities.kubernetes.client import Kube
from activities.kubernetes.errors import EvictionBlocked, NotFound, body_text, translate
from activities.kubernetes.raw import Obj


def blocking_budgets(kube: Kube, pod: Mapping[str, Any]) -> list[str]:
    """``namespace/name`` of every PodDisruptionBudget whose selector matches ``pod``."""
    meta = pod["metadata"]
    namespace = meta["namespace"]
    labels = meta.get("labels") or {}
    budgets = raw.list_all(kube.policy.list_namespaced_pod_disruption_budget, namespace)
    return sorted(
        f"{namespace}/{b['metadata']['name']}"
        for b in budgets
        if selectors.matches((b.get("spec") or {}).get("selector"), labels)
    )


def evict(kube: Kube, pod: Mapping[str, Any], *, grace_period_seconds: int | None = None) -> bool:
    """Ask the API server to evict ``pod``; False when it is already gone.

    Raises ``EvictionBlocked`` when a PodDisruptionBudget refuses (429), or when more than one
    budget matches the pod (which the API server cannot evaluate and answers with 500).
    """
    meta = pod["metadata"]
    name, namespace = meta["name"], meta["namespace"]
    body: Obj = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": name, "namespace": namespace},
    }
    delete_options: Obj = {}
    if grace_period_seconds is not None:
        delete_options["gracePeriodSeconds"] = grace_period_seconds
    if meta.get("uid"):
        delete_options["preconditions"] = {"uid": meta["uid"]}
    if delete_options:
        body["deleteOptions"] = delete_options
    try:
        response = kube.core.create_namespaced_pod_eviction(
            name, namespace, body, _preload_content=False
        )
        response.read()  # drain before the connection goes back to the pool
        response.release_conn()
    except ApiException as exc:
        error = translate(exc)
        if isinstance(error, NotFound):
            return False
        many = exc.status == 500 and "more than one PodDisruptionBudget" in body_text(exc)
        if exc.status == 429 or many:
            raise EvictionBlocked(
                error.message,
                pod=f"{namespace}/{name}",
                pdbs=blocking_budgets(kube, pod),
                status=exc.status,
                reason=error.reason,
            ) from exc
        raise error from exc
    except Exception as exc:
        raise translate(exc) from exc
    return True
