"""A solver cache kept from one provisioning round to the next (``KeptCatalog``) gives the
plan a fresh solve gives, round after round, while the cluster changes between rounds: a
claim deleted (its pod gets a new claim), a claim's status filled in, a pool edited, a pod
added, a pod bound to a claim's name. The cache it keeps is pruned to the round's objects
and dropped past its bound or for another catalog."""

from __future__ import annotations

import copy
import threading
from typing import Any

from models.catalog import load_catalog
from models.instancetype import InstanceType
from scheduling.inputs import Document, build_problem, claim_parts
from scheduling.problem import Problem
from scheduling.report import plan_to_dict
from scheduling.solver import Plan, Solver
from scheduling.solving.catalog import CatalogCache
from scheduling.solving.kept import KeptCatalog
from tests.support.catalogs import ZA, ZB, catalog
from tests.support.labels import CAPACITY_TYPE, INSTANCE_TYPE
from tests.support.manifests import node, nodeclaim, nodepool, pod, req

POOL = nodepool(
    "default",
    [req(INSTANCE_TYPE, "In", "m5.xlarge", "m5.2xlarge"), req(CAPACITY_TYPE, "In", "on-demand")],
)


class Cluster:
    """Documents as the worker's watches keep them: one per object version, so an
    unchanged object is the same Document (and parse) in every round."""

    def __init__(self) -> None:
        self.docs: dict[str, Document] = {}

    def put(self, body: dict[str, Any]) -> None:
        key = f"{body['kind']}/{body['metadata']['name']}"
        self.docs[key] = Document(body, key)

    def delete(self, kind: str, name: str) -> None:
        del self.docs[f"{kind}/{name}"]

    def kept_docs(self) -> list[Document]:
        return list(self.docs.values())

    def fresh_docs(self) -> list[Document]:
        """The same objects read anew: nothing parsed, nothing shared."""
        return [Document(copy.deepcopy(dict(d.body)), d.where) for d in self.docs.values()]


def canonical(plan: Plan) -> dict[str, Any]:
    out = plan_to_dict(plan, 0.0)
    out["scheduled"] = [p.key for p in plan.scheduled]
    return out


class Rounds:
    """Each round solved twice: with the kept cache, and afresh; the plans must agree."""

    def __init__(self, cluster: Cluster, types: list[InstanceType], kept: KeptCatalog) -> None:
        self.cluster = cluster
        self.types = types
        self.kept = kept
        self.caches: list[CatalogCache] = []
        self.problems: list[Problem] = []

    def run(self) -> dict[str, Any]:
        problem = build_problem(self.cluster.kept_docs(), self.types).problem
        with self.kept.solving(problem) as cache:
            kept_plan = canonical(Solver(problem, catalog=cache).solve())
        self.caches.append(cache)
        self.problems.append(problem)
        fresh = build_problem(self.cluster.fresh_docs(), self.types).problem
        fresh_plan = canonical(Solver(fresh).solve())
        assert kept_plan == fresh_plan
        return kept_plan


def claims_for(plan: dict[str, Any], start: int) -> list[dict[str, Any]]:
    """In-flight claims for a plan's new claims (no status yet: capacity from the catalog)."""
    out = []
    for i, c in enumerate(plan["nodeClaims"]):
        body = nodeclaim(
            f"claim-{start + i}", instance_type=c["instanceTypes"][0], zone=c["zones"][0]
        )
        body["metadata"]["labels"]["karpenter.sh/nodepool"] = c["nodePool"]
        out.append(body)
    return out


def names_in(plan: dict[str, Any]) -> dict[str, list[str]]:
    return {n["name"]: n["pods"] for n in plan["existingNodes"]}


def test_kept_cache_plans_as_a_fresh_solve_while_the_cluster_changes() -> None:
    types = load_catalog(catalog())
    cluster = Cluster()
    cluster.put(POOL)
    for i in range(6):
        cluster.put(pod(f"web-{i}", "3", "1Gi", labels={"app": "web"}))
    rounds = Rounds(cluster, types, KeptCatalog())

    first = rounds.run()
    assert len(first["nodeClaims"]) == 3 and not first["existingNodes"]  # two pods a claim
    for body in claims_for(first, 0):
        cluster.put(body)

    # The burst's next rounds: every pod re-planned onto the claims in flight, none made.
    second = rounds.run()
    assert not second["nodeClaims"] and len(names_in(second)) == 3
    third = rounds.run()
    assert third == second
    assert rounds.caches[2] is rounds.caches[1], "the cache was kept"
    same = [a is b for a, b in zip(rounds.problems[1].nodes, rounds.problems[2].nodes, strict=True)]
    assert all(same), "an unchanged claim is the same node"

    # A claim deleted: its pod gets a new claim.
    lost = names_in(third)["claim-2"]
    cluster.delete("NodeClaim", "claim-2")
    fourth = rounds.run()
    assert sorted(p for c in fourth["nodeClaims"] for p in c["pods"]) == sorted(lost)
    assert "claim-2" not in names_in(fourth)

    # A claim's status filled in (a new version): its capacity comes from status now.
    launched = nodeclaim(
        "claim-0",
        instance_type="m5.xlarge",
        zone=ZA,
        allocatable={"cpu": "3500m", "memory": "14Gi", "pods": "58"},
    )
    cluster.put(launched)
    rounds.run()

    # The pool edited (a cheaper type allowed): its compatible types change, and with them
    # the new claims.
    cluster.put(
        nodepool(
            "default",
            [
                req(INSTANCE_TYPE, "In", "c6i.xlarge", "m5.xlarge", "m5.2xlarge"),
                req(CAPACITY_TYPE, "In", "on-demand"),
            ],
        )
    )
    cluster.put(pod("web-6", "3", "1Gi", labels={"app": "web"}))  # and a pod added
    edited = rounds.run()
    assert edited["nodeClaims"]
    assert all("c6i.xlarge" in c["instanceTypes"] for c in edited["nodeClaims"])

    # A pod bound to a claim's name: the claim's kept node is copied, never changed.
    kept_node = next(n for n in rounds.problems[-1].nodes if n.name == "claim-1")
    cluster.put(pod("bound-0", "500m", "128Mi", node_name="claim-1"))
    rounds.run()
    assert kept_node.pods == []
    bound = next(n for n in rounds.problems[-1].nodes if n.name == "claim-1")
    assert bound is not kept_node and [p.key for p in bound.pods] == ["default/bound-0"]

    # Nodes: one empty, one running a pod, one not initialized (its claim's startup taint
    # lifted in the simulation); then the running pod goes away.
    cluster.put(node("node-empty", nodepool="default"))
    cluster.put(node("node-busy", nodepool="default"))
    cluster.put(pod("busy-0", "1", "1Gi", node_name="node-busy"))
    cluster.put(
        node(
            "node-new",
            nodepool="default",
            taints=[
                {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"},
                {"key": "example.com/booting", "effect": "NoSchedule"},
            ],
        )
    )
    registered = nodeclaim("claim-reg")
    registered["spec"]["startupTaints"] = [{"key": "example.com/booting", "effect": "NoSchedule"}]
    registered["status"] = {"nodeName": "node-new"}
    cluster.put(registered)
    cluster.put(pod("web-7", "3", "1Gi", labels={"app": "web"}))
    rounds.run()
    rounds.run()
    before, after = rounds.problems[-2], rounds.problems[-1]
    empty = [next(n for n in p.nodes if n.name == "node-empty") for p in (before, after)]
    assert empty[0] is empty[1], "an unchanged Node without pods is the same node"
    booting = [next(n for n in p.nodes if n.name == "node-new") for p in (before, after)]
    assert booting[0] is booting[1] and not booting[0].taints, "simulated as initialized"
    busy = next(n for n in after.nodes if n.name == "node-busy")
    assert [p.key for p in busy.pods] == ["default/busy-0"]
    assert busy is next(n for n in before.nodes if n.name == "node-busy"), "same pods, same node"
    cluster.delete("Pod", "busy-0")
    rounds.run()
    busy = next(n for n in rounds.problems[-1].nodes if n.name == "node-busy")
    assert busy.pods == [], "the kept Node was never given the bound pod"
    assert all(c is rounds.caches[1] for c in rounds.caches[1:]), "one cache throughout"


def test_zonal_spread_over_kept_rounds_plans_as_a_fresh_solve() -> None:
    """Topology counts (kept per group from round to round) follow the claims that change."""
    types = load_catalog(catalog())
    cluster = Cluster()
    cluster.put(POOL)
    spread = {
        "maxSkew": 1,
        "topologyKey": "topology.kubernetes.io/zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "api"}},
    }
    for i in range(4):
        cluster.put(
            pod(f"api-{i}", "3", "1Gi", labels={"app": "api"}, topologySpreadConstraints=[spread])
        )
    rounds = Rounds(cluster, types, KeptCatalog())
    first = rounds.run()
    for body in claims_for(first, 0):
        cluster.put(body)
    rounds.run()
    cluster.delete("NodeClaim", "claim-0")
    cluster.put(nodeclaim("claim-9", instance_type="m5.xlarge", zone=ZB))
    cluster.put(pod("api-4", "3", "1Gi", labels={"app": "api"}, topologySpreadConstraints=[spread]))
    rounds.run()
    rounds.run()


def test_kept_cache_is_pruned_to_the_round_and_bounded() -> None:
    types = load_catalog(catalog())
    cluster = Cluster()
    cluster.put(POOL)
    for i in range(4):
        cluster.put(pod(f"web-{i}", "3", "1Gi"))
        cluster.put(nodeclaim(f"claim-{i}"))
    kept = KeptCatalog()
    rounds = Rounds(cluster, types, kept)
    rounds.run()
    before = kept.size()
    assert before > 0
    for i in range(4):
        cluster.delete("NodeClaim", f"claim-{i}")
        cluster.put(nodeclaim(f"claim-{i}", instance_type="m5.2xlarge"))  # new versions
    rounds.run()
    assert kept.size() <= before, "the old claims' entries were forgotten"

    # Past its bound the cache is dropped: the next round starts afresh.
    tiny = KeptCatalog(max_entries=1)
    small = Rounds(cluster, types, tiny)
    small.run()
    assert tiny.size() == 0
    small.run()
    assert small.caches[1] is not small.caches[0]

    # Another catalog (a new list) never reads the kept cache.
    rounds.types = load_catalog(catalog())
    rounds.run()
    assert rounds.caches[-1] is not rounds.caches[-2]


def _one_pod_problem() -> Problem:
    """One pool and one pending pod on the test catalog."""
    cluster = Cluster()
    cluster.put(POOL)
    cluster.put(pod("web-0"))
    return build_problem(cluster.kept_docs(), load_catalog(catalog())).problem


def test_a_round_overlapping_another_solves_with_its_own_cache() -> None:
    problem = _one_pod_problem()
    kept = KeptCatalog()
    seen: list[CatalogCache] = []
    with kept.solving(problem) as outer:
        thread = threading.Thread(target=lambda: seen.append(_inner(kept, problem)))
        thread.start()
        thread.join()
        assert seen[0] is not outer
    with kept.solving(problem) as again:
        assert again is outer, "the finished round's cache is the one kept"


def _inner(kept: KeptCatalog, problem: Problem) -> CatalogCache:
    with kept.solving(problem) as cache:
        Solver(problem, catalog=cache).solve()
        return cache


def test_a_solve_that_raises_keeps_nothing() -> None:
    problem = _one_pod_problem()
    kept = KeptCatalog()
    try:
        with kept.solving(problem):
            raise RuntimeError("the solve failed")
    except RuntimeError:
        pass
    assert kept.size() == 0


def test_claims_parsed_in_one_reading_share_their_common_parts_exactly() -> None:
    """A burst's claims share requirements and labels; parsing them with the reading's
    shared parts gives each claim the parse it gets alone (values and key order)."""
    bodies = [nodeclaim(f"claim-{i}", zone=ZA if i % 2 else ZB) for i in range(4)]
    named = nodeclaim("claim-named")
    named["metadata"]["labels"]["kubernetes.io/hostname"] = "host-x"
    bodies.append(named)
    shared: dict[tuple[object, ...], Any] = {}
    for body in bodies:
        alone = claim_parts(Document(copy.deepcopy(body), "alone"))
        together = claim_parts(Document(copy.deepcopy(body), "together"), shared)
        assert together.requirements == alone.requirements
        assert list(together.requirements) == list(alone.requirements)
        assert together.labels == alone.labels and list(together.labels) == list(alone.labels)
        assert together.instance_types == alone.instance_types
    assert len(shared) == 3  # two zones, and the claim with a hostname label of its own
