"""Builders for manifests and a small catalog, and ``plan()``: manifests in, DESIGN.md JSON out.

Every builder returns a plain decoded manifest (what ``yaml.safe_load`` would give), so the
scenarios go through the same parsing as ``joinery plan``. ``plan`` also checks the output
rules that hold for every plan (each pending pod exactly once, cost arithmetic), so every
scenario tests them too.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from models.catalog import load_catalog
from scheduling.inputs import Document, build_problem
from scheduling.lowerbound import lower_bound
from scheduling.report import plan_to_dict
from scheduling.solver import Solver

Manifest = dict[str, Any]

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
ARCH = "kubernetes.io/arch"
CAPACITY_TYPE = "karpenter.sh/capacity-type"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
NODEPOOL = "karpenter.sh/nodepool"
SIZE = "size"  # a custom catalog label: small / medium / large / xlarge
GENERATION = "example.com/generation"  # a custom integer catalog label
FAMILY = "karpenter.k8s.aws/instance-family"
GPU = "nvidia.com/gpu"

ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")
ZA, ZB, ZC = ZONES
# Zone a is the cheapest, then b, then c (by a tenth of a cent), so "the cheapest zone" is
# always well defined.
ZONE_EXTRA = {ZA: 0.0, ZB: 0.001, ZC: 0.002}

# name: (cpu, memory, pods, arch, size, family, generation, on-demand, spot, zones, extra capacity)
TYPES: dict[str, tuple[Any, ...]] = {
    "c5.large": ("2", "4Gi", "29", "amd64", "small", "c5", "5", 0.085, 0.030, ZONES, {}),
    "m5.large": ("2", "8Gi", "29", "amd64", "small", "m5", "5", 0.096, 0.036, ZONES, {}),
    "c6i.xlarge": ("4", "8Gi", "58", "amd64", "medium", "c6i", "6", 0.170, 0.060, ZONES, {}),
    "m5.xlarge": ("4", "16Gi", "58", "amd64", "medium", "m5", "5", 0.192, 0.070, ZONES, {}),
    "m5.2xlarge": ("8", "32Gi", "58", "amd64", "large", "m5", "5", 0.384, 0.140, ZONES, {}),
    "r5.2xlarge": ("8", "64Gi", "58", "amd64", "large", "r5", "5", 0.504, 0.180, ZONES, {}),
    "m7i.4xlarge": ("16", "64Gi", "110", "amd64", "xlarge", "m7i", "7", 0.806, 0.300, ZONES, {}),
    "m6g.large": ("2", "8Gi", "29", "arm64", "small", "m6g", "6", 0.077, 0.029, ZONES, {}),
    "m6g.xlarge": ("4", "16Gi", "58", "arm64", "medium", "m6g", "6", 0.154, 0.055, ZONES, {}),
    "g4dn.xlarge": (
        "4",
        "16Gi",
        "29",
        "amd64",
        "medium",
        "g4dn",
        "4",
        0.526,
        0.200,
        (ZA, ZB),
        {GPU: "1"},
    ),
}


def od_price(name: str, zone: str = ZA) -> float:
    return round(TYPES[name][7] + ZONE_EXTRA[zone], 6)


def spot_price(name: str, zone: str = ZA) -> float:
    return round(TYPES[name][8] + ZONE_EXTRA[zone], 6)


def catalog(
    names: Iterable[str] | None = None,
    unavailable: Iterable[tuple[str, str, str]] = (),
    overhead: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The test catalog in DESIGN.md's format (optionally a subset, with unavailable offerings
    given as (type, zone, capacityType) and one overhead for every type)."""
    off = set(unavailable)
    entries = []
    for name in names if names is not None else TYPES:
        cpu, mem, pods, arch, size, family, gen, od, spot, zones, extra = TYPES[name]
        offerings = []
        for z in zones:
            for ct, base in (("on-demand", od), ("spot", spot)):
                o: dict[str, Any] = {
                    "zone": z,
                    "capacityType": ct,
                    "price": round(base + ZONE_EXTRA[z], 6),
                }
                if (name, z, ct) in off:
                    o["available"] = False
                offerings.append(o)
        entry: dict[str, Any] = {
            "name": name,
            "capacity": {"cpu": cpu, "memory": mem, "pods": pods, **extra},
            "requirements": [
                {"key": ARCH, "operator": "In", "values": [arch]},
                {"key": SIZE, "operator": "In", "values": [size]},
                {"key": FAMILY, "operator": "In", "values": [family]},
                {"key": GENERATION, "operator": "In", "values": [gen]},
            ],
            "offerings": offerings,
        }
        if overhead:
            entry["overhead"] = dict(overhead)
        entries.append(entry)
    return {"instanceTypes": entries}


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
    spec: dict[str, Any] = {
        "template": {
            "metadata": {"labels": dict(labels or {})},
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "x"},
                "requirements": [dict(r) for r in requirements],
                "taints": [dict(t) for t in taints],
                "startupTaints": [dict(t) for t in startup_taints],
            },
        }
    }
    if weight is not None:
        spec["weight"] = weight
    if limits is not None:
        spec["limits"] = dict(limits)
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": name},
        "spec": spec,
    }


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


# ---------------------------------------------------------------------------------- plan


def _pending_keys(docs: Sequence[Mapping[str, Any]]) -> list[str]:
    """Pods the output must account for: unbound ones, and non-DaemonSet pods of deleting nodes."""
    deleting = {
        d["metadata"]["name"]
        for d in docs
        if d.get("kind") == "Node" and d["metadata"].get("deletionTimestamp")
    }
    out = []
    for d in docs:
        if d.get("kind") != "Pod":
            continue
        meta, spec = d["metadata"], d.get("spec") or {}
        if (d.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        owners = [o.get("kind") for o in meta.get("ownerReferences") or []]
        bound = spec.get("nodeName")
        if bound and not (bound in deleting and "DaemonSet" not in owners):
            continue
        out.append(f"{meta.get('namespace') or 'default'}/{meta['name']}")
    return out


def check_output_rules(docs: Sequence[Mapping[str, Any]], out: Mapping[str, Any]) -> None:
    """The rules DESIGN.md states for every plan."""
    placed: list[str] = []
    for c in out["nodeClaims"]:
        placed += c["pods"]
    for n in out["existingNodes"]:
        placed += n["pods"]
    placed += [u["pod"] for u in out["unschedulable"]]
    assert sorted(placed) == sorted(_pending_keys(docs)), "every pending pod exactly once"
    total = round(sum(c["price"] for c in out["nodeClaims"]), 6)
    assert abs(out["cost"]["perHour"] - total) < 1e-6
    assert out["cost"]["lowerBound"] <= out["cost"]["perHour"] + 1e-9
    assert out["cost"]["lowerBound"] >= 0
    for c in out["nodeClaims"]:
        assert c["instanceTypes"], "a claim names at least one instance type"
        assert c["zones"] and c["capacityTypes"]
        assert int(c["requests"]["pods"]) >= len(c["pods"])


def plan(
    docs: Sequence[Mapping[str, Any]],
    catalog_doc: Mapping[str, Any] | None = None,
    pool_catalogs: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """Run the solver on the manifests; returns the `joinery plan -o json` object.
    ``pool_catalogs`` gives pools their own catalogs (pool name -> catalog document; pools
    given the same document share one list, as pools whose NodeClasses see alike do)."""
    loaded: dict[int, Any] = {}
    for doc in (pool_catalogs or {}).values():
        if id(doc) not in loaded:
            loaded[id(doc)] = load_catalog(copy.deepcopy(dict(doc)))
    parsed = build_problem(
        [Document(copy.deepcopy(dict(d)), f"doc {i}") for i, d in enumerate(docs)],
        load_catalog(copy.deepcopy(dict(catalog_doc if catalog_doc is not None else catalog()))),
        {pool: loaded[id(doc)] for pool, doc in (pool_catalogs or {}).items()},
    )
    solver = Solver(parsed.problem)
    result = solver.solve()
    out = plan_to_dict(result, lower_bound(solver, result.scheduled))
    check_output_rules(docs, out)
    return out


# ----------------------------------------------------------------------- reading output


def where(out: Mapping[str, Any]) -> dict[str, str]:
    """Pod key → ``claim<i>`` (index into nodeClaims), ``node:<name>`` or ``unschedulable``."""
    loc: dict[str, str] = {}
    for i, c in enumerate(out["nodeClaims"]):
        for p in c["pods"]:
            loc[p] = f"claim{i}"
    for n in out["existingNodes"]:
        for p in n["pods"]:
            loc[p] = f"node:{n['name']}"
    for u in out["unschedulable"]:
        loc[u["pod"]] = "unschedulable"
    return loc


def claim_of(out: Mapping[str, Any], pod_key: str) -> dict[str, Any]:
    for c in out["nodeClaims"]:
        if pod_key in c["pods"]:
            return dict(c)
    raise AssertionError(f"{pod_key} is not on a new claim: {where(out).get(pod_key)}")


def reason(out: Mapping[str, Any], pod_key: str) -> str:
    for u in out["unschedulable"]:
        if u["pod"] == pod_key:
            return str(u["reason"])
    raise AssertionError(f"{pod_key} is not unschedulable: {where(out).get(pod_key)}")


def unschedulable(out: Mapping[str, Any]) -> list[str]:
    return [u["pod"] for u in out["unschedulable"]]


def requirement(claim: Mapping[str, Any], key: str) -> dict[str, Any] | None:
    for r in claim["requirements"]:
        if r["key"] == key:
            return dict(r)
    return None


def types_with(**labels: str) -> list[str]:
    """Catalog type names whose custom labels match (arch=..., size=..., family=...)."""
    idx = {"arch": 3, "size": 4, "family": 5, "generation": 6}
    return [n for n, t in TYPES.items() if all(t[idx[k]] == v for k, v in labels.items())]
