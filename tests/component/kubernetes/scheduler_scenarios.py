"""Small random clusters for the real kube-scheduler to judge Joinery's decisions on.

Seeded ``random.Random`` (a seed names a round, so a failure reruns exactly): a catalog of a
few instance types over three zones, one to three NodePools (some tainted, some with template
labels or narrowed requirements), up to ten Nodes, and apps of unbound Pods covering
resources, node selectors and required node affinity, tolerations, zonal and per-node
topology spread, pod (anti-)affinity and PodDisruptionBudgets. The bound pods of a round are
not placed here: the test lets the real kube-scheduler place them first, so every starting
state is one the scheduler itself admitted. Written independently of ``scheduling/`` and of
the fuzz tier's generator, so the inputs share no assumption with the code they test.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
CAPACITY_TYPE = "karpenter.sh/capacity-type"
NODEPOOL = "karpenter.sh/nodepool"
FAMILY = "oracle.joinery.dev/family"  # a label the catalog's types define
TEAM = "oracle.joinery.dev/team"  # a label NodePool templates set
DEDICATED = "oracle.joinery.dev/dedicated"  # the taint tainted pools put on their nodes
OTHER_TAINT = "oracle.joinery.dev/other"  # a taint only unmanaged nodes carry
ROUND = "oracle.joinery.dev/round"  # every node of a round, so rounds can find their own
ZONES = ("oz-1a", "oz-1b", "oz-1c")
PAUSE = "registry.k8s.io/pause:3.10"

Obj = dict[str, Any]


@dataclass
class Scenario:
    """One round's cluster: what the API server gets, and what Joinery reads besides."""

    seed: int
    namespace: str
    prefix: str  # of every node name of the round
    catalog: Obj  # the --catalog document
    pools: list[Obj]
    nodes: list[Obj]
    pods: list[Obj]  # to be placed by the kube-scheduler before the round (then bound)
    pending: list[Obj]  # for `joinery plan` rounds: the pods the plan is asked to place
    pdbs: list[Obj]
    notes: list[str] = field(default_factory=list)  # what the generator chose, for reports
    # Pod name -> node: bind the pods there instead of letting the scheduler place them
    # (a failing round replayed while it is shrunk keeps its starting state).
    placed: dict[str, str] | None = None
    # DaemonSets tolerating every taint, so each runs a pod on every node of the round
    daemonsets: list[Obj] = field(default_factory=list)

    def pool(self, name: str) -> Obj:
        return next(p for p in self.pools if p["metadata"]["name"] == name)

    def instance_type(self, name: str) -> Obj:
        return next(t for t in self.catalog["instanceTypes"] if t["name"] == name)


def _cpu(milli: int) -> str:
    return f"{milli}m"


def _catalog(rng: random.Random) -> Obj:
    shapes = [(2, 4), (4, 8), (8, 16)]
    families = ["gp", "cp"]
    chosen = rng.sample([(f, s) for f in families for s in shapes], rng.randint(3, 6))
    types = []
    for family, (cpu, mem) in sorted(chosen):
        base = 0.05 if family == "cp" else 0.045
        zones = [z for z in ZONES if rng.random() < 0.85] or [rng.choice(ZONES)]
        offerings = []
        for zone in zones:
            price = round(base * cpu * rng.uniform(0.9, 1.15), 4)
            offerings.append({"zone": zone, "capacityType": "on-demand", "price": price})
            if rng.random() < 0.3:
                offerings.append(
                    {"zone": zone, "capacityType": "spot", "price": round(price * 0.4, 4)}
                )
        types.append(
            {
                "name": f"{family}.{cpu}x",
                "capacity": {
                    "cpu": str(cpu),
                    "memory": f"{mem}Gi",
                    "pods": str(rng.choice([6, 10, 29])),
                },
                "overhead": {"cpu": "100m", "memory": "256Mi"},
                "requirements": [{"key": FAMILY, "operator": "In", "values": [family]}],
                "offerings": offerings,
            }
        )
    return {"instanceTypes": types}


def _pool(rng: random.Random, name: str) -> Obj:
    requirements: list[Obj] = [
        {
            "key": CAPACITY_TYPE,
            "operator": "In",
            "values": ["on-demand"] if rng.random() < 0.6 else ["on-demand", "spot"],
        }
    ]
    if rng.random() < 0.25:
        requirements.append({"key": FAMILY, "operator": "In", "values": [rng.choice(["gp", "cp"])]})
    if rng.random() < 0.2:
        requirements.append({"key": ZONE, "operator": "In", "values": sorted(rng.sample(ZONES, 2))})
    template: Obj = {
        "spec": {
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "x"},
            "requirements": requirements,
        }
    }
    if rng.random() < 0.5:
        template["metadata"] = {"labels": {TEAM: name}}
    if rng.random() < 0.3:
        template["spec"]["taints"] = [{"key": DEDICATED, "value": name, "effect": "NoSchedule"}]
    budget = rng.choice(["100%", "100%", "50%", "1", "2"])
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": name},
        "spec": {
            "template": template,
            "disruption": {
                "consolidationPolicy": "WhenEmptyOrUnderutilized"
                if rng.random() < 0.9
                else "WhenEmpty",
                "consolidateAfter": "0s",
                "budgets": [{"nodes": budget}],
            },
        },
    }


def admits(requirements: list[Obj], labels: dict[str, str]) -> bool:
    """Whether node labels meet In/NotIn/Exists/DoesNotExist requirements (all of them)."""
    for r in requirements:
        value = labels.get(r["key"])
        op = r["operator"]
        if op == "In" and value not in r.get("values", []):
            return False
        if op == "NotIn" and value in r.get("values", []):
            return False
        if op == "Exists" and value is None:
            return False
        if op == "DoesNotExist" and value is not None:
            return False
    return True


def allocatable(itype: Obj) -> dict[str, str]:
    """Capacity minus overhead, in units the API server accepts."""
    cap, over = itype["capacity"], itype.get("overhead", {})
    cpu = int(cap["cpu"]) * 1000 - int(over.get("cpu", "0m").rstrip("m"))
    mem = int(cap["memory"].rstrip("Gi")) * 1024 - int(over.get("memory", "0Mi").rstrip("Mi"))
    return {"cpu": _cpu(cpu), "memory": f"{mem}Mi", "pods": cap["pods"]}


def type_labels(itype: Obj, zone: str, capacity_type: str) -> dict[str, str]:
    labels = {
        INSTANCE_TYPE: itype["name"],
        ZONE: zone,
        CAPACITY_TYPE: capacity_type,
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/os": "linux",
    }
    for r in itype.get("requirements", []):
        if r["operator"] == "In" and r["values"]:
            labels[r["key"]] = r["values"][0]
    return labels


def node_object(
    name: str,
    labels: dict[str, str],
    taints: list[Obj],
    resources: dict[str, str],
    round_id: str,
) -> Obj:
    """A Node kwok runs (it is annotated for kwok), labelled with its round."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "annotations": {"kwok.x-k8s.io/node": "fake"},
            "labels": {**labels, HOSTNAME: name, ROUND: round_id},
        },
        "spec": {"taints": taints} if taints else {},
        "status": {"capacity": dict(resources), "allocatable": dict(resources)},
    }


def _managed_node(
    rng: random.Random, sc: Scenario, name: str, pool: Obj, round_id: str
) -> Obj | None:
    tmpl = pool["spec"]["template"]
    reqs = tmpl["spec"]["requirements"]
    drifted = rng.random() < 0.08  # a node its pool's requirements no longer admit
    choices = []
    for t in sc.catalog["instanceTypes"]:
        for o in t["offerings"]:
            labels = {
                **type_labels(t, o["zone"], o["capacityType"]),
                **tmpl.get("metadata", {}).get("labels", {}),
            }
            if admits(reqs, labels) != drifted:
                choices.append((t, o, labels))
    if not choices:
        return None
    t, _, labels = rng.choice(choices)
    labels |= {NODEPOOL: pool["metadata"]["name"], "karpenter.sh/initialized": "true"}
    if drifted:
        sc.notes.append(f"{name} drifted")
    return node_object(name, labels, tmpl["spec"].get("taints", []), allocatable(t), round_id)


def _unmanaged_node(rng: random.Random, name: str, round_id: str) -> Obj:
    cpu = rng.choice([2, 4, 8])
    labels = {
        ZONE: rng.choice(ZONES),
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/os": "linux",
    }
    if rng.random() < 0.5:
        labels[FAMILY] = rng.choice(["gp", "cp"])
    taints = (
        [{"key": OTHER_TAINT, "value": "yes", "effect": "NoSchedule"}] if rng.random() < 0.3 else []
    )
    resources = {"cpu": str(cpu), "memory": f"{cpu * 2}Gi", "pods": "20"}
    return node_object(name, labels, taints, resources, round_id)


def _app(
    rng: random.Random,
    sc: Scenario,
    app: str,
    replicas: int,
    earlier: list[str],
    *,
    allow_pdb: bool,
) -> list[Obj]:
    """``replicas`` pods of one app, sharing its constraints."""
    labels = {"app": app}
    spec: Obj = {}
    pools = [p["metadata"]["name"] for p in sc.pools]
    if rng.random() < 0.35:
        spec["tolerations"] = (
            [{"key": DEDICATED, "operator": "Exists", "effect": "NoSchedule"}]
            if rng.random() < 0.6
            else [{"key": DEDICATED, "operator": "Equal", "value": rng.choice(pools)}]
        )
    if rng.random() < 0.1:
        spec.setdefault("tolerations", []).append({"key": OTHER_TAINT, "operator": "Exists"})
    constrained = True
    match rng.choice(["none", "none", "team", "family", "zone-in", "zone-notin", "on-demand"]):
        case "team":
            spec["nodeSelector"] = {TEAM: rng.choice(pools)}
        case "family":
            spec["nodeSelector"] = {FAMILY: rng.choice(["gp", "cp"])}
        case "zone-in" | "zone-notin" as how:
            op = "In" if how == "zone-in" else "NotIn"
            term = {
                "key": ZONE,
                "operator": op,
                "values": sorted(rng.sample(ZONES, 2 if op == "In" else 1)),
            }
            spec["affinity"] = {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": [term]}]
                    }
                }
            }
        case "on-demand":
            spec["nodeSelector"] = {CAPACITY_TYPE: "on-demand"}
        case _:
            constrained = False
    if rng.random() < 0.4:
        key = rng.choice([ZONE, ZONE, HOSTNAME])
        constraint: Obj = {
            "maxSkew": rng.choice([1, 1, 2]),
            "topologyKey": key,
            "whenUnsatisfiable": "DoNotSchedule" if rng.random() < 0.85 else "ScheduleAnyway",
            "labelSelector": {"matchLabels": dict(labels)},
        }
        if constrained:
            # A hostname selector (how the judge pins a pod) narrows the domains of a
            # constraint that honours the pod's node affinity to the pinned node alone, so
            # the judge could not see a skew there: such pods count every node (Ignore).
            constraint["nodeAffinityPolicy"] = "Ignore"
        if rng.random() < 0.2:
            constraint["nodeTaintsPolicy"] = "Honor"
        if constraint["whenUnsatisfiable"] == "DoNotSchedule" and rng.random() < 0.15:
            constraint["minDomains"] = rng.choice([2, 3])
        if rng.random() < 0.15:
            labels["pod-template-hash"] = rng.choice(["h1", "h2"])
            constraint["matchLabelKeys"] = ["pod-template-hash"]
        spec["topologySpreadConstraints"] = [constraint]
    affinity = spec.setdefault("affinity", {})
    if rng.random() < 0.2:
        affinity["podAntiAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchLabels": {"app": app}},
                    "topologyKey": rng.choice([HOSTNAME, HOSTNAME, ZONE]),
                }
            ]
        }
    elif rng.random() < 0.15:
        target = rng.choice([*earlier, app])  # itself: the whole app in one zone / on one node
        affinity["podAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchLabels": {"app": target}},
                    "topologyKey": rng.choice([ZONE, ZONE, HOSTNAME]),
                }
            ]
        }
    if not affinity:
        del spec["affinity"]
    cpu = rng.choice([100, 200, 250, 400, 500, 750, 1000, 1500])
    mem = rng.choice([64, 128, 256, 512, 1024, 2048])
    annotations = {}
    if rng.random() < 0.04:
        annotations["karpenter.sh/do-not-disrupt"] = "true"
    pods = []
    for i in range(replicas):
        pods.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"{app}-{i}",
                    "namespace": sc.namespace,
                    "labels": dict(labels),
                    **({"annotations": dict(annotations)} if annotations else {}),
                },
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "image": PAUSE,
                            "resources": {"requests": {"cpu": _cpu(cpu), "memory": f"{mem}Mi"}},
                        }
                    ],
                    "terminationGracePeriodSeconds": 0,
                    **spec,
                },
            }
        )
    if allow_pdb and rng.random() < 0.3:
        budget = (
            {"maxUnavailable": rng.choice([1, 2])}
            if rng.random() < 0.6
            else {"minAvailable": max(0, replicas - rng.choice([1, 2]))}
        )
        sc.pdbs.append(
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": app, "namespace": sc.namespace},
                "spec": {"selector": {"matchLabels": {"app": app}}, **budget},
            }
        )
    return pods


def _daemonset(rng: random.Random, name: str, namespace: str) -> Obj:
    labels = {"daemon": name}
    requests = {"cpu": _cpu(rng.choice([50, 100, 200])), "memory": f"{rng.choice([32, 128])}Mi"}
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [
                        {"name": "daemon", "image": PAUSE, "resources": {"requests": requests}}
                    ],
                    "tolerations": [{"operator": "Exists"}],
                    "terminationGracePeriodSeconds": 0,
                },
            },
        },
    }


def generate(seed: int, namespace: str, prefix: str, *, pending: bool = False) -> Scenario:
    """The scenario of ``seed``; with ``pending``, also pods for `joinery plan` to place."""
    rng = random.Random(seed)
    sc = Scenario(seed, namespace, prefix, _catalog(rng), [], [], [], [], [])
    sc.pools = [_pool(rng, f"p{i}") for i in range(rng.randint(1, 3))]
    managed = rng.randint(2, 8)
    for _ in range(4 * managed):  # a pool whose requirements no type meets gets no node
        if len(sc.nodes) == managed:
            break
        name = f"{prefix}-m{len(sc.nodes)}"
        node = _managed_node(rng, sc, name, rng.choice(sc.pools), namespace)
        if node is not None:
            sc.nodes.append(node)
    if not sc.nodes:
        sc.nodes.append(_unmanaged_node(rng, f"{prefix}-u9", namespace))
    for i in range(rng.choice([0, 0, 1, 2])):
        sc.nodes.append(_unmanaged_node(rng, f"{prefix}-u{i}", namespace))
    budget = rng.randint(max(4, len(sc.nodes)), 40)
    apps: list[str] = []
    while budget > 0:
        app = f"a{len(apps)}"
        replicas = min(budget, rng.randint(1, 8))
        sc.pods += _app(rng, sc, app, replicas, apps, allow_pdb=True)
        apps.append(app)
        budget -= replicas
    for i in range(rng.choice([0, 0, 1, 2])):
        sc.daemonsets.append(_daemonset(rng, f"ds{i}", namespace))
    if pending:
        for _ in range(rng.randint(1, 3)):
            app = f"a{len(apps)}"
            sc.pending += _app(rng, sc, app, rng.randint(1, 10), apps, allow_pdb=False)
            apps.append(app)
    return sc
