"""Karpenter's stricter reading of a few constraints (karpenter_rules.py), on hand-written
cases: each refuses a placement the kube-scheduler admits, and admits what Karpenter admits."""

from __future__ import annotations

from typing import Any

from tests.oracle.cluster import Cluster
from tests.oracle.generate import INSTANCE_TYPE
from tests.oracle.karpenter_rules import KarpenterRules, same_type_allows
from tests.oracle.objects import HOSTNAME, ZONE, affinity, node, pod, spread

APP = {"app": "web"}


def _launchable(*zones: str) -> list[dict[str, Any]]:
    return [node(f"new-{z}", {ZONE: z, "gen": "2"}) for z in zones]


def _cluster(*placed: tuple[str, str, int]) -> Cluster:
    """Nodes ``(name, zone, pods of the app on it)``."""
    objects: list[dict[str, Any]] = []
    for name, zone, n in placed:
        objects.append(node(name, {ZONE: zone, "gen": "1"}))
        objects += [pod(f"{name}-{i}", labels=APP, node_name=name) for i in range(n)]
    return Cluster.from_objects(objects)


def _spread_pod(key: str, soft: bool = False) -> dict[str, Any]:
    c = spread(key, 1, APP)
    if soft:
        c["whenUnsatisfiable"] = "ScheduleAnyway"
    return pod("new", labels=APP, topologySpreadConstraints=[c])


def test_a_zone_a_pool_could_launch_into_counts_as_a_domain_holding_zero() -> None:
    """Nodes only in zones a and b, one pod each: the kube-scheduler admits a second pod in
    zone a (min 1 over a, b); a pool launching in zone c makes zone c a domain with 0."""
    cluster = _cluster(("a", "zone-a", 1), ("b", "zone-b", 1))
    target = cluster.nodes["a"]
    assert (
        KarpenterRules(_launchable("zone-a", "zone-b")).refusal(_spread_pod(ZONE), target, cluster)
        is None
    )
    why = KarpenterRules(_launchable("zone-c")).refusal(_spread_pod(ZONE), target, cluster)
    assert why is not None and "3 topology.kubernetes.io/zone domains" in why, why


def test_a_hostname_spread_counts_a_new_node_holding_zero() -> None:
    """Every node holds one pod of the app: the kube-scheduler admits a second one anywhere
    (min 1); while a pool can launch a node for it, Karpenter's floor is 0."""
    cluster = _cluster(("a", "zone-a", 1), ("b", "zone-b", 1))
    assert KarpenterRules([]).refusal(_spread_pod(HOSTNAME), cluster.nodes["a"], cluster) is None
    why = KarpenterRules(_launchable("zone-a")).refusal(
        _spread_pod(HOSTNAME), cluster.nodes["a"], cluster
    )
    assert why is not None


def test_a_soft_spread_is_honoured() -> None:
    cluster = _cluster(("a", "zone-a", 1), ("b", "zone-b", 0))
    rules = KarpenterRules(_launchable("zone-a", "zone-b"))
    assert rules.refusal(_spread_pod(ZONE, soft=True), cluster.nodes["b"], cluster) is None
    why = rules.refusal(_spread_pod(ZONE, soft=True), cluster.nodes["a"], cluster)
    assert why is not None and "ScheduleAnyway" in why, why


def test_the_first_node_selector_term_some_node_meets_binds_the_pod() -> None:
    """Terms [gen=2, gen=1]: the existing nodes are gen 1; with a pool launching gen 2 nodes,
    Karpenter holds the pod to gen 2, else the first term is met nowhere and gen 1 holds."""
    terms = [
        {"matchExpressions": [{"key": "gen", "operator": "In", "values": ["2"]}]},
        {"matchExpressions": [{"key": "gen", "operator": "In", "values": ["1"]}]},
    ]
    p = pod("new", affinity=affinity(node_terms=terms))
    cluster = _cluster(("a", "zone-a", 0))
    assert KarpenterRules([]).refusal(p, cluster.nodes["a"], cluster) is None
    why = KarpenterRules(_launchable("zone-a")).refusal(p, cluster.nodes["a"], cluster)
    assert why is not None and "term 0" in why, why


def test_a_replacement_of_several_nodes_is_no_delete_in_disguise() -> None:
    """Two nodes replaced, one of type "big" ($0.10/h): when a "big" node could hold the
    replacement's pods, every replacement must cost less than $0.10/h (keeping that node and
    deleting the other would do); when "big" could not hold them, the rule says nothing."""
    big = node("launch-big", {INSTANCE_TYPE: "big"}, cpu="4")
    pods = [pod("p0", cpu="1"), pod("p1", cpu="1")]
    cluster = Cluster()
    gone = {"big": 0.10, "small": 0.05}
    assert not same_type_allows(0.12, pods, [big], gone, cluster)
    assert not same_type_allows(0.10, pods, [big], gone, cluster)
    assert same_type_allows(0.09, pods, [big], gone, cluster)
    heavy = [pod("p0", cpu="3"), pod("p1", cpu="3")]
    assert same_type_allows(0.12, heavy, [big], gone, cluster)
