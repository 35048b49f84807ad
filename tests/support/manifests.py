"""Builders for the manifests ``joinery plan`` reads: NodePools, Pods, Nodes, NodeClaims,
DaemonSets, volumes.

Every builder returns a plain decoded manifest (what ``yaml.safe_load`` would give), so the
scenarios go through the same parsing as ``joinery plan``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from tests.support.catalogs import ZA
from tests.support.labels import ARCH, CAPACITY_TYPE, HOSTNAME, INSTANCE_TYPE, NODEPOOL, ZONE

Manifest = dict[str, Any]

# ------------------------------------------------------------------------------ manifests


def req(key: str, operator: str, *values: str, min_values: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        out["values"] = list(values)
    if min_values is not None:
        out["minValues"] = min_values
    return out


def taint(key: str, effect: str = "NoSchedule", value: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "effect": effect}
    if value is not None:
        out["value"] = value
    return out


def toleration(
    key: str = "", operator: str = "Equal", value: str | None = None, effect: str | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {"operator": operator}
    if key:
        out["key"] = key
    if value is not None:
        out["value"] = value
    if effect is not None:
        out["effect"] = effect
    return out


def node_class_ref(name: str = "default") -> dict[str, str]:
    """A NodePool's or NodeClaim's reference to the EC2NodeClass ``name``."""
    return {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": name}


def nodepool_body(
    name: str = "default",
    *,
    node_class: str = "default",
    requirements: Sequence[Mapping[str, Any]] | None = None,
    labels: Mapping[str, str] | None = None,
    template: Mapping[str, Any] | None = None,
    **spec: Any,
) -> Manifest:
    """A NodePool: its template refers to ``node_class`` with ``requirements`` (none: the key
    is left out), ``labels`` and further template ``spec`` fields (``template``); ``spec``
    holds the pool's own fields (weight, limits, disruption)."""
    template_spec: dict[str, Any] = {"nodeClassRef": node_class_ref(node_class)}
    if requirements is not None:
        template_spec["requirements"] = [dict(r) for r in requirements]
    template_spec.update(template or {})
    body: dict[str, Any] = {"spec": template_spec}
    if labels is not None:
        body["metadata"] = {"labels": dict(labels)}
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": name},
        "spec": {"template": body, **spec},
    }


def nodepool(
    name: str = "default",
    requirements: Sequence[Mapping[str, Any]] = (),
    *,
    taints: Sequence[Mapping[str, Any]] = (),
    startup_taints: Sequence[Mapping[str, Any]] = (),
    weight: int | None = None,
    limits: Mapping[str, str | int] | None = None,
    labels: Mapping[str, str] | None = None,
) -> Manifest:
    """A NodePool as the scheduling scenarios write it (its EC2NodeClass is "x")."""
    spec: dict[str, Any] = {}
    if weight is not None:
        spec["weight"] = weight
    if limits is not None:
        spec["limits"] = dict(limits)
    return nodepool_body(
        name,
        node_class="x",
        requirements=requirements,
        labels=labels or {},
        template={
            "taints": [dict(t) for t in taints],
            "startupTaints": [dict(t) for t in startup_taints],
        },
        **spec,
    )


def container(
    cpu: str | None = "100m",
    memory: str | None = "128Mi",
    *,
    limits: Mapping[str, str] | None = None,
    extra: Mapping[str, str] | None = None,
    host_port: int | None = None,
    name: str = "app",
) -> dict[str, Any]:
    requests: dict[str, str] = {}
    if cpu is not None:
        requests["cpu"] = cpu
    if memory is not None:
        requests["memory"] = memory
    requests.update(extra or {})
    resources: dict[str, Any] = {}
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = dict(limits)
    out: dict[str, Any] = {"name": name, "image": "app", "resources": resources}
    if host_port is not None:
        out["ports"] = [{"containerPort": host_port, "hostPort": host_port}]
    return out


def pod(
    name: str,
    cpu: str | None = "100m",
    memory: str | None = "128Mi",
    *,
    namespace: str = "default",
    labels: Mapping[str, str] | None = None,
    node_name: str | None = None,
    node_selector: Mapping[str, str] | None = None,
    tolerations: Sequence[Mapping[str, Any]] = (),
    affinity: Mapping[str, Any] | None = None,
    spread: Sequence[Mapping[str, Any]] = (),
    host_port: int | None = None,
    pvcs: Sequence[str] = (),
    extra: Mapping[str, str] | None = None,
    owner_kind: str | None = None,
    containers: Sequence[Mapping[str, Any]] | None = None,
    **spec: Any,
) -> Manifest:
    """A Pod; pending unless ``node_name`` is set. Extra keyword arguments go into ``spec``."""
    body: dict[str, Any] = {
        "containers": [dict(c) for c in containers]
        if containers is not None
        else [container(cpu, memory, extra=extra, host_port=host_port)],
    }
    if node_name:
        body["nodeName"] = node_name
    if node_selector:
        body["nodeSelector"] = dict(node_selector)
    if tolerations:
        body["tolerations"] = [dict(t) for t in tolerations]
    if affinity:
        body["affinity"] = copy.deepcopy(dict(affinity))
    if spread:
        body["topologySpreadConstraints"] = [dict(s) for s in spread]
    if pvcs:
        body["volumes"] = [
            {"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(pvcs)
        ]
    body.update(spec)
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": dict(labels or {})}
    if owner_kind:
        meta["ownerReferences"] = [
            {"kind": owner_kind, "name": f"{name}-owner", "controller": True, "apiVersion": "x"}
        ]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": body}


def spread(
    key: str = ZONE,
    labels: Mapping[str, str] | None = None,
    *,
    max_skew: int = 1,
    when: str = "DoNotSchedule",
    **extra: Any,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "maxSkew": max_skew,
        "topologyKey": key,
        "whenUnsatisfiable": when,
        "labelSelector": {"matchLabels": dict(labels or {"app": "web"})},
    }
    out.update(extra)
    return out


def pod_term(key: str, labels: Mapping[str, str]) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": dict(labels)}, "topologyKey": key}


def pod_affinity(key: str, labels: Mapping[str, str], *, anti: bool = False) -> dict[str, Any]:
    kind = "podAntiAffinity" if anti else "podAffinity"
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": [pod_term(key, labels)]}}


def preferred_pod_affinity(
    key: str, labels: Mapping[str, str], *, anti: bool = False, weight: int = 100
) -> dict[str, Any]:
    kind = "podAntiAffinity" if anti else "podAffinity"
    return {
        kind: {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": weight, "podAffinityTerm": pod_term(key, labels)}
            ]
        }
    }


def node_affinity(*terms: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Required node affinity; each argument is one term (a list of match expressions)."""
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [dict(e) for e in t]} for t in terms]
            }
        }
    }


def preferred_node_affinity(*prefs: tuple[int, Sequence[Mapping[str, Any]]]) -> dict[str, Any]:
    return {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": w, "preference": {"matchExpressions": [dict(e) for e in exprs]}}
                for w, exprs in prefs
            ]
        }
    }


def node(
    name: str,
    cpu: str = "4",
    memory: str = "16Gi",
    pods: str = "110",
    *,
    zone: str = ZA,
    arch: str = "amd64",
    instance_type: str = "m5.xlarge",
    capacity_type: str = "on-demand",
    nodepool: str | None = None,
    labels: Mapping[str, str] | None = None,
    taints: Sequence[Mapping[str, Any]] = (),
    deleting: bool = False,
    unschedulable: bool = False,
) -> Manifest:
    lbls = {
        HOSTNAME: name,
        ZONE: zone,
        ARCH: arch,
        "kubernetes.io/os": "linux",
        INSTANCE_TYPE: instance_type,
        CAPACITY_TYPE: capacity_type,
    }
    if nodepool:
        lbls[NODEPOOL] = nodepool
    lbls.update(labels or {})
    meta: dict[str, Any] = {"name": name, "labels": lbls}
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    spec: dict[str, Any] = {"providerID": f"aws:///{zone}/i-{name}"}
    if taints:
        spec["taints"] = [dict(t) for t in taints]
    if unschedulable:
        spec["unschedulable"] = True
    res = {"cpu": cpu, "memory": memory, "pods": pods}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": meta,
        "spec": spec,
        "status": {"capacity": dict(res), "allocatable": dict(res)},
    }


def nodeclaim(
    name: str,
    *,
    nodepool: str = "default",
    instance_type: str = "m5.xlarge",
    zone: str = ZA,
    capacity_type: str = "on-demand",
    allocatable: Mapping[str, str] | None = None,
) -> Manifest:
    """An in-flight NodeClaim (launched, no Node yet)."""
    status: dict[str, Any] = {}
    if allocatable:
        status = {"capacity": dict(allocatable), "allocatable": dict(allocatable)}
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodeClaim",
        "metadata": {"name": name, "labels": {NODEPOOL: nodepool}},
        "spec": {
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "x"},
            "requirements": [
                req(INSTANCE_TYPE, "In", instance_type),
                req(ZONE, "In", zone),
                req(CAPACITY_TYPE, "In", capacity_type),
            ],
        },
        "status": status,
    }


def daemonset(
    name: str,
    cpu: str = "100m",
    memory: str = "128Mi",
    *,
    tolerations: Sequence[Mapping[str, Any]] = (),
    node_selector: Mapping[str, str] | None = None,
    namespace: str = "kube-system",
) -> Manifest:
    tmpl_spec: dict[str, Any] = {"containers": [container(cpu, memory)]}
    if tolerations:
        tmpl_spec["tolerations"] = [dict(t) for t in tolerations]
    if node_selector:
        tmpl_spec["nodeSelector"] = dict(node_selector)
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "selector": {"matchLabels": {"ds": name}},
            "template": {"metadata": {"labels": {"ds": name}}, "spec": tmpl_spec},
        },
    }


def pvc(
    name: str,
    *,
    volume_name: str | None = None,
    storage_class: str | None = None,
    namespace: str = "default",
) -> Manifest:
    spec: dict[str, Any] = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "10Gi"}},
    }
    if volume_name:
        spec["volumeName"] = volume_name
    if storage_class:
        spec["storageClassName"] = storage_class
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def pv(name: str, zone: str, *, key: str = ZONE) -> Manifest:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": {
            "capacity": {"storage": "10Gi"},
            "nodeAffinity": {
                "required": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": key, "operator": "In", "values": [zone]}]}
                    ]
                }
            },
        },
    }


def storage_class(name: str, zones: Sequence[str]) -> Manifest:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": "ebs.csi.aws.com",
        "volumeBindingMode": "WaitForFirstConsumer",
        "allowedTopologies": [{"matchLabelExpressions": [{"key": ZONE, "values": list(zones)}]}],
    }
