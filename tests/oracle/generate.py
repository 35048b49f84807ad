"""Random clusters as the manifests ``joinery plan`` reads, for the oracle's property tests.

A drawn ``Scenario`` holds a catalog, NodePools (requirements, taints, labels, budgets),
managed and unmanaged Nodes, Namespaces, PersistentVolumes, PDBs, DaemonSets and pods from a
few "apps" sharing one spec each, over every constraint the oracle knows. Bound pods are
placed one by one where the oracle admits them, so the starting cluster is one the
kube-scheduler could have built; a pod admitted nowhere stays pending.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from tests.oracle.checker import admits
from tests.oracle.cluster import Cluster, with_node
from tests.oracle.objects import HOSTNAME, ZONE, node, pod, pod_term, spread

ZONES = ("zone-a", "zone-b", "zone-c")
NODEPOOL = "karpenter.sh/nodepool"
CAPACITY_TYPE = "karpenter.sh/capacity-type"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
INITIALIZED = "karpenter.sh/initialized"
GEN = "example.com/gen"
FAMILY = "example.com/family"
GPU = "example.com/gpu"
TEAM = "example.com/team"
DRIVER = "ebs.csi.example.com"
DEDICATED = {"key": "dedicated", "value": "batch", "effect": "NoSchedule"}

# name, cpu, memory GiB, max pods, generation, family, gpus
MENU = (
    ("t1.small", 1, 2, 8, 1, "t", 0),
    ("t1.medium", 2, 4, 16, 1, "t", 0),
    ("m2.large", 2, 8, 29, 2, "m", 0),
    ("m2.xlarge", 4, 16, 58, 2, "m", 0),
    ("m3.2xlarge", 8, 32, 58, 3, "m", 0),
    ("c3.xlarge", 4, 8, 58, 3, "c", 0),
    ("r2.large", 2, 16, 29, 2, "r", 0),
    ("g3.xlarge", 4, 16, 29, 3, "g", 1),
)


@dataclass
class Scenario:
    """One generated input: the manifests, the catalog, and facts the checks need."""

    objects: list[dict[str, Any]]
    catalog: dict[str, Any]
    managed: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)


def _catalog(rnd: random.Random, n_types: int, spot: bool, overhead: bool) -> dict[str, Any]:
    picked = sorted(rnd.sample(range(len(MENU)), n_types))
    types = []
    for i in picked:
        name, cpu, mem, pods, gen, family, gpus = MENU[i]
        base = round(0.02 * cpu + 0.005 * mem + 0.2 * gpus, 4)
        zones = [z for z in ZONES if rnd.random() < 0.8] or [ZONES[i % 3]]
        offerings = []
        for z in zones:
            price = round(base * rnd.choice((1.0, 1.0, 1.05, 1.1)), 5)
            offerings.append({"zone": z, "capacityType": "on-demand", "price": price})
            if spot and rnd.random() < 0.6:
                offerings.append(
                    {
                        "zone": z,
                        "capacityType": "spot",
                        "price": round(price * 0.4, 5),
                        "available": rnd.random() < 0.9,
                    }
                )
        capacity = {"cpu": str(cpu), "memory": f"{mem}Gi", "pods": str(pods)}
        if gpus:
            capacity[GPU] = str(gpus)
        entry: dict[str, Any] = {
            "name": name,
            "capacity": capacity,
            "requirements": [
                {"key": GEN, "operator": "In", "values": [str(gen)]},
                {"key": FAMILY, "operator": "In", "values": [family]},
            ],
            "offerings": offerings,
        }
        if overhead:
            entry["overhead"] = {"cpu": "100m", "memory": "256Mi"}
        types.append(entry)
    return {"instanceTypes": types}


def allocatable(entry: Mapping[str, Any]) -> dict[str, str]:
    """A catalog type's allocatable (capacity minus overhead), as quantities."""
    cap = dict(entry["capacity"])
    over = entry.get("overhead") or {}
    out = dict(cap)
    if "cpu" in over:
        out["cpu"] = f"{int(cap['cpu']) * 1000 - int(over['cpu'].rstrip('m'))}m"
    if "memory" in over:
        mib = int(cap["memory"].rstrip("Gi")) * 1024 - int(over["memory"].rstrip("Mi"))
        out["memory"] = f"{mib}Mi"
    return out


def type_labels(entry: Mapping[str, Any]) -> dict[str, str]:
    out = {"kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux", INSTANCE_TYPE: entry["name"]}
    for r in entry.get("requirements") or []:
        if r["operator"] == "In" and len(r["values"]) == 1:
            out[r["key"]] = r["values"][0]
    return out


def _pool(rnd: random.Random, name: str, tainted: bool, spot: bool) -> dict[str, Any]:
    reqs: list[dict[str, Any]] = [
        {
            "key": CAPACITY_TYPE,
            "operator": "In",
            "values": ["on-demand", "spot"] if spot and rnd.random() < 0.5 else ["on-demand"],
        }
    ]
    if rnd.random() < 0.3:
        reqs.append({"key": ZONE, "operator": "In", "values": sorted(rnd.sample(ZONES, 2))})
    if rnd.random() < 0.3:
        reqs.append({"key": GEN, "operator": "Gt", "values": ["1"]})
    if rnd.random() < 0.2:
        reqs.append({"key": FAMILY, "operator": "NotIn", "values": ["r"]})
    budgets = rnd.choice(
        [
            None,
            [{"nodes": "1"}],
            [{"nodes": "2"}],
            [{"nodes": "50%"}],
            [{"nodes": "100%"}],
            [{"nodes": "3"}, {"nodes": "1", "reasons": ["Drifted"]}],
            [{"nodes": "0", "reasons": ["Underutilized"]}],
        ]
    )
    disruption: dict[str, Any] = {
        "consolidationPolicy": rnd.choice(
            ["WhenEmptyOrUnderutilized", "WhenEmptyOrUnderutilized", "WhenEmpty"]
        ),
        # Sometimes Never: such a pool still rolls its drifted nodes (Karpenter's drift is not
        # gated by consolidateAfter), which the judge checks.
        "consolidateAfter": "Never" if rnd.random() < 0.15 else "0s",
    }
    if budgets is not None:
        disruption["budgets"] = budgets
    labels = {TEAM: name} if rnd.random() < 0.5 else {}
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": name},
        "spec": {
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "nodeClassRef": {
                        "group": "karpenter.k8s.aws",
                        "kind": "EC2NodeClass",
                        "name": "default",
                    },
                    "requirements": reqs,
                    "taints": [dict(DEDICATED)] if tainted else [],
                },
            },
            "disruption": disruption,
        },
    }


def pool_admits(pool: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """Do the pool's requirements admit a node with ``labels`` (else the node is drifted)?"""
    from tests.oracle.selectors import requirement_matches

    reqs = pool["spec"]["template"]["spec"]["requirements"]
    tmpl = pool["spec"]["template"]["metadata"]["labels"]
    return all(requirement_matches(r, labels) for r in reqs) and all(
        labels.get(k) == v for k, v in tmpl.items()
    )


def _managed_node(
    rnd: random.Random,
    name: str,
    pool: Mapping[str, Any],
    catalog: Mapping[str, Any],
    never_drifted: bool = False,
) -> dict[str, Any] | None:
    """A node of the pool, of a catalog type and offering; usually one the pool admits
    (sometimes not: a drifted node)."""
    types = catalog["instanceTypes"]
    drifted = rnd.random() < 0.12 and not never_drifted
    for _ in range(12):
        entry = rnd.choice(types)
        off = rnd.choice(entry["offerings"])
        labels = {
            **type_labels(entry),
            ZONE: off["zone"],
            CAPACITY_TYPE: off["capacityType"],
            NODEPOOL: pool["metadata"]["name"],
            INITIALIZED: "true",
            **pool["spec"]["template"]["metadata"]["labels"],
        }
        if drifted or pool_admits(pool, labels):
            alloc = allocatable(entry)
            extra = {GPU: alloc[GPU]} if GPU in alloc else None
            body = node(
                name,
                labels,
                taints=pool["spec"]["template"]["spec"]["taints"],
                cpu=alloc["cpu"],
                memory=alloc["memory"],
                pods=int(alloc["pods"]),
                extra=extra,
            )
            body["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
            body["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
            return body
    return None


def _unmanaged_node(rnd: random.Random, name: str) -> dict[str, Any]:
    zone = rnd.choice(ZONES)
    taints = [dict(DEDICATED)] if rnd.random() < 0.2 else []
    body = node(
        name,
        {ZONE: zone, GEN: rnd.choice(["1", "2", "3"]), "kubernetes.io/os": "linux"},
        taints=taints,
        cpu=rnd.choice(["1", "2", "4"]),
        memory=rnd.choice(["2Gi", "4Gi", "8Gi"]),
        pods=rnd.choice([4, 16, 58]),
    )
    body["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    return body


NAMESPACES = (("default", "a"), ("team-a", "a"), ("team-b", "b"))


REPLICAS = (1, 2, 3, 4, 6, 8, 12)


def _app_spec(
    rnd: random.Random,
    i: int,
    n_apps: int,
    zonal_volumes: bool,
    replicas: Sequence[int] = REPLICAS,
) -> dict[str, Any]:
    """What one app's pods share: requests and constraints, as keyword arguments for
    ``objects.pod`` plus a few markers (``_limits_only``, ``_gpu``, ``_volume``...)."""
    app = f"app{i}"
    labels = {"app": app}
    if rnd.random() < 0.3:
        labels["rev"] = rnd.choice(["1", "2"])
    spec: dict[str, Any] = {"labels": labels}
    spec["cpu"] = rnd.choice(["100m", "250m", "500m", "900m", "1", "1500m", "3"])
    spec["memory"] = rnd.choice(["128Mi", "512Mi", "1Gi", "3Gi", "6Gi"])
    spec["namespace"] = rnd.choice(NAMESPACES)[0]
    sel = rnd.random()
    if sel < 0.1:
        spec["nodeSelector"] = {ZONE: rnd.choice(ZONES)}
    elif sel < 0.18:
        spec["nodeSelector"] = {FAMILY: rnd.choice(["m", "c", "t"])}
    elif sel < 0.22:
        spec["nodeSelector"] = {TEAM: rnd.choice(["p0", "p1"])}
    node_terms: list[dict[str, Any]] | None = None
    na = rnd.random()
    if na < 0.08:
        node_terms = [{"matchExpressions": [{"key": GEN, "operator": "Gt", "values": ["1"]}]}]
    elif na < 0.14:
        node_terms = [{"matchExpressions": [{"key": GEN, "operator": "Lt", "values": ["3"]}]}]
    elif na < 0.2:
        not_zone = {"key": ZONE, "operator": "NotIn", "values": [rnd.choice(ZONES)]}
        node_terms = [{"matchExpressions": [not_zone]}]
    elif na < 0.24:
        node_terms = [
            {"matchExpressions": [{"key": FAMILY, "operator": "In", "values": ["c"]}]},
            {"matchExpressions": [{"key": GEN, "operator": "In", "values": ["1"]}]},
        ]
    elif na < 0.27:
        node_terms = [{"matchExpressions": [{"key": TEAM, "operator": "Exists"}]}]
    elif na < 0.3:
        node_terms = [{"matchExpressions": [{"key": TEAM, "operator": "DoesNotExist"}]}]
    tol = rnd.random()
    if tol < 0.25:
        spec["tolerations"] = [{"key": "dedicated", "operator": "Equal", "value": "batch"}]
    elif tol < 0.3:
        spec["tolerations"] = [{"operator": "Exists"}]
    match = {"app": app}
    constraints = []
    s = rnd.random()
    if s < 0.3:
        extra: dict[str, Any] = {}
        if rnd.random() < 0.3:
            extra["minDomains"] = rnd.choice([2, 3])
        if rnd.random() < 0.3:
            extra["nodeTaintsPolicy"] = "Honor"
        if rnd.random() < 0.2:
            extra["nodeAffinityPolicy"] = "Ignore"
        if "rev" in labels and rnd.random() < 0.5:
            extra["matchLabelKeys"] = ["rev"]
        constraints.append(spread(ZONE, rnd.choice([1, 1, 2]), match, **extra))
    elif s < 0.4:
        constraints.append(spread(HOSTNAME, rnd.choice([1, 2]), match))
    if rnd.random() < 0.05:
        constraints.append(spread(ZONE, 1, match, whenUnsatisfiable="ScheduleAnyway"))
    if constraints:
        spec["topologySpreadConstraints"] = constraints
    anti: list[dict[str, Any]] = []
    aff: list[dict[str, Any]] = []
    a = rnd.random()
    if a < 0.12:
        anti.append(pod_term(HOSTNAME, match))
    elif a < 0.16:
        anti.append(pod_term(ZONE, match))
    elif a < 0.2 and n_apps > 1:
        other = {"app": f"app{rnd.choice([j for j in range(n_apps) if j != i])}"}
        anti.append(pod_term(HOSTNAME, other, namespaceSelector={}))
    elif a < 0.22:
        anti.append(pod_term("example.com/no-such-key", {"app": "nothing"}))
    b = rnd.random()
    if b < 0.06 and n_apps > 1:
        other = {"app": f"app{rnd.choice([j for j in range(n_apps) if j != i])}"}
        ns_sel = {"matchLabels": {"team": rnd.choice("ab")}}
        aff.append(pod_term(ZONE, other, namespaceSelector=ns_sel))
    elif b < 0.1:
        aff.append(pod_term(ZONE, match))
    affinity: dict[str, Any] = {}
    if node_terms is not None:
        affinity["nodeAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": node_terms}
        }
    if aff:
        affinity["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": aff}
    if anti:
        affinity["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": anti}
    if affinity:
        spec["affinity"] = affinity
    spec["_limits_only"] = rnd.random() < 0.1
    spec["_init"] = rnd.random() < 0.08
    spec["_gpu"] = rnd.random() < 0.05
    spec["_port"] = 8000 + i if rnd.random() < 0.08 else None
    spec["_volume"] = zonal_volumes and rnd.random() < 0.1
    spec["_pdb"] = rnd.choice(
        [
            None,
            None,
            None,
            {"minAvailable": 1},
            {"maxUnavailable": 1},
            {"minAvailable": "50%"},
            {"maxUnavailable": 0},
        ]
    )
    spec["_replicas"] = rnd.choice(replicas)
    return spec


def _make_pod(app_spec: Mapping[str, Any], name: str) -> dict[str, Any]:
    kw = {k: v for k, v in app_spec.items() if not k.startswith("_")}
    p = pod(name, **kw)
    c = p["spec"]["containers"][0]
    if app_spec["_limits_only"]:
        c["resources"] = {"limits": c["resources"]["requests"]}
    if app_spec["_gpu"]:
        c["resources"].setdefault("limits", {})[GPU] = "1"
    if app_spec["_port"]:
        c["ports"] = [{"containerPort": 80, "hostPort": app_spec["_port"]}]
    if app_spec["_init"]:
        p["spec"]["initContainers"] = [
            {"name": "init", "image": "x", "resources": {"requests": {"cpu": "1200m"}}}
        ]
    p["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "name": p["metadata"]["labels"]["app"],
            "controller": True,
            "uid": "u",
        }
    ]
    return p


def _volume_for(pod_body: dict[str, Any], zone: str) -> list[dict[str, Any]]:
    """A claim bound to a zonal CSI volume, mounted by ``pod_body``."""
    name = pod_body["metadata"]["name"]
    ns = pod_body["metadata"]["namespace"]
    pv: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": f"pv-{ns}-{name}", "labels": {ZONE: zone}},
        "spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "zonal",
            "csi": {"driver": DRIVER, "volumeHandle": f"vol-{ns}-{name}"},
            "nodeAffinity": {
                "required": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]}
                    ]
                }
            },
            "claimRef": {"namespace": ns, "name": f"data-{name}"},
        },
    }
    pvc = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": f"data-{name}", "namespace": ns},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "zonal",
            "volumeName": pv["metadata"]["name"],
            "resources": {"requests": {"storage": "1Gi"}},
        },
        "status": {"phase": "Bound"},
    }
    pod_body["spec"]["volumes"] = [
        {"name": "data", "persistentVolumeClaim": {"claimName": f"data-{name}"}}
    ]
    return [pv, pvc]


def build(
    seed: int,
    *,
    max_managed: int = 8,
    max_unmanaged: int = 3,
    max_apps: int = 5,
    pending_share: float = 0.0,
    daemonset: bool = True,
    replicas: Sequence[int] = REPLICAS,
    permissive: bool = False,
) -> Scenario:
    """A scenario from ``seed`` (hypothesis draws the seed and the size bounds; the rest is a
    seeded ``random.Random``, which keeps generation fast and shrinking meaningful by seed).
    ``permissive`` leaves nothing in a disruption's way but cost and the pods' constraints:
    budgets of 100%, consolidation of underutilized nodes, no drift, no PDBs."""
    rnd = random.Random(seed)
    spot = rnd.random() < 0.5
    catalog = _catalog(rnd, rnd.randint(3, len(MENU)), spot, overhead=rnd.random() < 0.5)
    n_pools = rnd.choice([1, 1, 2])
    pools = [
        _pool(rnd, f"p{i}", tainted=i == 1 and rnd.random() < 0.5, spot=spot)
        for i in range(n_pools)
    ]
    if permissive:
        for p in pools:
            p["spec"]["disruption"] = {
                "consolidationPolicy": "WhenEmptyOrUnderutilized",
                "consolidateAfter": "0s",
                "budgets": [{"nodes": "100%"}],
            }
    objects: list[dict[str, Any]] = [*pools]
    objects += [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n, "labels": {"team": t}}}
        for n, t in NAMESPACES
    ]
    objects.append(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "zonal"},
            "provisioner": DRIVER,
            "volumeBindingMode": "WaitForFirstConsumer",
        }
    )
    nodes: list[dict[str, Any]] = []
    managed: list[str] = []
    for i in range(rnd.randint(1, max_managed)):
        body = _managed_node(rnd, f"n{i}", rnd.choice(pools), catalog, permissive)
        if body is not None:
            nodes.append(body)
            managed.append(f"n{i}")
    for i in range(rnd.randint(0, max_unmanaged)):
        nodes.append(_unmanaged_node(rnd, f"u{i}"))
    csinodes = []
    for n in nodes:
        if rnd.random() < 0.3:
            csinodes.append(
                {
                    "apiVersion": "storage.k8s.io/v1",
                    "kind": "CSINode",
                    "metadata": {"name": n["metadata"]["name"]},
                    "spec": {
                        "drivers": [
                            {
                                "name": DRIVER,
                                "nodeID": n["metadata"]["name"],
                                "allocatable": {"count": rnd.choice([1, 2, 3])},
                            }
                        ]
                    },
                }
            )
    objects += nodes + csinodes
    cluster = Cluster.from_objects(objects)
    ds_pods: list[dict[str, Any]] = []
    if daemonset and rnd.random() < 0.4:
        ds = {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"name": "logs", "namespace": "default"},
            "spec": {
                "selector": {"matchLabels": {"app": "logs"}},
                "template": {
                    "metadata": {"labels": {"app": "logs"}},
                    "spec": {
                        "containers": [
                            {
                                "name": "c",
                                "image": "x",
                                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                            }
                        ],
                        "tolerations": [{"operator": "Exists"}] if rnd.random() < 0.5 else [],
                    },
                },
            },
        }
        objects.append(ds)
        for n in nodes:
            dp = daemon_pod(ds, n["metadata"]["name"])
            if admits(dp, n["metadata"]["name"], cluster) is None:
                cluster.pods.append(dp)
                ds_pods.append(dp)
    n_apps = rnd.randint(1, max_apps)
    zonal_volumes = rnd.random() < 0.3
    pods: list[dict[str, Any]] = []
    pending: list[str] = []
    extras: list[dict[str, Any]] = []
    names = [n["metadata"]["name"] for n in nodes]
    for i in range(n_apps):
        spec = _app_spec(rnd, i, n_apps, zonal_volumes, replicas)
        for r in range(spec["_replicas"]):
            p = _make_pod(spec, f"app{i}-{r}")
            if spec["_volume"]:
                extras += _volume_for(p, rnd.choice(ZONES))
                cluster.pvs.update(
                    {o["metadata"]["name"]: o for o in extras if o["kind"] == "PersistentVolume"}
                )
                cluster.pvcs.update(
                    {
                        (o["metadata"]["namespace"], o["metadata"]["name"]): o
                        for o in extras
                        if o["kind"] == "PersistentVolumeClaim"
                    }
                )
            if rnd.random() < pending_share:
                pods.append(p)
                pending.append(f"{p['metadata']['namespace']}/{p['metadata']['name']}")
                continue
            start = rnd.randrange(len(names)) if names else 0
            placed = False
            for k in range(len(names)):
                target = names[(start + k) % len(names)]
                if admits(p, target, cluster) is None:
                    bound = with_node(p, target)
                    bound["status"] = {"phase": "Running"}
                    cluster.pods.append(bound)
                    pods.append(bound)
                    placed = True
                    break
            if not placed and pending_share > 0:
                pods.append(p)
                pending.append(f"{p['metadata']['namespace']}/{p['metadata']['name']}")
        if spec["_pdb"] is not None and not permissive:
            extras.append(
                {
                    "apiVersion": "policy/v1",
                    "kind": "PodDisruptionBudget",
                    "metadata": {"name": f"app{i}", "namespace": spec["namespace"]},
                    "spec": {"selector": {"matchLabels": {"app": f"app{i}"}}, **spec["_pdb"]},
                }
            )
    objects += ds_pods + pods + extras
    return Scenario(objects, catalog, managed, pending)


def daemon_pod(ds: Mapping[str, Any], node_name: str) -> dict[str, Any]:
    """The pod the DaemonSet controller runs on ``node_name`` (with the tolerations it adds)."""
    tmpl = ds["spec"]["template"]
    spec = dict(tmpl["spec"])
    spec["tolerations"] = [
        *(spec.get("tolerations") or []),
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
        {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
    ]
    spec["nodeName"] = node_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{ds['metadata']['name']}-{node_name}",
            "namespace": ds["metadata"]["namespace"],
            "labels": dict(tmpl["metadata"]["labels"]),
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "DaemonSet",
                    "name": ds["metadata"]["name"],
                    "controller": True,
                    "uid": "d",
                }
            ],
        },
        "spec": spec,
        "status": {"phase": "Running"},
    }


seeds = st.integers(min_value=0, max_value=2**32 - 1)


@dataclass(frozen=True)
class Size:
    """Bounds of a generated cluster (``build``'s keyword arguments)."""

    max_managed: int
    max_unmanaged: int
    max_apps: int
    replicas: tuple[int, ...] = REPLICAS


SMALL = Size(4, 2, 3)
MEDIUM = Size(8, 3, 5)
LARGE = Size(16, 4, 8)
HUGE = Size(30, 6, 12, (4, 8, 12, 16, 24))  # up to ~30 nodes and ~200 pods
# Mostly small inputs (fast, and most defects show on a few nodes), some up to the large end.
sizes = st.sampled_from([SMALL] * 5 + [MEDIUM] * 3 + [LARGE] + [HUGE])
