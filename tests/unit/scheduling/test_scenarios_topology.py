"""Topology: spread (zone, hostname, capacity type, minDomains, policies, matchLabelKeys), pod
affinity and anti-affinity (pending and existing pods), host ports, volume topology."""

from __future__ import annotations

from collections import Counter
from typing import Any

from tests.support.catalogs import ZA, ZB, ZC, ZONES, od_price, spot_price
from tests.support.labels import ARCH, CAPACITY_TYPE, HOSTNAME, ZONE
from tests.support.manifests import (
    node,
    node_affinity,
    nodepool,
    pod,
    pod_affinity,
    pv,
    pvc,
    req,
    spread,
    storage_class,
    taint,
)
from tests.support.plans import claim_of, plan, reason, requirement, where

OD = [req(CAPACITY_TYPE, "In", "on-demand")]
AMD_OD = [*OD, req(ARCH, "In", "amd64")]
WEB = {"app": "web"}


def zone_counts(out: dict[str, Any], keys: list[str] | None = None) -> Counter[str]:
    """Pods per zone over new claims (each claim must be pinned to one zone)."""
    counts: Counter[str] = Counter()
    for c in out["nodeClaims"]:
        pods = [p for p in c["pods"] if keys is None or p in keys]
        if pods:
            assert len(c["zones"]) == 1, c
            counts[c["zones"][0]] += len(pods)
    return counts


# ------------------------------------------------------------------------------ spread


def test_zonal_spread_max_skew_1_over_three_zones() -> None:
    pods = [pod(f"w{i}", "100m", labels=WEB, spread=[spread()]) for i in range(6)]
    out = plan([nodepool(requirements=AMD_OD), *pods])
    assert zone_counts(out) == {ZA: 2, ZB: 2, ZC: 2}
    assert len(out["nodeClaims"]) == 3
    # Every claim is pinned to exactly one zone and priced there.
    for c in out["nodeClaims"]:
        assert requirement(c, ZONE) == {"key": ZONE, "operator": "In", "values": c["zones"]}
        assert c["price"] == od_price("c5.large", c["zones"][0])


def test_zonal_spread_first_claims_take_cheapest_zones_in_order() -> None:
    pods = [pod(f"w{i}", "100m", labels=WEB, spread=[spread()]) for i in range(3)]
    out = plan([nodepool(requirements=AMD_OD), *pods])
    assert [c["zones"] for c in out["nodeClaims"]] == [[ZA], [ZB], [ZC]]


def test_zonal_spread_counts_existing_pods() -> None:
    # Zone a already has one matching pod (on a full node): new pods go to b and c first.
    out = plan(
        [
            nodepool(requirements=AMD_OD),
            node("n1", "1", "16Gi", zone=ZA),
            pod("old", "1", node_name="n1", labels=WEB),
            *[pod(f"w{i}", "100m", labels=WEB, spread=[spread()]) for i in range(2)],
        ]
    )
    assert zone_counts(out) == {ZB: 1, ZC: 1}


def test_zonal_spread_limited_to_nodepool_zones() -> None:
    pods = [pod(f"w{i}", "100m", labels=WEB, spread=[spread()]) for i in range(4)]
    out = plan([nodepool(requirements=[*AMD_OD, req(ZONE, "In", ZA, ZB)]), *pods])
    assert zone_counts(out) == {ZA: 2, ZB: 2}


def test_hostname_spread_puts_one_pod_per_node() -> None:
    pods = [pod(f"w{i}", "100m", labels=WEB, spread=[spread(HOSTNAME)]) for i in range(3)]
    out = plan([nodepool(requirements=AMD_OD), *pods])
    assert [len(c["pods"]) for c in out["nodeClaims"]] == [1, 1, 1]


def test_hostname_spread_avoids_existing_node_with_matching_pod() -> None:
    out = plan(
        [
            nodepool(requirements=AMD_OD),
            node("n1", "8", "32Gi"),
            pod("old", "100m", node_name="n1", labels=WEB),
            pod("w", "100m", labels=WEB, spread=[spread(HOSTNAME)]),
        ]
    )
    assert where(out) == {"default/w": "claim0"}


def test_capacity_type_spread() -> None:
    pods = [pod(f"w{i}", "100m", labels=WEB, spread=[spread(CAPACITY_TYPE)]) for i in range(2)]
    out = plan([nodepool(requirements=[req(ARCH, "In", "amd64")]), *pods])
    assert sorted(c["capacityTypes"] for c in out["nodeClaims"]) == [["on-demand"], ["spot"]]
    prices = {c["capacityTypes"][0]: c["price"] for c in out["nodeClaims"]}
    assert prices == {"spot": spot_price("c5.large"), "on-demand": od_price("c5.large")}


def test_min_domains_greater_than_zones_allows_one_pod_per_zone() -> None:
    # 3 zones < minDomains 4: the global minimum counts as 0, so each zone holds at most 1.
    pods = [pod(f"w{i}", "100m", labels=WEB, spread=[spread(minDomains=4)]) for i in range(4)]
    out = plan([nodepool(requirements=AMD_OD), *pods])
    assert zone_counts(out) == {ZA: 1, ZB: 1, ZC: 1}
    assert "topology spread" in reason(out, "default/w3")


def test_min_domains_satisfied_behaves_like_plain_spread() -> None:
    pods = [pod(f"w{i}", "100m", labels=WEB, spread=[spread(minDomains=3)]) for i in range(5)]
    out = plan([nodepool(requirements=AMD_OD), *pods])
    assert sorted(zone_counts(out).values()) == [1, 2, 2]
    assert out["unschedulable"] == []


def test_node_affinity_policy_honor_spreads_within_allowed_zones() -> None:
    aff = node_affinity([req(ZONE, "In", ZA, ZB)])
    pods = [pod(f"w{i}", "100m", labels=WEB, affinity=aff, spread=[spread()]) for i in range(4)]
    out = plan([nodepool(requirements=AMD_OD), *pods])
    assert zone_counts(out) == {ZA: 2, ZB: 2}


def test_node_affinity_policy_ignore_counts_zones_the_pod_cannot_use() -> None:
    aff = node_affinity([req(ZONE, "In", ZA, ZB)])
    pods = [
        pod(f"w{i}", "100m", labels=WEB, affinity=aff, spread=[spread(nodeAffinityPolicy="Ignore")])
        for i in range(3)
    ]
    out = plan([nodepool(requirements=AMD_OD), *pods])
    # Zone c counts 0 forever, so a and b hold one pod each.
    assert zone_counts(out) == {ZA: 1, ZB: 1}
    assert "topology spread" in reason(out, "default/w2")


def test_node_taints_policy_honor_skips_domains_of_untolerated_pools() -> None:
    docs = [
        nodepool("general", [*AMD_OD, req(ZONE, "In", ZA, ZB)]),
        nodepool("tainted", [*AMD_OD, req(ZONE, "In", ZC)], taints=[taint("dedicated")]),
        *[
            pod(f"w{i}", "100m", labels=WEB, spread=[spread(nodeTaintsPolicy="Honor")])
            for i in range(4)
        ],
    ]
    out = plan(docs)
    assert zone_counts(out) == {ZA: 2, ZB: 2}
    assert all(c["nodePool"] == "general" for c in out["nodeClaims"])


def test_match_label_keys_spread_only_among_same_revision() -> None:
    old = [pod(f"old{i}", "100m", node_name="n1", labels={**WEB, "hash": "old"}) for i in range(2)]
    new = [
        pod(
            f"w{i}", "100m", labels={**WEB, "hash": "new"}, spread=[spread(matchLabelKeys=["hash"])]
        )
        for i in range(3)
    ]
    out = plan([nodepool(requirements=AMD_OD), node("n1", "8", "32Gi", zone=ZA), *old, *new])
    # The old revision in zone a does not count: one new pod per zone, zone a on n1.
    assert out["existingNodes"] == [{"name": "n1", "pods": ["default/w0"]}]
    assert zone_counts(out) == {ZB: 1, ZC: 1}


def test_without_match_label_keys_old_revision_counts() -> None:
    old = [pod(f"old{i}", "100m", node_name="n1", labels={**WEB, "hash": "old"}) for i in range(2)]
    new = [pod(f"w{i}", "100m", labels={**WEB, "hash": "new"}, spread=[spread()]) for i in range(3)]
    out = plan([nodepool(requirements=AMD_OD), node("n1", "8", "32Gi", zone=ZA), *old, *new])
    assert out["existingNodes"] == []
    assert sum(zone_counts(out).values()) == 3
    assert ZA not in zone_counts(out)


def test_spread_selector_only_counts_matching_pods() -> None:
    # 'other' pods do not match app=web; they do not affect the spread.
    out = plan(
        [
            nodepool(requirements=AMD_OD),
            node("n1", "1", "16Gi", zone=ZA),
            pod("busy", "1", node_name="n1", labels={"app": "other"}),
            *[pod(f"w{i}", "100m", labels=WEB, spread=[spread()]) for i in range(3)],
        ]
    )
    assert zone_counts(out) == {ZA: 1, ZB: 1, ZC: 1}


# ------------------------------------------------------------------- pod (anti-)affinity


def test_hostname_affinity_to_pending_pod_shares_its_claim() -> None:
    out = plan(
        [
            nodepool(requirements=AMD_OD),
            pod("db", "1", "1Gi", labels={"app": "db"}),
            pod("web", "100m", labels=WEB, affinity=pod_affinity(HOSTNAME, {"app": "db"})),
        ]
    )
    assert where(out) == {"default/db": "claim0", "default/web": "claim0"}


def test_zonal_affinity_to_existing_pod_pins_its_zone() -> None:
    out = plan(
        [
            nodepool(requirements=AMD_OD),
            node("n1", "1", "16Gi", zone=ZB),
            pod("db", "1", node_name="n1", labels={"app": "db"}),
            pod("web", "1", "1Gi", labels=WEB, affinity=pod_affinity(ZONE, {"app": "db"})),
        ]
    )
    claim = claim_of(out, "default/web")
    assert claim["zones"] == [ZB]
    assert claim["price"] == od_price("c5.large", ZB)


def test_zonal_affinity_to_zone_constrained_pending_pod() -> None:
    out = plan(
        [
            nodepool(requirements=AMD_OD),
            pod("db", "2", "1Gi", labels={"app": "db"}, node_selector={ZONE: ZC}),
            *[
                pod(f"w{i}", "1", "1Gi", labels=WEB, affinity=pod_affinity(ZONE, {"app": "db"}))
                for i in range(3)
            ],
        ]
    )
    assert out["unschedulable"] == []
    assert {z for c in out["nodeClaims"] for z in c["zones"]} == {ZC}


def test_zonal_affinity_to_unconstrained_pending_pod_is_unschedulable() -> None:
    # As Karpenter: the target's zone is not decided yet, so the affinity cannot be met.
    out = plan(
        [
            nodepool(requirements=AMD_OD),
            pod("db", "1", "1Gi", labels={"app": "db"}),
            pod("web", "100m", labels=WEB, affinity=pod_affinity(ZONE, {"app": "db"})),
        ]
    )
    assert where(out)["default/db"] == "claim0"
    assert "pod affinity" in reason(out, "default/web")


def test_hostname_affinity_to_pod_on_full_existing_node_is_unschedulable() -> None:
    out = plan(
        [
            nodepool(requirements=AMD_OD),
            node("n1", "1", "16Gi"),
            pod("db", "1", node_name="n1", labels={"app": "db"}),
            pod("web", "1", "1Gi", labels=WEB, affinity=pod_affinity(HOSTNAME, {"app": "db"})),
        ]
    )
    assert "pod affinity" in reason(out, "default/web")


def test_affinity_to_non_existent_pod_is_unschedulable() -> None:
    out = plan(
        [
            nodepool(requirements=AMD_OD),
            pod("a", "100m", affinity=pod_affinity(HOSTNAME, {"app": "none"})),
        ]
    )
    assert "affinity" in reason(out, "default/a")


def test_hostname_anti_affinity_one_pod_per_node() -> None:
    pods = [
        pod(f"w{i}", "100m", labels=WEB, affinity=pod_affinity(HOSTNAME, WEB, anti=True))
        for i in range(3)
    ]
    out = plan([nodepool(requirements=AMD_OD), *pods])
    assert [c["pods"] for c in out["nodeClaims"]] == [
        ["default/w0"],
        ["default/w1"],
        ["default/w2"],
    ]


def test_anti_affinity_is_per_namespace_by_default() -> None:
    out = plan(
        [
            nodepool(requirements=AMD_OD),
            pod("a", "100m", labels=WEB, affinity=pod_affinity(HOSTNAME, WEB, anti=True)),
            pod(
                "b",
                "100m",
                namespace="other",
                labels=WEB,
                affinity=pod_affinity(HOSTNAME, WEB, anti=True),
            ),
        ]
    )
    assert where(out) == {"default/a": "claim0", "other/b": "claim0"}


def test_zonal_anti_affinity_distinct_zones_fourth_pod_unschedulable() -> None:
    pods = [
        pod(f"w{i}", "100m", labels=WEB, affinity=pod_affinity(ZONE, WEB, anti=True))
        for i in range(4)
    ]
    out = plan([nodepool(requirements=AMD_OD), *pods])
    assert [c["zones"] for c in out["nodeClaims"]] == [[ZA], [ZB], [ZC]]
    assert "anti-affinity" in reason(out, "default/w3")


def test_zonal_anti_affinity_against_unpinned_pod_blocks_every_zone() -> None:
    # Karpenter's "Schrödinger" case: the target's zone is open, so every zone is blocked.
    out = plan(
        [
            nodepool(requirements=AMD_OD),
            pod("t", "2", "1Gi", labels={"s": "2"}),
            pod("aff", "100m", affinity=pod_affinity(ZONE, {"s": "2"}, anti=True)),
        ]
    )
    assert where(out)["default/t"] == "claim0"
    assert "anti-affinity" in reason(out, "default/aff")


def test_existing_pod_zonal_anti_affinity_blocks_its_zone() -> None:
    out = plan(
        [
            nodepool(requirements=AMD_OD),
            node("n1", "4", "16Gi", zone=ZA),
            pod(
                "guard",
                "100m",
                node_name="n1",
                labels={"app": "guard"},
                affinity=pod_affinity(ZONE, WEB, anti=True),
            ),
            pod("w", "1", "1Gi", labels=WEB),
        ]
    )
    claim = claim_of(out, "default/w")  # n1 has room but is in the blocked zone
    assert ZA not in claim["zones"]
    assert ZA not in str(requirement(claim, ZONE))
    assert claim["price"] == od_price("c5.large", ZB)


def test_existing_pod_hostname_anti_affinity_blocks_its_node() -> None:
    out = plan(
        [
            nodepool(requirements=AMD_OD),
            node("n1", "4", "16Gi"),
            node("n2", "4", "16Gi"),
            pod(
                "guard",
                "100m",
                node_name="n1",
                labels={"app": "guard"},
                affinity=pod_affinity(HOSTNAME, WEB, anti=True),
            ),
            pod("w", "1", "1Gi", labels=WEB),
        ]
    )
    assert out["existingNodes"] == [{"name": "n2", "pods": ["default/w"]}]


def test_zonal_anti_affinity_with_existing_matching_pod() -> None:
    pods = [
        pod(f"w{i}", "100m", labels=WEB, affinity=pod_affinity(ZONE, WEB, anti=True))
        for i in range(3)
    ]
    out = plan(
        [
            nodepool(requirements=AMD_OD),
            node("n1", "1", "16Gi", zone=ZB),
            pod("old", "1", node_name="n1", labels=WEB),
            *pods,
        ]
    )
    assert sorted(z for c in out["nodeClaims"] for z in c["zones"]) == [ZA, ZC]
    assert len(out["unschedulable"]) == 1


# ---------------------------------------------------------------------------- host ports


def test_pods_with_same_host_port_never_share_a_node() -> None:
    out = plan(
        [
            nodepool(requirements=AMD_OD),
            pod("a", "100m", host_port=8080),
            pod("b", "100m", host_port=8080),
            pod("c", "100m", host_port=9090),
        ]
    )
    loc = where(out)
    assert loc["default/a"] != loc["default/b"]
    assert len(out["nodeClaims"]) == 2


def test_host_port_in_use_on_existing_node() -> None:
    out = plan(
        [
            nodepool(requirements=AMD_OD),
            node("n1"),
            pod("x", "100m", node_name="n1", host_port=8080),
            pod("a", "100m", host_port=8080),
            pod("b", "100m", host_port=9090),
        ]
    )
    assert where(out) == {"default/a": "claim0", "default/b": "node:n1"}


# ------------------------------------------------------------------------------ volumes


def test_bound_pv_zone_pins_the_claim() -> None:
    out = plan(
        [
            nodepool(requirements=AMD_OD),
            pvc("data", volume_name="pv1"),
            pv("pv1", ZB),
            pod("a", "1", "1Gi", pvcs=["data"]),
        ]
    )
    claim = claim_of(out, "default/a")
    assert claim["zones"] == [ZB]
    assert claim["price"] == od_price("c5.large", ZB)


def test_bound_pv_with_beta_zone_key() -> None:
    out = plan(
        [
            nodepool(requirements=AMD_OD),
            pvc("data", volume_name="pv1"),
            pv("pv1", ZC, key="failure-domain.beta.kubernetes.io/zone"),
            pod("a", "1", "1Gi", pvcs=["data"]),
        ]
    )
    assert claim_of(out, "default/a")["zones"] == [ZC]


def test_bound_pv_zone_keeps_pod_off_existing_node_elsewhere() -> None:
    out = plan(
        [
            nodepool(requirements=AMD_OD),
            node("n1", zone=ZA),
            pvc("data", volume_name="pv1"),
            pv("pv1", ZC),
            pod("a", "1", "1Gi", pvcs=["data"]),
        ]
    )
    assert claim_of(out, "default/a")["zones"] == [ZC]


def test_storage_class_allowed_topologies_limit_zones() -> None:
    out = plan(
        [
            nodepool(requirements=AMD_OD),
            pvc("data", storage_class="gp3"),
            storage_class("gp3", [ZB, ZC]),
            pod("a", "1", "1Gi", pvcs=["data"]),
        ]
    )
    claim = claim_of(out, "default/a")
    assert ZA not in claim["zones"]
    assert claim["price"] == od_price("c5.large", ZB)


def test_missing_pvc_is_unschedulable() -> None:
    out = plan([nodepool(requirements=AMD_OD), pod("a", "1", "1Gi", pvcs=["data"])])
    assert out["nodeClaims"] == []
    assert "data" in reason(out, "default/a") and "not found" in reason(out, "default/a")


def test_missing_storage_class_is_unschedulable() -> None:
    out = plan(
        [
            nodepool(requirements=AMD_OD),
            pvc("data", storage_class="nope"),
            pod("a", "1", "1Gi", pvcs=["data"]),
        ]
    )
    assert "storageclass" in reason(out, "default/a")


def test_zonal_spread_with_all_zones() -> None:
    # Sanity: spread claims list zones from the catalog's three zones only.
    pods = [pod(f"w{i}", "100m", labels=WEB, spread=[spread()]) for i in range(3)]
    out = plan([nodepool(requirements=AMD_OD), *pods])
    assert {c["zones"][0] for c in out["nodeClaims"]} == set(ZONES)
