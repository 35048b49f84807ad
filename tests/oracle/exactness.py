"""Exactness on small clusters: how often Joinery's disruption rounds, run to a fixpoint,
reach the cheapest cluster one consolidation step can reach, found by brute force.

    python -m tests.oracle.exactness --clusters 10000 [--first-seed 0]

For clusters of at most ``MAX_MANAGED`` managed nodes (permissive pools: budgets of 100%, no
PDBs, no drift), the brute force tries every subset of managed nodes removed, replaced by at
most one node of any catalog type and offering a pool admits, cheapest first, and keeps the
first whose evicted pods the oracle admits on the remaining nodes and the replacement (a
depth-first search over destinations, each placement judged as the kube-scheduler admits
pods one by one, the final state judged again). Joinery's rounds are applied until one has
no command; its final cost is compared with the brute force's.
"""

from __future__ import annotations

import argparse
import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from tests.oracle import joinery_bridge
from tests.oracle.checker import admits, first_failure
from tests.oracle.cluster import Cluster, Obj, key_of, name_of, with_node
from tests.oracle.defects import open_defect
from tests.oracle.generate import (
    CAPACITY_TYPE,
    INITIALIZED,
    INSTANCE_TYPE,
    NODEPOOL,
    Scenario,
    allocatable,
    build,
    pool_admits,
    type_labels,
)
from tests.oracle.judge import judge_round
from tests.oracle.karpenter_rules import KarpenterRules, same_type_allows
from tests.oracle.objects import ZONE, node
from tests.oracle.resources import fit_failure, pod_requests
from tests.oracle.rounds import apply, cluster_cost, managed_nodes, node_price
from tests.oracle.selectors import node_labels, pod_matches_node_selection, untolerated_taint

NOW = datetime(2026, 11, 23, 12, tzinfo=UTC)
MAX_MANAGED = 6
MAX_ROUNDS = 10
REPLACEMENT = "brute-replacement"
SEARCH_BUDGET = 20_000  # oracle calls per cluster before the brute force gives up


def small_cluster(seed: int) -> Scenario:
    return build(
        seed,
        max_managed=MAX_MANAGED,
        max_unmanaged=2,
        max_apps=3,
        replicas=(1, 2, 3),
        daemonset=False,
        permissive=True,
    )


def _allows_spot(pool: Mapping[str, Any]) -> bool:
    """Whether the pool's requirements on the capacity type admit spot."""
    from tests.oracle.selectors import requirement_matches

    reqs = pool["spec"]["template"]["spec"]["requirements"]
    return all(
        requirement_matches(r, {CAPACITY_TYPE: "spot"})
        for r in reqs
        if r.get("key") == CAPACITY_TYPE
    )


def _pools_in_order(objects: Sequence[Obj]) -> list[Obj]:
    """NodePools as Karpenter's scheduler tries them for a new claim: by weight, highest
    first, then by name."""
    pools = [o for o in objects if o.get("kind") == "NodePool"]
    return sorted(pools, key=lambda p: (-int(p["spec"].get("weight") or 0), name_of(p)))


def _replacements(
    objects: Sequence[Obj], catalog: Mapping[str, Any]
) -> list[tuple[float, dict[str, Any], bool, str]]:
    """Every node one claim could become: (price, Node, whether its pool allows spot, the
    pool's name) per pool, type and available offering the pool's requirements admit."""
    out = []
    for pool in _pools_in_order(objects):
        spot_ok = _allows_spot(pool)
        tmpl = pool["spec"]["template"]
        for entry in catalog["instanceTypes"]:
            for off in entry["offerings"]:
                if not off.get("available", True):
                    continue
                labels = {
                    **type_labels(entry),
                    ZONE: off["zone"],
                    CAPACITY_TYPE: off["capacityType"],
                    NODEPOOL: name_of(pool),
                    INITIALIZED: "true",
                    **tmpl["metadata"]["labels"],
                }
                if not pool_admits(pool, labels):
                    continue
                alloc = allocatable(entry)
                extra = {k: v for k, v in alloc.items() if k not in ("cpu", "memory", "pods")}
                body = node(
                    REPLACEMENT,
                    labels,
                    taints=tmpl["spec"]["taints"],
                    cpu=alloc["cpu"],
                    memory=alloc["memory"],
                    pods=int(alloc["pods"]),
                    extra=extra,
                )
                out.append((float(off["price"]), body, spot_ok, name_of(pool)))
    return out


def _node_admits_alone(pod: Obj, node_body: Obj) -> bool:
    """The node-level filters only (labels, taints, resources on the empty node): whether a
    claim that could become ``node_body`` is one the pod may open."""
    if not pod_matches_node_selection(pod, node_body) or untolerated_taint(pod, node_body):
        return False
    alone = Cluster(nodes={name_of(node_body): node_body})
    return fit_failure(pod, node_body, alone) is None


class PoolOrder:
    """Karpenter's rule for the pool of a new claim: a pod that needs a new node opens it in
    the first pool (weight, then name) whose template and types admit it, and later pods join
    that claim. So a replacement from pool P holds at least one pod that no pool before P
    admits; a replacement whose pods an earlier pool admits all is one Karpenter would not
    launch (it would open the earlier pool's claim)."""

    def __init__(self, replacements: Sequence[tuple[float, dict[str, Any], bool, str]]) -> None:
        self.order: list[str] = []
        self.bodies: dict[str, list[dict[str, Any]]] = {}
        for _, body, _, pool in replacements:
            if pool not in self.bodies:
                self.order.append(pool)
                self.bodies[pool] = []
            self.bodies[pool].append(body)
        self._seen: dict[tuple[str, str], bool] = {}

    def _admitted(self, pod: Obj, pool: str) -> bool:
        key = (key_of(pod), pool)
        if key not in self._seen:
            self._seen[key] = any(_node_admits_alone(pod, b) for b in self.bodies[pool])
        return self._seen[key]

    def allows(self, pool: str, pods: Sequence[Obj]) -> bool:
        """Whether Karpenter could have opened a claim of ``pool`` holding ``pods``."""
        if not pods:
            return True
        earlier = self.order[: self.order.index(pool)]
        return any(not any(self._admitted(p, q) for q in earlier) for p in pods)


class OutOfBudget(Exception):
    """The search took more oracle calls than a brute force on a small cluster should."""


@dataclass
class Search:
    calls: int = 0
    # Karpenter's reachable set: a test of the pods landing on the replacement (if any).
    onto_replacement: Callable[[list[Obj]], bool] | None = None
    # Karpenter's scheduling rules on top of the kube-scheduler's (karpenter_rules.py).
    rules: KarpenterRules | None = None

    def place(self, cluster: Cluster, pods: list[Obj], placed: list[tuple[Obj, str]]) -> bool:
        """Can ``pods`` be admitted one by one (any destinations) onto ``cluster``?"""
        if not pods:
            if self.onto_replacement is not None:
                landed = [p for p, n in placed if n == REPLACEMENT]
                if not self.onto_replacement(landed):
                    return False
            return first_failure(_without(cluster, placed), placed, final_state=True) is None
        pod, rest = pods[0], pods[1:]
        for name in sorted(cluster.nodes):
            self.calls += 1
            if self.calls > SEARCH_BUDGET:
                raise OutOfBudget
            if admits(pod, name, cluster) is None and (
                self.rules is None or self.rules.refusal(pod, cluster.nodes[name], cluster) is None
            ):
                cluster.pods.append(with_node(pod, name))
                ok = self.place(cluster, rest, [*placed, (pod, name)])
                cluster.pods.pop()
                if ok:
                    return True
        return False


def _without(cluster: Cluster, placed: list[tuple[Obj, str]]) -> Cluster:
    keys = {key_of(p) for p, _ in placed}
    c = cluster.copy()
    c.pods = [p for p in c.pods if key_of(p) not in keys]
    return c


@dataclass(frozen=True)
class Step:
    """The brute force's cheapest step: the cost it reaches, the nodes it removes, and the
    pods it moves (none when no step saves anything)."""

    cost: float
    gone: tuple[str, ...] = ()
    moved: tuple[Obj, ...] = ()


def optimum(
    objects: Sequence[Obj],
    catalog: Mapping[str, Any],
    spot_to_spot: bool = False,
    pool_order: bool = False,
    karpenter_rules: bool = False,
) -> float:
    """The cost of ``cheapest_step`` (its arguments)."""
    return cheapest_step(objects, catalog, spot_to_spot, pool_order, karpenter_rules).cost


def cheapest_step(
    objects: Sequence[Obj],
    catalog: Mapping[str, Any],
    spot_to_spot: bool = False,
    pool_order: bool = False,
    karpenter_rules: bool = False,
) -> Step:
    """The cheapest cost one step (a subset of managed nodes removed, at most one
    replacement) reaches with every evicted pod admitted; raises OutOfBudget.

    Karpenter's SpotToSpotConsolidation gate (``spot_to_spot``, off by default): nodes that
    are all spot are never replaced by a claim whose pool allows spot (they may only go
    without a replacement, or be replaced from a pool that cannot launch spot). With
    ``pool_order``, a replacement must also be one Karpenter's pool order can open
    (``PoolOrder``); ``karpenter_rules`` adds pool order and Karpenter's scheduling rules
    to the kube-scheduler's on every evicted pod's placement (``KarpenterRules``)."""
    managed = managed_nodes(objects)
    nodes = {name_of(o): o for o in objects if o.get("kind") == "Node"}
    price = {n: node_price(nodes[n], catalog) for n in managed}
    base = sum(price.values())
    options: list[tuple[float, tuple[str, ...], dict[str, Any] | None, str]] = []
    replacements = _replacements(objects, catalog)
    order = PoolOrder(replacements)
    pool_order = pool_order or karpenter_rules
    start = Cluster.from_objects(objects)
    occupied = {n for n in managed if start.pods_on(n)}
    for k in range(1, len(managed) + 1):
        for gone in itertools.combinations(managed, k):
            if karpenter_rules and not set(managed) - occupied <= set(gone):
                continue  # Karpenter's Emptiness method has removed the empty nodes first
            saved = sum(price[n] for n in gone)
            options.append((base - saved, gone, None, ""))
            # Karpenter's Emptiness method removes empty nodes before consolidation looks:
            # an empty on-demand node does not lift the gate for the spot nodes with it.
            gated = [n for n in gone if not karpenter_rules or n in occupied]
            all_spot = all(
                (nodes[n]["metadata"].get("labels") or {}).get(CAPACITY_TYPE) == "spot"
                for n in gated
            )
            for rp, body, spot_ok, pool in replacements:
                if all_spot and spot_ok and not spot_to_spot:
                    continue
                if karpenter_rules and spot_ok and node_labels(body)[CAPACITY_TYPE] != "spot":
                    # Karpenter pins a replacement its pool may launch as spot to spot (no
                    # generated pod selects a capacity type, which would narrow it first).
                    continue
                if rp < saved:
                    options.append((base - saved + rp, gone, body, pool))
    options.sort(key=lambda o: (o[0], len(o[1])))
    search = Search()
    if karpenter_rules:
        search.rules = KarpenterRules([body for _, body, _, _ in replacements])
    for cost, gone, replacement, pool in options:
        if cost >= base - 1e-9:
            break
        cluster = Cluster.from_objects(objects)
        evicted: list[Obj] = []
        for n in gone:
            evicted += cluster.remove_node(n)
        if replacement is not None:
            cluster.nodes[name_of(replacement)] = replacement
        if not _room(cluster, evicted):
            continue
        search.onto_replacement = (
            (lambda pods, pool=pool: order.allows(pool, pods))
            if pool_order and replacement is not None
            else None
        )
        moving = sorted(set(gone) & occupied)
        if karpenter_rules and replacement is not None and len(moving) > 1:
            cheapest: dict[str, float] = {}  # per type among the nodes with pods replaced
            for n in moving:
                cheapest[_type(nodes[n])] = min(price[n], cheapest.get(_type(nodes[n]), price[n]))
            paid = cost - (base - sum(price[n] for n in gone))  # the replacement's price
            search.onto_replacement = _karpenter_replacement(
                order, pool, paid, replacements, cheapest, cluster
            )
        evicted.sort(key=lambda p: -sum(pod_requests(p, cluster).values()))
        if search.place(cluster, evicted, []):
            return Step(cost, gone, tuple(evicted))
    return Step(base)


def _type(n: Obj) -> str:
    return str((n["metadata"].get("labels") or {}).get(INSTANCE_TYPE))


def _karpenter_replacement(
    order: PoolOrder,
    pool: str,
    price: float,
    replacements: Sequence[tuple[float, dict[str, Any], bool, str]],
    gone: Mapping[str, float],
    cluster: Cluster,
) -> Callable[[list[Obj]], bool]:
    """The test of the pods landing on a replacement of several nodes under Karpenter's
    rules: pool order, and no delete in disguise (``same_type_allows``)."""
    options = [body for _, body, _, p in replacements if p == pool]

    def allows(pods: list[Obj]) -> bool:
        return order.allows(pool, pods) and same_type_allows(price, pods, options, gone, cluster)

    return allows


def _room(cluster: Cluster, pods: list[Obj]) -> bool:
    """A quick necessary condition: the pods' cpu and memory fit in what is free in total."""
    from tests.oracle.resources import node_allocatable

    for resource in ("cpu", "memory"):
        free = sum(node_allocatable(n).get(resource, 0) for n in cluster.nodes.values())
        used = sum(pod_requests(p, cluster).get(resource, 0) for p in cluster.pods)
        need = sum(pod_requests(p, cluster).get(resource, 0) for p in pods)
        if need > free - used:
            return False
    return True


@dataclass
class Outcome:
    seed: int
    joinery: float
    best: float | None  # None: the brute force ran out of budget
    invalid: str | None  # a round the oracle refused (the fixpoint stops there)
    features: frozenset[str] = frozenset()
    # The optimum among the steps Karpenter's pool order allows (``PoolOrder``).
    reachable: float | None = None
    final: list[dict[str, Any]] | None = field(default=None, repr=False)  # the fixpoint
    # The optimum among the steps Karpenter's rules allow (pool order and ``KarpenterRules``).
    karpenter: float | None = None

    def against_reachable(self) -> Outcome:
        """The same outcome compared with the optimum Karpenter's pool order allows."""
        return replace(self, best=self.reachable)

    def against_karpenter(self) -> Outcome:
        """The same outcome compared with the optimum Karpenter's rules allow."""
        return replace(self, best=self.karpenter)


# Pod features behind known, Karpenter-shaped gaps (docs/disruption.md): the solver tries a
# pod's required node-selector terms in order and keeps the first that fits, and it reads a
# spread's domains as those a pool could still provide (for a hostname spread, a new node: its
# floor is 0, so at most maxSkew of a group per node), where the kube-scheduler counts only
# the nodes that exist: removing every node of a zone frees its pods from a zonal spread.
# And, under the SpotToSpotConsolidation gate, a spot node is replaced by spot only when 15
# cheaper spot types exist (Karpenter's spot-to-spot flexibility rule); with the gate off
# (the default, as here) ``optimum`` follows Karpenter's rule itself.
KNOWN = ("several node-selector terms", "hostname spread", "zonal spread", "spot nodes")


def features(objects: Sequence[Obj]) -> frozenset[str]:
    out = set()
    for o in objects:
        labels = (o.get("metadata") or {}).get("labels") or {}
        if o.get("kind") == "Node" and labels.get(CAPACITY_TYPE) == "spot":
            out.add("spot nodes")
        if o.get("kind") != "Pod":
            continue
        spec = o.get("spec") or {}
        na = (spec.get("affinity") or {}).get("nodeAffinity") or {}
        req = na.get("requiredDuringSchedulingIgnoredDuringExecution") or {}
        if len(req.get("nodeSelectorTerms") or []) > 1:
            out.add("several node-selector terms")
        for c in spec.get("topologySpreadConstraints") or []:
            hard = (c.get("whenUnsatisfiable") or "DoNotSchedule") == "DoNotSchedule"
            if hard and c["topologyKey"] == "kubernetes.io/hostname":
                out.add("hostname spread")
            elif hard:
                out.add("zonal spread")
    return frozenset(out)


def run_one(seed: int) -> Outcome:
    sc = small_cluster(seed)
    objects: list[dict[str, Any]] = sc.objects
    invalid = None
    for r in range(MAX_ROUNDS):
        out = joinery_bridge.disruption(objects, sc.catalog, NOW)
        why = judge_round(objects, sc.catalog, managed_nodes(objects), out)
        if why is not None:
            defect = open_defect(objects, sc.catalog, out, why)
            invalid = f"[{defect or 'UNEXPLAINED'}] {why}"
            break
        if not out["disruption"]["commands"]:
            break
        objects = apply(objects, sc.catalog, out["disruption"], f"r{r}")
    try:
        best: float | None = optimum(sc.objects, sc.catalog)
        reachable: float | None = optimum(sc.objects, sc.catalog, pool_order=True)
        karpenter: float | None = optimum(sc.objects, sc.catalog, karpenter_rules=True)
    except OutOfBudget:
        best = reachable = karpenter = None
    cost = cluster_cost(objects, sc.catalog)
    return Outcome(seed, cost, best, invalid, features(sc.objects), reachable, objects, karpenter)


# The order in which a gap is put in a class by what its step moves (``classify``).
MOVE_CLASSES = (
    "spot nodes",
    "zonal spread",
    "hostname spread",
    "several node-selector terms",
    "soft spread",
    "zonal pod affinity",
)


def _move_features(objects: Sequence[Obj]) -> frozenset[str]:
    """``features`` plus two that only a classification of steps needs."""
    out = set(features(objects))
    for o in objects:
        if o.get("kind") != "Pod":
            continue
        spec = o.get("spec") or {}
        for c in spec.get("topologySpreadConstraints") or []:
            if c.get("whenUnsatisfiable") == "ScheduleAnyway":
                out.add("soft spread")
        pa = (spec.get("affinity") or {}).get("podAffinity") or {}
        for t in pa.get("requiredDuringSchedulingIgnoredDuringExecution") or []:
            if t.get("topologyKey") == ZONE:
                out.add("zonal pod affinity")
    return frozenset(out)


def classify(o: Outcome) -> str:
    """Why a fixpoint stays above the optimum Karpenter's rules allow, as a class: "path"
    when no step from the fixpoint itself saves (the rounds went another way); else the
    first of ``MOVE_CLASSES`` among the nodes and pods that the cheapest step from the
    fixpoint removes and moves ("other": none)."""
    assert o.final is not None
    catalog = small_cluster(o.seed).catalog
    step = cheapest_step(o.final, catalog, karpenter_rules=True)
    if step.cost >= o.joinery - 1e-6:
        return "path"
    gone = [n for n in o.final if n.get("kind") == "Node" and name_of(n) in step.gone]
    found = _move_features([*gone, *step.moved])
    return next((f"step: {c}" for c in MOVE_CLASSES if c in found), "step: other")


@dataclass
class Summary:
    clusters: int
    compared: int
    reached: int
    better: int
    worst_gap: float
    worst_seed: int | None
    unknown: int
    invalid: int
    # Clusters above an optimum of $0/h (every managed node removable): no relative gap.
    above_zero: tuple[int, ...] = ()

    def lines(self) -> list[str]:
        share = self.reached / self.compared if self.compared else 1.0
        return [
            f"clusters: {self.clusters} (compared {self.compared}; brute force out of budget "
            f"{self.unknown}; a round refused by the oracle {self.invalid})",
            f"Joinery's fixpoint at the one-step optimum or below: {self.reached} "
            f"({share:.2%}); below it (several rounds beat one step): {self.better}",
            f"worst gap above the optimum: {self.worst_gap:.2%}"
            + (f" (seed {self.worst_seed})" if self.worst_seed is not None else ""),
            f"above an optimum of $0/h (every managed node removable): {len(self.above_zero)}"
            + (f" (seeds {', '.join(map(str, self.above_zero[:8]))})" if self.above_zero else ""),
        ]


def summarize(outcomes: Sequence[Outcome]) -> Summary:
    compared = [o for o in outcomes if o.best is not None and o.invalid is None]
    reached = [o for o in compared if o.best is not None and o.joinery <= o.best + 1e-6]
    better = [o for o in compared if o.best is not None and o.joinery < o.best - 1e-6]
    worst, worst_seed = 0.0, None
    above_zero = []
    for o in compared:
        assert o.best is not None
        if o.best <= 1e-9 and o.joinery > 1e-6:
            above_zero.append(o.seed)
        gap = (o.joinery - o.best) / o.best if o.best > 0 else 0.0
        if gap > worst + 1e-12:
            worst, worst_seed = gap, o.seed
    return Summary(
        len(outcomes),
        len(compared),
        len(reached),
        len(better),
        worst,
        worst_seed,
        sum(1 for o in outcomes if o.best is None),
        sum(1 for o in outcomes if o.invalid is not None),
        tuple(above_zero),
    )


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clusters", type=int, default=1000)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--show-gaps", action="store_true", help="print every seed with a gap")
    ap.add_argument(
        "--classify", action="store_true", help="count the gaps (Karpenter's rules) by class"
    )
    args = ap.parse_args(argv)
    outcomes = [run_one(s) for s in range(args.first_seed, args.first_seed + args.clusters)]
    classes: dict[int, str] = {}
    if args.classify:
        for o in outcomes:
            if o.karpenter is not None and o.invalid is None and o.joinery > o.karpenter + 1e-6:
                classes[o.seed] = classify(o)
    print("all clusters:")
    for line in summarize(outcomes).lines():
        print("  " + line)
    print("all clusters, against the optimum Karpenter's pool order allows:")
    for line in summarize([o.against_reachable() for o in outcomes]).lines():
        print("  " + line)
    print("all clusters, against the optimum Karpenter's rules allow (pool order included):")
    for line in summarize([o.against_karpenter() for o in outcomes]).lines():
        print("  " + line)
    plain = [o for o in outcomes if not o.features]
    print("clusters without the features of the known gaps (" + ", ".join(KNOWN) + "):")
    for line in summarize([o.against_reachable() for o in plain]).lines():
        print("  " + line)
    if args.show_gaps:
        for o in outcomes:
            if o.best is not None and o.invalid is None and o.joinery > o.best + 1e-6:
                tags = ", ".join(sorted(o.features)) or "-"
                cls = f" [{classes[o.seed]}]" if o.seed in classes else ""
                print(
                    f"seed {o.seed}: joinery {o.joinery:.4f}/h, optimum {o.best:.4f}/h, "
                    f"in pool order {o.reachable:.4f}/h, Karpenter's rules {o.karpenter:.4f}/h "
                    f"({tags}){cls}"
                )
            if o.invalid:
                print(f"seed {o.seed}: round refused: {o.invalid}")
    if args.classify:
        print("gaps above the optimum Karpenter's rules allow, by class:")
        for name in sorted(set(classes.values()), key=lambda c: -list(classes.values()).count(c)):
            seeds = [s for s, c in classes.items() if c == name]
            print(f"  {name}: {len(seeds)} (seeds {', '.join(map(str, seeds[:8]))}...)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
