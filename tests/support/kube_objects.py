"""Objects on the control plane the activity, workflow and production tests share: the default
EC2NodeClass, NodePools of m5s, NodeClaims, Pods, namespaces, PDBs, and a kubelet dying."""

from __future__ import annotations

import contextlib
from typing import Any, TypeVar

from activities.kubernetes import custom_objects, raw
from activities.kubernetes.client import Kube
from activities.kubernetes.errors import AlreadyExists
from activities.kubernetes.resources import EC2NODECLASS, NODECLAIM, NODEPOOL
from tests.support.manifests import nodepool_body
from tests.support.waiting import eventually

T = TypeVar("T")
CLUSTER = "wf-cluster"
M5 = [
    {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m5"]},
    {"key": "karpenter.k8s.aws/instance-size", "operator": "In", "values": ["large", "xlarge"]},
    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
]


def ensure_nodeclass(admin: Kube, name: str = "default") -> None:
    body = {
        "metadata": {"name": name},
        "spec": {
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": CLUSTER}}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": CLUSTER}}],
            "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "role": "KarpenterNodeRole",
        },
    }
    with contextlib.suppress(AlreadyExists):
        custom_objects.create(admin, EC2NODECLASS, body)


def ensure_nodepool(
    admin: Kube, name: str, *, disruption: dict[str, Any] | None = None, **template_spec: Any
) -> None:
    """A NodePool of m5s on the default EC2NodeClass, unless one of that name exists."""
    spec: dict[str, Any] = {} if disruption is None else {"disruption": disruption}
    body = nodepool_body(name, requirements=M5, template=template_spec, **spec)
    with contextlib.suppress(AlreadyExists):
        custom_objects.create(admin, NODEPOOL, body)


def nodeclaim(name: str, pool: str, **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"karpenter.sh/nodepool": pool}},
        "spec": {
            "nodeClassRef": {
                "group": "karpenter.k8s.aws",
                "kind": "EC2NodeClass",
                "name": "default",
            },
            "requirements": M5,
            "resources": {"requests": {"cpu": "1", "memory": "1Gi", "pods": "2"}},
            **spec,
        },
    }


def create_claim(admin: Kube, name: str, pool: str, **spec: Any) -> dict[str, Any]:
    return custom_objects.create(admin, NODECLAIM, nodeclaim(name, pool, **spec))


def pod(name: str, namespace: str, *, node: str | None = None, **extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "app",
                "image": "registry.k8s.io/pause:3.10",
                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
            }
        ],
        "terminationGracePeriodSeconds": 0,
        **extra.pop("spec", {}),
    }
    if node:
        spec["nodeName"] = node
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": {"app": "web"}}
    meta.update(extra.pop("metadata", {}))
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def create_pod(admin: Kube, body: dict[str, Any]) -> dict[str, Any]:
    return raw.call(admin.core.create_namespaced_pod, body["metadata"]["namespace"], body)


def create_namespace(admin: Kube, name: str) -> None:
    raw.call(admin.core.create_namespace, {"metadata": {"name": name}})

    def has_sa() -> bool:
        raw.call(admin.core.read_namespaced_service_account, "default", name)
        return True

    eventually(has_sa, timeout=30, what="default service account")


def create_pdb(admin: Kube, namespace: str, name: str, min_available: int = 1) -> None:
    body = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"minAvailable": min_available, "selector": {"matchLabels": {"app": "web"}}},
    }
    raw.call(admin.policy.create_namespaced_pod_disruption_budget, namespace, body)


def condition(obj: dict[str, Any], type_: str) -> dict[str, Any] | None:
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == type_:
            return dict(c)
    return None


def kill_node(admin: Kube, name: str) -> None:
    """The kubelet on ``name`` dies: kwok stops playing it and the Node turns NotReady (what
    the node-lifecycle controller reports once the heartbeats stop, without the wait)."""
    raw.call(
        admin.core.patch_node, name, {"metadata": {"annotations": {"kwok.x-k8s.io/node": None}}}
    )
    ready = {
        "type": "Ready",
        "status": "False",
        "reason": "KubeletStopped",
        "message": "the instance is gone",
    }
    raw.call(admin.core.patch_node_status, name, {"status": {"conditions": [ready]}})
