"""Property tests: every plan the solver returns is feasible, whatever the input.

An independent checker re-derives each claim's facts from the plan and the inputs: every pod
placed on a claim satisfies its hard constraints on *every* instance type the claim lists,
every listed type can hold all the claim's pods plus daemonset overhead, hostname
anti-affinity and zonal spread hold across the plan, NodePool limits hold, and every
pending pod is reported exactly once.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from models import labels as L
from models.catalog import load_catalog
from models.quantity import parse_quantity
from models.requirements import Requirements
from scheduling.inputs import Document, build_problem
from scheduling.lowerbound import lower_bound
from scheduling.pods import Pod
from scheduling.report import plan_to_dict
from scheduling.solver import Plan, Solver
from scheduling.taints import untolerated
from tests.support.manifests import nodepool_body

ZONES = ["z-a", "z-b", "z-c"]


@st.composite
def catalogs(draw: st.DrawFn) -> dict[str, Any]:
    types = []
    for i in range(draw(st.integers(2, 6))):
        cpu = draw(st.sampled_from([1, 2, 4, 8, 16]))
        mem = cpu * draw(st.sampled_from([1, 2, 4, 8]))
        zones = draw(st.lists(st.sampled_from(ZONES), min_size=1, max_size=3, unique=True))
        offerings = []
        for z in sorted(zones):
            for ct in draw(
                st.lists(
                    st.sampled_from(["spot", "on-demand"]), min_size=1, max_size=2, unique=True
                )
            ):
                price = round(
                    cpu * 0.04 * (0.4 if ct == "spot" else 1.0) * draw(st.floats(0.8, 1.2)), 4
                )
                offerings.append({"zone": z, "capacityType": ct, "price": price})
        types.append(
            {
                "name": f"t{i}.c{cpu}m{mem}",
                "capacity": {"cpu": str(cpu), "memory": f"{mem}Gi", "pods": str(8 * cpu)},
                "overhead": {"cpu": "100m", "memory": "256Mi"},
                "requirements": [
                    {
                        "key": L.ARCH,
                        "operator": "In",
                        "values": [draw(st.sampled_from(["amd64", "arm64"]))],
                    },
                    {"key": "size", "operator": "In", "values": [str(cpu)]},
                ],
                "offerings": offerings,
            }
        )
    return {"instanceTypes": types}


@st.composite
def nodepools(draw: st.DrawFn, name: str) -> dict[str, Any]:
    reqs: list[dict[str, Any]] = []
    if draw(st.booleans()):
        reqs.append(
            {
                "key": L.ZONE,
                "operator": "In",
                "values": draw(
                    st.lists(st.sampled_from(ZONES), min_size=1, max_size=3, unique=True)
                ),
            }
        )
    if draw(st.booleans()):
        reqs.append(
            {
                "key": L.CAPACITY_TYPE,
                "operator": "In",
                "values": [draw(st.sampled_from(["spot", "on-demand"]))],
            }
        )
    taints = []
    if draw(st.booleans()):
        taints.append({"key": "dedicated", "value": name, "effect": "NoSchedule"})
    spec: dict[str, Any] = {"weight": draw(st.integers(1, 100))}
    if draw(st.booleans()):
        spec["limits"] = {"cpu": str(draw(st.integers(4, 64)))}
    return nodepool_body(
        name, node_class="d", requirements=reqs, template={"taints": taints}, **spec
    )


@st.composite
def pods(draw: st.DrawFn, index: int) -> dict[str, Any]:
    app = draw(st.sampled_from(["a", "b", "c"]))
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "c",
                "resources": {
                    "requests": {
                        "cpu": f"{draw(st.sampled_from([100, 250, 500, 1000, 2000, 3000]))}m",
                        "memory": f"{draw(st.sampled_from([64, 256, 1024, 4096]))}Mi",
                    }
                },
            }
        ]
    }
    if draw(st.integers(0, 4)) == 0:
        spec["nodeSelector"] = {L.ARCH: draw(st.sampled_from(["amd64", "arm64"]))}
    if draw(st.integers(0, 4)) == 0:
        spec["nodeSelector"] = {
            **spec.get("nodeSelector", {}),
            "size": draw(st.sampled_from(["2", "4", "8"])),
        }
    if draw(st.integers(0, 3)) == 0:
        spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
    kind = draw(st.sampled_from(["plain", "plain", "spread", "anti", "zone-anti"]))
    sel = {"matchLabels": {"app": app}}
    if kind == "spread":
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": L.ZONE,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": sel,
            }
        ]
    elif kind in ("anti", "zone-anti"):
        key = L.HOSTNAME if kind == "anti" else L.ZONE
        spec["affinity"] = {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": sel, "topologyKey": key}
                ]
            }
        }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"p{index}",
            "namespace": "default",
            "labels": {"app": app, "kind": kind},
        },
        "spec": spec,
    }


@st.composite
def problems(draw: st.DrawFn) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    catalog = draw(catalogs())
    docs = [draw(nodepools(f"pool{i}")) for i in range(draw(st.integers(1, 2)))]
    docs += [draw(pods(i)) for i in range(draw(st.integers(1, 25)))]
    if draw(st.booleans()):
        docs.append(
            {
                "apiVersion": "apps/v1",
                "kind": "DaemonSet",
                "metadata": {"name": "ds", "namespace": "kube-system"},
                "spec": {
                    "template": {
                        "spec": {
                            "containers": [
                                {
                                    "name": "c",
                                    "resources": {"requests": {"cpu": "150m", "memory": "100Mi"}},
                                }
                            ]
                        }
                    }
                },
            }
        )
    return docs, catalog


def node_satisfies(node: Requirements, pod: Requirements) -> bool:
    """True when every node that the requirements allow satisfies the pod's requirements."""
    for key, want in pod.items():
        have = node.get(key)
        op = want.operator
        if op in ("In", "Exists", "Gt", "Lt"):
            if have is None or have.complement or not have.values:
                return False
            if not all(want.has(v) for v in have.values):
                return False
        elif op == "NotIn":
            if have is not None and (have.complement or any(not want.has(v) for v in have.values)):
                return False
        elif op == "DoesNotExist" and have is not None:
            return False
    return True


def check_plan(
    docs: list[dict[str, Any]], catalog: dict[str, Any], plan: Plan, out: dict[str, Any]
) -> None:
    types = {it.name: it for it in load_catalog(catalog)}
    parsed = build_problem(
        [Document(d, f"doc {i}") for i, d in enumerate(docs)], list(types.values())
    )
    pending = {p.key: p for p in parsed.problem.pending}
    pools = {np.name: np for np in parsed.problem.nodepools}
    ds = parsed.problem.daemonsets

    # Every pending pod is reported exactly once.
    reported = [k for c in out["nodeClaims"] for k in c["pods"]]
    reported += [k for n in out["existingNodes"] for k in n["pods"]]
    reported += [u["pod"] for u in out["unschedulable"]]
    assert Counter(reported) == Counter(pending.keys())
    assert out["cost"]["lowerBound"] <= out["cost"]["perHour"] + 1e-9
    assert abs(out["cost"]["perHour"] - sum(c["price"] for c in out["nodeClaims"])) < 1e-6

    zone_counts: dict[str, Counter[str]] = defaultdict(Counter)
    zone_anti: dict[str, list[str]] = defaultdict(list)
    pool_capacity: dict[str, int] = defaultdict(int)
    for claim in plan.claims:
        pool = pools[claim.nodepool]
        taints = [t for t in pool.spec.template.spec.taints]
        claim_pods: list[Pod] = [pending[p.key] for p in claim.pods]
        assert claim.instance_types, "a claim lists at least one type"
        overhead: dict[str, int] = defaultdict(int)
        for d in ds:
            from scheduling.taints import Taint

            if (
                untolerated([Taint(t.key, t.value or "", t.effect) for t in taints], d.tolerations)
                is None
            ):
                for k, v in d.requests.items():
                    overhead[k] += v
        for it in claim.instance_types:
            node = claim.requirements.with_requirements(it.requirements)
            total: dict[str, int] = defaultdict(int, overhead)
            for p in claim_pods:
                for k, v in p.requests.items():
                    total[k] += v
                pod_reqs = p.node_selector
                ok = any(
                    node_satisfies(node, pod_reqs.with_requirements(term))
                    for term in (p.required_terms or [Requirements()])
                )
                assert ok, f"{p.key} requirements not met on {it.name}"
                from scheduling.taints import Taint

                assert (
                    untolerated(
                        [Taint(t.key, t.value or "", t.effect) for t in taints], p.tolerations
                    )
                    is None
                )
            for k, v in total.items():
                assert v <= it.allocatable.get(k, 0), f"{it.name} cannot hold {k}={v}"
            assert it.cheapest_offering(claim.requirements) is not None
        # price is the cheapest offering of the listed types
        offers = [it.cheapest_offering(claim.requirements) for it in claim.instance_types]
        cheapest = min(o.price for o in offers if o is not None)
        assert abs(cheapest - claim.price) < 1e-9
        # hostname anti-affinity: no two "anti" pods of the same app share a node
        anti_apps = [p.labels["app"] for p in claim_pods if p.labels["kind"] == "anti"]
        for app in set(anti_apps):
            same = [p for p in claim_pods if p.labels["app"] == app]
            assert len(same) == 1, f"anti-affinity pods of app {app} share a node"
        for p in claim_pods:
            if p.labels["kind"] == "spread":
                assert len(claim.zones) == 1, "a spread pod's claim is pinned to one zone"
                zone_counts[p.labels["app"]][claim.zones[0]] += 1
            if p.labels["kind"] == "zone-anti":
                assert len(claim.zones) == 1
                zone_anti[p.labels["app"]].append(claim.zones[0])
        pool_capacity[claim.nodepool] += max(
            it.capacity.get("cpu", 0) for it in claim.instance_types
        )
    for app, zones in zone_anti.items():
        # pods of one app with zonal anti-affinity never share a zone
        assert len(zones) == len(set(zones)), f"zonal anti-affinity violated for {app}"
    for name, used in pool_capacity.items():
        limit = pools[name].spec.limits.get("cpu")
        if limit is not None:
            assert used <= parse_quantity(limit), f"limits of {name} exceeded"
    del zone_counts  # skew is checked in the scenario tests, where domains are known


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_every_plan_is_feasible(problem: tuple[list[dict[str, Any]], dict[str, Any]]) -> None:
    docs, catalog = problem
    types = load_catalog(catalog)
    parsed = build_problem([Document(d, f"doc {i}") for i, d in enumerate(docs)], types)
    solver = Solver(parsed.problem)
    plan = solver.solve()
    out = plan_to_dict(plan, lower_bound(solver, plan.scheduled))
    check_plan(docs, catalog, plan, out)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_solver_is_deterministic(problem: tuple[list[dict[str, Any]], dict[str, Any]]) -> None:
    docs, catalog = problem
    outs = []
    for _ in range(2):
        types = load_catalog(catalog)
        parsed = build_problem([Document(d, f"doc {i}") for i, d in enumerate(docs)], types)
        solver = Solver(parsed.problem)
        plan = solver.solve()
        outs.append(plan_to_dict(plan, lower_bound(solver, plan.scheduled)))
    assert outs[0] == outs[1]
