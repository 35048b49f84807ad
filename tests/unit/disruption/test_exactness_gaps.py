"""Consolidations the exactness brute force (``python -m tests.oracle.exactness``) found that
Joinery missed, each reduced to a hand-written cluster (issue 35, item 5)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import pytest

from tests.support.catalogs import ZA, ZB, ZC, sized_catalog
from tests.support.disruption import ALL, LONG_AGO, bound, claim_for, commands, disrupt, pool
from tests.support.disruption import kept as kept_reasons
from tests.support.labels import CAPACITY_TYPE
from tests.support.manifests import ZONE, node, pod_term, spread

# name: (cpu, memory, on-demand price in every zone)
SIZES = {
    "two-cpu": ("2", "8Gi", 0.06),
    "four-cpu": ("4", "16Gi", 0.15),
    "eight-cpu": ("8", "32Gi", 0.33),
}
CATALOG = sized_catalog(SIZES)


def _managed(
    name: str, size: str, zone: str = ZA, *, memory: str = "", nodepool: str = "default"
) -> list[Mapping[str, Any]]:
    """A Ready, initialized node of ``size`` (its memory ``memory`` when given) and its claim."""
    cpu, mem, _ = SIZES[size]
    body = node(
        name,
        cpu,
        memory or mem,
        "50",
        zone=zone,
        instance_type=size,
        nodepool=nodepool,
        labels={"karpenter.sh/initialized": "true"},
    )
    body["metadata"]["creationTimestamp"] = LONG_AGO
    body["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    return [body, claim_for(body)]


def _unmanaged(name: str, cpu: str, zone: str = ZA) -> Mapping[str, Any]:
    body = node(name, cpu, "8Gi", "50", zone=zone, instance_type="own")
    body["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    return body


def test_pods_split_between_a_node_with_room_and_a_smaller_new_node() -> None:
    """No new node cheaper than the 8-cpu node holds all 4.5 cpu of its pods; but one pod fits
    on an unmanaged node's free room and the other 3 cpu on a 4-cpu node: replaced for less
    (before the fix: kept, "no new node could be cheaper", from a bound that counted every
    pod on the new node)."""
    docs: list[Mapping[str, Any]] = [pool(budgets=ALL), *_managed("big", "eight-cpu")]
    docs.append(_unmanaged("own", "2"))
    docs += [bound(f"w{i}", "big", "1500m", "1Gi") for i in range(3)]
    out = disrupt(docs, CATALOG)
    (cmd,) = commands(out)
    assert cmd["nodes"] == ["big"]
    (rep,) = cmd["replacements"]
    assert rep["instanceTypes"][0] == "four-cpu"  # the cheapest first
    landed = sorted(cmd["pods"].values())
    assert landed == ["own", "replacement-0", "replacement-0"]
    assert cmd["savingsPerHour"] == pytest.approx(0.33 - 0.15)


def test_the_bound_still_keeps_a_node_whose_pods_the_others_cannot_take() -> None:
    """The same node with nowhere for any pod to go: the bound finds no cheaper node."""
    docs: list[Mapping[str, Any]] = [pool(budgets=ALL), *_managed("big", "eight-cpu")]
    docs += [bound(f"w{i}", "big", "1500m", "1Gi") for i in range(3)]
    out = disrupt(docs, CATALOG)
    assert commands(out) == []
    assert "no new node could be cheaper" in kept_reasons(out)["big"]


def _namespace(name: str, team: str) -> Mapping[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name, "labels": {"team": team}},
    }


def test_affinity_through_a_namespace_selector_sees_the_pods_it_selects() -> None:
    """A pod that must share a zone with a database in namespaces labelled team=a: the
    database runs in zone a, so an oversized node of zone a is replaced by a smaller one in
    zone a (before the fix the simulation knew no namespace labels, so the selector selected
    nothing and the pod "fit nowhere")."""
    affinity = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    **pod_term(ZONE, {"app": "db"}),
                    "namespaceSelector": {"matchLabels": {"team": "a"}},
                }
            ]
        }
    }
    docs: list[Mapping[str, Any]] = [
        pool(budgets=ALL),
        _namespace("data", "a"),
        _namespace("web", "b"),
        *_managed("big", "eight-cpu", ZA),
        _unmanaged("db-node", "2", ZA),
        bound("db-0", "db-node", "1500m", "1Gi", namespace="data", labels={"app": "db"}),
        bound(
            "web-0", "big", "1", "1Gi", namespace="web", labels={"app": "web"}, affinity=affinity
        ),
    ]
    out = disrupt(docs, CATALOG)
    (cmd,) = commands(out)
    assert cmd["nodes"] == ["big"]
    (rep,) = cmd["replacements"]
    assert rep["instanceTypes"][0] == "two-cpu"  # the cheapest first
    assert rep["zones"] == [ZA]
    assert cmd["pods"] == {"web/web-0": "replacement-0"}


def test_affinity_through_a_namespace_selector_selects_only_those_namespaces() -> None:
    """The same, with the database in a namespace the selector does not select: no zone holds
    a matching pod, so the pod fits nowhere and its node is kept."""
    affinity = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    **pod_term(ZONE, {"app": "db"}),
                    "namespaceSelector": {"matchLabels": {"team": "a"}},
                }
            ]
        }
    }
    docs: list[Mapping[str, Any]] = [
        pool(budgets=ALL),
        _namespace("data", "b"),
        _namespace("web", "b"),
        *_managed("big", "eight-cpu", ZA),
        _unmanaged("db-node", "2", ZB),
        bound("db-0", "db-node", "1500m", "1Gi", namespace="data", labels={"app": "db"}),
        bound(
            "web-0", "big", "1", "1Gi", namespace="web", labels={"app": "web"}, affinity=affinity
        ),
    ]
    out = disrupt(docs, CATALOG)
    assert commands(out) == []
    assert "no matching pod" in kept_reasons(out)["big"]


def _zonal_catalog() -> dict[str, Any]:
    """A 1-cpu type sold only in zone a, a 2-cpu type only in zone b, a 4-cpu type in both."""

    def entry(name: str, cpu: str, offers: dict[str, float]) -> dict[str, Any]:
        return {
            "name": name,
            "capacity": {"cpu": cpu, "memory": "8Gi", "pods": "50"},
            "offerings": [
                {"zone": z, "capacityType": "on-demand", "price": p} for z, p in offers.items()
            ],
        }

    return {
        "instanceTypes": [
            entry("one-cpu", "1", {ZA: 0.02}),
            entry("two-cpu", "2", {ZB: 0.05}),
            entry("four-cpu", "4", {ZA: 0.10, ZB: 0.10}),
        ]
    }


def _four_cpu(name: str, zone: str) -> list[Mapping[str, Any]]:
    return _managed(name, "four-cpu", zone, memory="8Gi")


def test_pods_that_must_share_a_zone_move_to_the_zone_where_they_fit_for_less() -> None:
    """Two pods that must share a zone (pod affinity to their own app): the first pod alone
    is cheapest in zone a, where both together need the 4-cpu type again; in zone b one
    2-cpu node holds both for half the price (before the fix: kept, the claim pinned to
    the first pod's cheapest zone)."""
    affinity = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [pod_term(ZONE, {"app": "web"})]
        }
    }
    docs: list[Mapping[str, Any]] = [pool(budgets=ALL), *_four_cpu("big", ZA)]
    docs += [
        bound(f"web-{i}", "big", "800m", "1Gi", labels={"app": "web"}, affinity=affinity)
        for i in range(2)
    ]
    out = disrupt(docs, _zonal_catalog())
    (cmd,) = commands(out)
    assert cmd["nodes"] == ["big"]
    (rep,) = cmd["replacements"]
    assert rep["zones"] == [ZB]
    assert rep["instanceTypes"] == ["two-cpu"]
    assert set(cmd["pods"].values()) == {"replacement-0"}


def test_pods_without_a_zonal_rule_are_not_moved_across_zones_for_nothing() -> None:
    """The same two pods without the affinity: two 1-cpu nodes in zone a would do, but a
    round launches one node; the 2-cpu node of zone b holds both for less than the 4-cpu
    node, found without any zone being pinned."""
    docs: list[Mapping[str, Any]] = [pool(budgets=ALL), *_four_cpu("big", ZA)]
    docs += [bound(f"web-{i}", "big", "800m", "1Gi", labels={"app": "web"}) for i in range(2)]
    out = disrupt(docs, _zonal_catalog())
    (cmd,) = commands(out)
    (rep,) = cmd["replacements"]
    assert rep["instanceTypes"] == ["two-cpu"]


def test_a_pod_with_zonal_anti_affinity_does_not_pin_its_companions_zone() -> None:
    """A pod that must avoid zones holding its own app pins the new claim's zone as a spread
    does: to the zone cheapest for it alone (a), where it and its companion need the 4-cpu
    type again; zone b holds both on a 2-cpu node."""
    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [pod_term(ZONE, {"app": "solo"})]
        }
    }
    docs: list[Mapping[str, Any]] = [
        pool(budgets=ALL),
        *_four_cpu("big", ZA),
        bound("solo-0", "big", "800m", "1Gi", labels={"app": "solo"}, affinity=anti),
        bound("plain-0", "big", "800m", "1Gi", labels={"app": "plain"}),
    ]
    out = disrupt(docs, _zonal_catalog())
    (cmd,) = commands(out)
    (rep,) = cmd["replacements"]
    assert rep["zones"] == [ZB]
    assert rep["instanceTypes"] == ["two-cpu"]


def test_a_merge_into_a_node_like_one_of_them_says_why_it_is_refused() -> None:
    """A four-cpu node and a two-cpu node in zone b whose pod must stay in zone b: one four-cpu
    node in zone b holds both pods for less than both nodes, but no less than the four-cpu
    node itself (Karpenter refuses such a merge: keeping that node and deleting the other
    would do). The kept reason said "$0.1500/h, not less than $0.2100/h", which is false."""
    docs: list[Mapping[str, Any]] = [pool(budgets=ALL)]
    docs += _managed("big", "four-cpu", ZA) + _managed("small", "two-cpu", ZB)
    docs.append(bound("w-big", "big", "2500m", "1Gi"))
    docs.append(bound("w-small", "small", "1200m", "1Gi", node_selector={ZONE: ZB}))
    out = disrupt(docs, CATALOG)
    assert commands(out) == []
    reason = kept_reasons(out)["big"]
    assert "not less than $0.2100/h" not in reason, reason
    assert "no cheaper than its own four-cpu node at $0.1500/h" in reason, reason


def test_a_replacement_pinned_to_spot_without_a_spot_offering_says_so() -> None:
    """A pool allowing spot and on-demand: an eight-cpu node whose one pod a two-cpu node
    holds, but the two-cpu type has no spot offering and the others' spot offerings cost
    more than the node. The replacement is pinned to spot (as Karpenter pins it), so the
    node is kept; the reason said the $0.06/h replacement cost "not less than $0.3300/h",
    which is false."""
    catalog = copy.deepcopy(CATALOG)
    for entry in catalog["instanceTypes"]:
        if entry["name"] != "two-cpu":
            dear = [
                {**o, "capacityType": "spot", "price": 3 * o["price"]} for o in entry["offerings"]
            ]
            entry["offerings"] += dear
    both = [{"key": CAPACITY_TYPE, "operator": "In", "values": ["on-demand", "spot"]}]
    docs: list[Mapping[str, Any]] = [pool(budgets=ALL, requirements=both)]
    docs += _managed("big", "eight-cpu", ZA)
    docs.append(bound("w", "big", "1", "1Gi"))
    out = disrupt(docs, catalog)
    assert commands(out) == []
    reason = kept_reasons(out)["big"]
    assert "not less than" not in reason, reason
    assert "launched as spot" in reason and "$0.0600/h" in reason, reason


def test_pods_that_follow_each_other_all_go_to_the_one_new_node() -> None:
    """An eight-cpu node in zone b runs two pods that must share a zone with each other and
    one pod that must stay in zone b; an unmanaged node in zone c has room for one pod. The
    solver fills that node first, the second pod follows the first into zone c and the zone-b
    pod needs its own node: "2 new nodes". All three on one four-cpu node in zone b is a
    valid, cheaper command (before the fix: kept)."""
    together = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [pod_term(ZONE, {"app": "pair"})]
        }
    }
    docs: list[Mapping[str, Any]] = [pool(budgets=ALL), *_managed("big", "eight-cpu", ZB)]
    docs.append(_unmanaged("own", "1500m", ZC))
    docs += [
        bound(f"pair-{i}", "big", "1", "1Gi", labels={"app": "pair"}, affinity=together)
        for i in range(2)
    ]
    docs.append(bound("local", "big", "1", "1Gi", node_selector={ZONE: ZB}))
    out = disrupt(docs, CATALOG)
    (cmd,) = commands(out)
    assert cmd["nodes"] == ["big"]
    (rep,) = cmd["replacements"]
    assert rep["instanceTypes"][0] == "four-cpu" and rep["zones"] == [ZB]
    assert set(cmd["pods"].values()) == {"replacement-0"}


# Moves the solver's own pod order or node order gets wrong (scheduling/disruption/
# pod_orders.py): the pods placed one by one, existing nodes first, where a pod placed
# first pins the others.


def test_a_plan_another_pod_could_spoil_on_a_live_cluster_is_not_taken() -> None:
    """An eight-cpu node runs a 1.6-cpu pod with no rule and a 1.5-cpu pod that needs a label
    only an unmanaged node with 1.6 cpu free carries. Largest first, the free pod takes that
    room and the other fits nowhere; the other way round the free pod would go to a
    two-cpu node. But the kube-scheduler may well put the free pod on the unmanaged node
    first, and the picky pod would stay Pending for good: that plan is refused."""
    docs: list[Mapping[str, Any]] = [pool(budgets=ALL), *_managed("big", "eight-cpu")]
    own = _unmanaged("own", "1600m")
    own["metadata"]["labels"]["example.com/fast"] = "true"
    docs.append(own)
    docs.append(bound("free", "big", "1600m", "1Gi"))
    docs.append(bound("picky", "big", "1500m", "1Gi", node_selector={"example.com/fast": "true"}))
    out = disrupt(docs, CATALOG)
    assert commands(out) == []
    assert "picky" in kept_reasons(out)["big"]


def test_a_pod_only_one_pool_takes_opens_the_claim_the_others_join() -> None:
    """A 2.5-cpu pod and a pod that needs the "team" pool's label leave an eight-cpu node.
    Largest first, the large pod opens a claim in the "general" pool (first by name) and
    the other needs the team pool's: two new nodes (before: kept). The labelled pod first
    opens the team claim, and the large pod joins it: one four-cpu node."""
    team = {"example.com/team": "x"}
    docs: list[Mapping[str, Any]] = [
        pool("general", budgets=ALL),
        pool("team", budgets=ALL, labels=team),
    ]
    docs += _managed("big", "eight-cpu", ZA, nodepool="general")
    docs.append(bound("wide", "big", "2500m", "1Gi"))
    docs.append(bound("picky", "big", "800m", "1Gi", node_selector=team))
    out = disrupt(docs, CATALOG)
    (cmd,) = commands(out)
    (rep,) = cmd["replacements"]
    assert rep["nodePool"] == "team" and rep["instanceTypes"][0] == "four-cpu"
    assert set(cmd["pods"].values()) == {"replacement-0"}


def test_pods_that_share_a_zone_follow_the_node_in_the_zone_where_the_rest_costs_less() -> None:
    """Two pods that must share a zone leave a four-cpu node; unmanaged nodes in zones b and
    a each have room for one. The solver puts the first on the zone-b node (first in node
    order) and the second then needs a two-cpu node in zone b; on the zone-a node, the
    second needs only a one-cpu node there (before: replaced by the dearer node)."""
    together = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [pod_term(ZONE, {"app": "pair"})]
        }
    }
    docs: list[Mapping[str, Any]] = [pool(budgets=ALL), *_four_cpu("big", ZB)]
    docs += [_unmanaged("own-b", "1", ZB), _unmanaged("own-a", "1", ZA)]
    docs += [
        bound(f"pair-{i}", "big", "800m", "1Gi", labels={"app": "pair"}, affinity=together)
        for i in range(2)
    ]
    out = disrupt(docs, _zonal_catalog())
    (cmd,) = commands(out)
    (rep,) = cmd["replacements"]
    assert rep["instanceTypes"] == ["one-cpu"] and rep["zones"] == [ZA]
    assert sorted(cmd["pods"].values()) == ["own-a", "replacement-0"]
    assert cmd["savingsPerHour"] == pytest.approx(0.10 - 0.02)


def test_a_valid_replacement_is_still_asked_in_the_other_zones() -> None:
    """Two pods that must share a zone on an eight-cpu node: the claim is pinned to zone a,
    cheapest for one pod, where both need the four-cpu type; that already saves, but zone b
    holds both on a two-cpu node for half of it (before: the four-cpu node)."""
    together = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [pod_term(ZONE, {"app": "pair"})]
        }
    }
    catalog = _zonal_catalog()
    catalog["instanceTypes"].append(
        {
            "name": "eight-cpu",
            "capacity": {"cpu": "8", "memory": "32Gi", "pods": "50"},
            "offerings": [{"zone": ZA, "capacityType": "on-demand", "price": 0.33}],
        }
    )
    docs: list[Mapping[str, Any]] = [pool(budgets=ALL), *_managed("big", "eight-cpu", ZA)]
    docs += [
        bound(f"pair-{i}", "big", "800m", "1Gi", labels={"app": "pair"}, affinity=together)
        for i in range(2)
    ]
    out = disrupt(docs, catalog)
    (cmd,) = commands(out)
    (rep,) = cmd["replacements"]
    assert rep["instanceTypes"][0] == "two-cpu" and rep["zones"] == [ZB]
    assert cmd["savingsPerHour"] == pytest.approx(0.33 - 0.05)


def test_a_pod_with_zonal_spread_and_affinity_follows_its_app_into_a_fuller_zone() -> None:
    """A pod with a zonal spread (maxSkew 2) and zonal affinity to its own app, whose other
    replica is in zone c on a node with no room: its new node must be in zone c, which the
    spread allows (2 against 0). Read first, the spread pinned the claim to an emptier zone,
    where the affinity then found no pod (before: kept, "not in a domain with a matching
    pod"); the affinity read first, the claim goes to zone c."""
    together = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [pod_term(ZONE, {"app": "web"})]
        }
    }
    skew = spread(ZONE, {"app": "web"}, max_skew=2)
    docs: list[Mapping[str, Any]] = [pool(budgets=ALL), *_managed("big", "eight-cpu", ZC)]
    docs.append(_unmanaged("own", "1", ZC))
    for name, where in (("web-0", "big"), ("web-1", "own")):
        docs.append(
            bound(name, where, "1", "1Gi", labels={"app": "web"}, affinity=together, spread=[skew])
        )
    out = disrupt(docs, CATALOG)
    (cmd,) = commands(out)
    assert cmd["nodes"] == ["big"]
    (rep,) = cmd["replacements"]
    assert rep["zones"] == [ZC] and rep["instanceTypes"][0] == "two-cpu"
    assert cmd["pods"] == {"default/web-0": "replacement-0"}


def test_a_spread_pod_may_take_a_cheaper_zone_within_its_skew() -> None:
    """A pod with a zonal spread (maxSkew 2) leaves a four-cpu node in zone a; its other
    replica runs in zone a on a full unmanaged node. Karpenter pins a new claim to the least
    filled zone (b, where the cheapest node is a two-cpu one); zone a holds 2 against 0,
    within the skew, and a one-cpu node there: asked in zone a, the replacement costs less
    (before: the two-cpu node in zone b)."""
    skew = spread(ZONE, {"app": "web"}, max_skew=2)
    docs: list[Mapping[str, Any]] = [pool(budgets=ALL), *_four_cpu("big", ZA)]
    docs.append(_unmanaged("own", "1", ZA))
    for name, where in (("web-0", "big"), ("web-1", "own")):
        docs.append(bound(name, where, "800m", "1Gi", labels={"app": "web"}, spread=[skew]))
    out = disrupt(docs, _zonal_catalog())
    (cmd,) = commands(out)
    (rep,) = cmd["replacements"]
    assert rep["zones"] == [ZA] and rep["instanceTypes"] == ["one-cpu"]
    assert cmd["savingsPerHour"] == pytest.approx(0.10 - 0.02)


def test_two_pools_claims_become_one_in_the_zone_where_both_pods_fit() -> None:
    """A 2.5-cpu pod and a pod that needs the "team" pool's label (with a zonal spread) leave
    an eight-cpu node. Largest first, the large pod opens a claim in the "general" pool and
    the other needs the team pool's: two new nodes. The labelled pod first opens the team
    claim in zone a, cheapest for it alone, where no type holds both; asked in zone b, that
    claim takes both on a four-cpu node (before: kept, "2 new nodes")."""

    def entry(name: str, cpu: str, offers: dict[str, float]) -> dict[str, Any]:
        return {
            "name": name,
            "capacity": {"cpu": cpu, "memory": "16Gi", "pods": "50"},
            "offerings": [
                {"zone": z, "capacityType": "on-demand", "price": p} for z, p in offers.items()
            ],
        }

    catalog = {
        "instanceTypes": [
            entry("one-cpu", "1", {ZA: 0.02}),
            entry("four-cpu", "4", {ZB: 0.10}),
            entry("eight-cpu", "8", {ZB: 0.33}),
        ]
    }
    big = node(
        "big",
        "8",
        "16Gi",
        "50",
        zone=ZB,
        instance_type="eight-cpu",
        nodepool="general",
        labels={"karpenter.sh/initialized": "true"},
    )
    big["metadata"]["creationTimestamp"] = LONG_AGO
    big["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    team = {"example.com/team": "x"}
    docs: list[Mapping[str, Any]] = [
        pool("general", budgets=ALL),
        pool("team", budgets=ALL, labels=team),
        big,
        claim_for(big),
        bound("wide", "big", "2500m", "1Gi"),
        bound(
            "picky",
            "big",
            "800m",
            "1Gi",
            labels={"app": "picky"},
            node_selector=team,
            spread=[spread(ZONE, {"app": "picky"})],
        ),
    ]
    out = disrupt(docs, catalog)
    (cmd,) = commands(out)
    (rep,) = cmd["replacements"]
    assert rep["nodePool"] == "team" and rep["zones"] == [ZB]
    assert rep["instanceTypes"] == ["four-cpu"]
    assert set(cmd["pods"].values()) == {"replacement-0"}


def test_a_spread_pod_joins_a_claim_in_the_zone_where_a_type_holds_it() -> None:
    """A 1.5-cpu pod that only the "team" pool takes, and a 1-cpu pod with a GPU and a zonal
    spread (its other replica in zone b), leave an eight-cpu GPU node. The first opens a team
    claim; the spread allows zones a and c, and a two-cpu type is cheapest in zone a, where
    no GPU type is sold: pinned there, the claim had no room for the pod, which opened a
    second claim ("2 new nodes"). Karpenter keeps both zones and lets the types that hold the
    pods decide: one GPU node in zone c (before the fix: kept)."""
    gpu = "example.com/gpu"

    def entry(name: str, cpu: str, offers: dict[str, float], extra: int = 0) -> dict[str, Any]:
        capacity = {"cpu": cpu, "memory": "16Gi", "pods": "50"}
        if extra:
            capacity[gpu] = str(extra)
        return {
            "name": name,
            "capacity": capacity,
            "offerings": [
                {"zone": z, "capacityType": "on-demand", "price": p} for z, p in offers.items()
            ],
        }

    catalog = {
        "instanceTypes": [
            entry("two-cpu", "2", {ZA: 0.04, ZC: 0.05}),
            entry("four-gpu", "4", {ZC: 0.25}, extra=1),
            entry("eight-gpu", "8", {ZB: 0.60}, extra=1),
        ]
    }
    team = {"example.com/team": "x"}
    big = node(
        "big",
        "8",
        "16Gi",
        "50",
        zone=ZB,
        instance_type="eight-gpu",
        nodepool="team",
        labels={"karpenter.sh/initialized": "true", **team},
    )
    big["metadata"]["creationTimestamp"] = LONG_AGO
    big["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    own = _unmanaged("own", "2", ZB)
    for body in (big, own):
        body["status"]["allocatable"][gpu] = "1"
        body["status"]["capacity"][gpu] = "1"
    skew = spread(ZONE, {"app": "accel"})
    docs: list[Mapping[str, Any]] = [
        pool("general", budgets=ALL),
        pool("team", budgets=ALL, labels=team),
        big,
        claim_for(big),
        own,
        bound("wide", "big", "1500m", "1Gi", node_selector=team),
    ]
    for name, where in (("accel-0", "big"), ("accel-1", "own")):
        docs.append(
            bound(
                name,
                where,
                "1",
                "1Gi",
                labels={"app": "accel"},
                spread=[skew],
                extra={gpu: "1"},
            )
        )
    out = disrupt(docs, catalog)
    (cmd,) = commands(out)
    assert cmd["nodes"] == ["big"]
    (rep,) = cmd["replacements"]
    assert rep["nodePool"] == "team" and rep["zones"] == [ZC]
    assert rep["instanceTypes"] == ["four-gpu"]
    assert cmd["pods"] == {"default/wide": "replacement-0", "default/accel-0": "replacement-0"}
    assert cmd["savingsPerHour"] == pytest.approx(0.60 - 0.25)
