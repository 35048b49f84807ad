"""A catalog per NodePool (``Problem.pool_instance_types``), as Karpenter asks the cloud
provider for each NodePool's instance types: a pool's claims are bought only in the zones
its own catalog offers (its EC2NodeClass's subnets) and hold only what its own types'
allocatable allows (its NodeClass's kubelet reserve and maxPods), whatever the other
pools' NodeClasses say. Pools that share a catalog plan exactly as with one catalog."""

from __future__ import annotations

import copy
from typing import Any

from models.catalog import load_catalog
from scheduling.inputs import Document, build_problem
from scheduling.report import plan_to_dict
from scheduling.solver import Solver
from scheduling.solving.kept import KeptCatalog
from tests.support.catalogs import TYPES, ZA, ZB, ZC, ZONES, catalog
from tests.support.labels import CAPACITY_TYPE, INSTANCE_TYPE, NODEPOOL, ZONE
from tests.support.manifests import nodeclaim, nodepool, pod, req
from tests.support.plans import claim_of, plan, reason, where

ON_DEMAND = req(CAPACITY_TYPE, "In", "on-demand")


def _in_zones(*zones: str) -> dict[str, Any]:
    """The test catalog as a NodeClass with subnets in ``zones`` only sees it."""
    cts = ("on-demand", "spot")
    off = [(n, z, ct) for n in TYPES for z in ZONES if z not in zones for ct in cts]
    return catalog(unavailable=off)


def _with_pods(doc: dict[str, Any], pods: str) -> dict[str, Any]:
    """The catalog with every type's pod capacity set (a NodeClass's kubelet maxPods)."""
    out = copy.deepcopy(doc)
    for entry in out["instanceTypes"]:
        entry["capacity"]["pods"] = pods
    return out


def test_a_pod_that_needs_a_zone_goes_to_the_pool_whose_nodeclass_has_a_subnet_there() -> None:
    in_a, in_b = _in_zones(ZA), _in_zones(ZB)
    pools = [
        nodepool("east-a", [ON_DEMAND], weight=50),  # tried first
        nodepool("east-b", [ON_DEMAND]),
    ]
    pods = [
        pod("needs-b", node_selector={ZONE: ZB}),
        pod("needs-a", node_selector={ZONE: ZA}),
        pod("needs-c", node_selector={ZONE: ZC}),
        pod("anywhere"),
    ]
    out = plan([*pools, *pods], pool_catalogs={"east-a": in_a, "east-b": in_b})
    on_b = claim_of(out, "default/needs-b")
    assert on_b["nodePool"] == "east-b" and on_b["zones"] == [ZB]
    on_a = claim_of(out, "default/needs-a")
    assert on_a["nodePool"] == "east-a" and on_a["zones"] == [ZA]
    assert claim_of(out, "default/anywhere")["nodePool"] == "east-a"  # the heavier pool
    assert where(out)["default/needs-c"] == "unschedulable"
    assert "nodepool east-a" in reason(out, "default/needs-c")
    for claim in out["nodeClaims"]:
        assert claim["zones"] == ([ZA] if claim["nodePool"] == "east-a" else [ZB])


def test_one_catalog_for_every_pool_leaves_a_zone_without_subnets_to_no_pool() -> None:
    """What the round did before: the first NodeClass's view stood for both pools, so the
    pod that needs zone b found no pool (the contrast the test above draws)."""
    in_a = _in_zones(ZA)
    pools = [nodepool("east-a", [ON_DEMAND], weight=50), nodepool("east-b", [ON_DEMAND])]
    out = plan([*pools, pod("needs-b", node_selector={ZONE: ZB})], in_a)
    assert where(out)["default/needs-b"] == "unschedulable"


def test_each_pools_claims_hold_what_its_own_max_pods_allows() -> None:
    m5 = req(INSTANCE_TYPE, "In", "m5.large")
    pools = [nodepool("few", [m5, ON_DEMAND]), nodepool("many", [m5, ON_DEMAND])]
    pods = [pod(f"f-{i}", "10m", "16Mi", node_selector={NODEPOOL: "few"}) for i in range(8)]
    pods += [pod(f"m-{i}", "10m", "16Mi", node_selector={NODEPOOL: "many"}) for i in range(8)]
    base = catalog(["m5.large"])
    out = plan([*pools, *pods], pool_catalogs={"few": _with_pods(base, "4"), "many": base})
    few = [c for c in out["nodeClaims"] if c["nodePool"] == "few"]
    many = [c for c in out["nodeClaims"] if c["nodePool"] == "many"]
    assert len(few) == 2 and all(len(c["pods"]) == 4 for c in few)
    assert len(many) == 1 and len(many[0]["pods"]) == 8


def test_each_pools_claims_use_its_own_kubelet_reserve() -> None:
    """A reserve of 1 cpu leaves a 2-cpu type 1 cpu: the pool whose NodeClass reserves it
    needs a 4-cpu type for a 1500m pod, the other pool the cheapest 2-cpu one."""
    pools = [nodepool("reserved", [ON_DEMAND]), nodepool("lean", [ON_DEMAND])]
    pods = [
        pod("r", "1500m", "1Gi", node_selector={NODEPOOL: "reserved"}),
        pod("l", "1500m", "1Gi", node_selector={NODEPOOL: "lean"}),
    ]
    lean = catalog()
    reserved = catalog(overhead={"cpu": "1", "memory": "512Mi"})
    out = plan([*pools, *pods], pool_catalogs={"reserved": reserved, "lean": lean})
    on_reserved, on_lean = claim_of(out, "default/r"), claim_of(out, "default/l")
    assert on_reserved["nodePool"] == "reserved" and on_lean["nodePool"] == "lean"
    assert on_lean["instanceTypes"][0] == "m6g.large"  # the cheapest 2-cpu type
    two_cpu = {n for n, t in TYPES.items() if t[0] == "2"}
    assert not two_cpu & set(on_reserved["instanceTypes"])
    assert on_reserved["instanceTypes"][0] == "m6g.xlarge"  # the cheapest 4-cpu type


def test_an_in_flight_claim_is_sized_by_its_pools_catalog() -> None:
    m5 = req(INSTANCE_TYPE, "In", "m5.large")
    docs = [
        nodepool("few", [m5, ON_DEMAND]),
        nodeclaim("few-abcde", nodepool="few", instance_type="m5.large"),  # no status yet
        *[pod(f"p-{i}", "10m", "16Mi", node_selector={NODEPOOL: "few"}) for i in range(6)],
    ]
    base = catalog(["m5.large"])
    out = plan(docs, base, pool_catalogs={"few": _with_pods(base, "4")})
    assert [len(n["pods"]) for n in out["existingNodes"]] == [4]  # its catalog's maxPods
    assert sum(len(c["pods"]) for c in out["nodeClaims"]) == 2


def test_pools_sharing_one_catalog_plan_as_with_one_catalog() -> None:
    pools = [nodepool("a", [ON_DEMAND], weight=10), nodepool("b", [ON_DEMAND])]
    pods = [pod(f"p-{i}", "700m", "1Gi", spread=[]) for i in range(12)]
    pods += [pod("b-only", node_selector={NODEPOOL: "b"})]
    doc = catalog()
    alone = plan([*pools, *pods], doc)
    shared = plan([*pools, *pods], catalog(), pool_catalogs={"a": doc, "b": doc})
    assert shared == alone


def _solve(docs: list[Document], types: Any, own: Any, kept: KeptCatalog | None) -> Any:
    problem = build_problem(docs, types, own).problem
    assert len(problem.catalogs()) == len({id(t) for t in [types, *own.values()]})
    if kept is None:
        return plan_to_dict(Solver(problem).solve(), 0.0)
    with kept.solving(problem) as cache:
        return plan_to_dict(Solver(problem, catalog=cache).solve(), 0.0)


def test_a_kept_cache_answers_per_catalog_as_a_fresh_solve() -> None:
    """Rounds on the same two catalogs keep one cache and plan as a fresh solve does; a
    round whose pool sees another catalog (its NodeClass changed) starts afresh."""
    in_a, in_b = load_catalog(_in_zones(ZA)), load_catalog(_in_zones(ZB))
    both = load_catalog(_in_zones(ZA, ZB))
    docs = [
        Document(d, f"doc {i}")
        for i, d in enumerate(
            [
                nodepool("east-a", [ON_DEMAND], weight=50),
                nodepool("east-b", [ON_DEMAND]),
                *[pod(f"b-{i}", "700m", "1Gi", node_selector={ZONE: ZB}) for i in range(5)],
                *[pod(f"x-{i}", "300m", "512Mi") for i in range(5)],
            ]
        )
    ]
    kept = KeptCatalog()
    own = {"east-a": in_a, "east-b": in_b}
    first = _solve(docs, in_a, own, kept)
    assert kept.size() > 0
    again = _solve(docs, in_a, own, kept)
    assert first == again == _solve(docs, in_a, own, None)
    assert {c["nodePool"] for c in first["nodeClaims"] if "default/b-0" in c["pods"]} == {"east-b"}
    moved = {"east-a": both, "east-b": in_b}
    changed = _solve(docs, both, moved, kept)
    assert changed == _solve(docs, both, moved, None)
    for claim in changed["nodeClaims"]:
        if claim["nodePool"] == "east-a":
            assert set(claim["zones"]) <= {ZA, ZB}
