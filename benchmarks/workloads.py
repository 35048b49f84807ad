"""Synthetic workloads for the scheduling benchmark and tests (seeded, deterministic).

``diverse_pods`` mirrors Karpenter's own scheduling benchmark: five equal groups (plain,
zonal spread, hostname spread, zonal self-affinity, hostname anti-affinity) with random
cpu/memory requests, over ``fake_instance_types`` (``fake-it-i``: i+1 cpu, 2(i+1) GiB,
10(i+1) pods, price proportional to size).
"""

from __future__ import annotations

import random
from typing import Any

from models.instancetype import InstanceType, Offering
from models.nodepool import NodePool
from models.quantity import parse_quantity
from models.requirements import Requirement

ZONES = ("test-zone-1", "test-zone-2", "test-zone-3")
CPU_CHOICES = (100, 250, 500, 1000, 1500)
MEMORY_CHOICES = (100, 256, 512, 1024, 2048, 4096)


def fake_instance_types(count: int = 400) -> list[InstanceType]:
    out = []
    for i in range(count):
        n = i + 1
        price = 0.05 * n
        offerings = [
            Offering(z, ct, price * (0.7 if ct == "spot" else 1.0))
            for z in ZONES
            for ct in ("spot", "on-demand")
        ]
        out.append(
            InstanceType.build(
                f"fake-it-{i}",
                {
                    "cpu": parse_quantity(n),
                    "memory": parse_quantity(f"{2 * n}Gi"),
                    "pods": parse_quantity(10 * n),
                },
                offerings,
                requirements=[Requirement.create("size", "In", [str(n)])],
            )
        )
    return out


def nodepool(name: str = "default", **spec: Any) -> NodePool:
    return NodePool.model_validate(nodepool_manifest(name, **spec))


def nodepool_manifest(name: str = "default", **spec: Any) -> dict[str, Any]:
    """The NodePool document the benchmarks use (as written in a manifest file)."""
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": name},
        "spec": {
            "template": {
                "spec": {
                    "nodeClassRef": {
                        "group": "karpenter.k8s.aws",
                        "kind": "EC2NodeClass",
                        "name": "default",
                    },
                    "requirements": spec.pop("requirements", []),
                    "taints": spec.pop("taints", []),
                }
            },
            **spec,
        },
    }


def pod(
    name: str,
    cpu: str = "100m",
    memory: str = "128Mi",
    labels: dict[str, str] | None = None,
    namespace: str = "default",
    **spec: Any,
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
        "spec": {
            "containers": [
                {"name": "app", "resources": {"requests": {"cpu": cpu, "memory": memory}}}
            ],
            **spec,
        },
    }


def _spread(key: str, labels: dict[str, str]) -> dict[str, Any]:
    return {
        "maxSkew": 1,
        "topologyKey": key,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": labels},
    }


def _affinity(key: str, labels: dict[str, str]) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": labels}, "topologyKey": key}


def _required(kind: str, key: str, labels: dict[str, str]) -> dict[str, Any]:
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": [_affinity(key, labels)]}}


ZONE_KEY = "topology.kubernetes.io/zone"
HOST_KEY = "kubernetes.io/hostname"

# Karpenter's five benchmark groups: (app label, extra pod spec for that label).
_GROUPS: list[tuple[str, Any]] = [
    ("plain", lambda lbl: {}),
    ("zonal-spread", lambda lbl: {"topologySpreadConstraints": [_spread(ZONE_KEY, lbl)]}),
    ("host-spread", lambda lbl: {"topologySpreadConstraints": [_spread(HOST_KEY, lbl)]}),
    ("zonal-affinity", lambda lbl: {"affinity": _required("podAffinity", ZONE_KEY, lbl)}),
    ("host-anti", lambda lbl: {"affinity": _required("podAntiAffinity", HOST_KEY, lbl)}),
]


def diverse_pods(count: int, seed: int = 42, plain_only: bool = False) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    groups = _GROUPS[:1] if plain_only else _GROUPS
    pods = []
    for g, (app, extra) in enumerate(groups):
        size = count // len(groups)
        n = size if g < len(groups) - 1 else count - size * (len(groups) - 1)
        labels = {"app": app}
        for i in range(n):
            cpu = f"{rng.choice(CPU_CHOICES)}m"
            mem = f"{rng.choice(MEMORY_CHOICES)}Mi"
            pods.append(pod(f"g{g}-{i}", cpu, mem, dict(labels), **extra(labels)))
    return pods


def deployments(seed: int = 11, count: int = 50) -> list[dict[str, Any]]:
    """Realistic Deployments: 10-400 replicas each, with the constraint mixes people use."""
    rng = random.Random(seed)
    pods: list[dict[str, Any]] = []
    kinds = [
        "plain",
        "zonal-spread",
        "host-anti",
        "arm",
        "spot",
        "preferred-anti",
        "memory",
        "zonal-spread-soft",
    ]
    for d in range(count):
        kind = kinds[d % len(kinds)]
        replicas = (
            rng.randint(10, 60) if kind in ("host-anti", "preferred-anti") else rng.randint(10, 400)
        )
        cpu = rng.choice(("100m", "250m", "500m", "1", "2"))
        mem = rng.choice(("128Mi", "256Mi", "512Mi", "1Gi", "2Gi"))
        if kind == "memory":
            mem = rng.choice(("4Gi", "8Gi"))
        lbl = {"app": f"deploy-{d}"}
        spec: dict[str, Any] = {}
        if kind == "zonal-spread":
            spec["topologySpreadConstraints"] = [_spread("topology.kubernetes.io/zone", lbl)]
        elif kind == "zonal-spread-soft":
            s = _spread("topology.kubernetes.io/zone", lbl)
            s["whenUnsatisfiable"] = "ScheduleAnyway"
            spec["topologySpreadConstraints"] = [s]
        elif kind == "host-anti":
            spec["affinity"] = _required("podAntiAffinity", HOST_KEY, lbl)
        elif kind == "preferred-anti":
            spec["affinity"] = {
                "podAntiAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 100, "podAffinityTerm": _affinity("kubernetes.io/hostname", lbl)}
                    ]
                }
            }
        elif kind == "arm":
            spec["nodeSelector"] = {"kubernetes.io/arch": "arm64"}
        elif kind == "spot":
            spec["nodeSelector"] = {"karpenter.sh/capacity-type": "spot"}
        for i in range(replicas):
            p = pod(f"deploy-{d}-{i}", cpu, mem, dict(lbl), **spec)
            p["metadata"]["ownerReferences"] = [
                {"kind": "ReplicaSet", "name": f"deploy-{d}-rs", "controller": True}
            ]
            pods.append(p)
    return pods
