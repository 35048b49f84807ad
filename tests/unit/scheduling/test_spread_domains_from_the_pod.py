"""Which domains a zonal spread counts (``nodeAffinityPolicy: Honor``): every domain the
pod's node selector and required node-affinity terms allow, all terms ORed, as the
kube-scheduler and Karpenter count them; not the one term the solver is trying, and not
narrowed to the pod's volume zone. Found by the oracle property tests once their generator
combined several terms, and zonal volumes, with zonal spread."""

from __future__ import annotations

from tests.support.catalogs import ZA, ZB, ZC
from tests.support.labels import ARCH, CAPACITY_TYPE, ZONE
from tests.support.manifests import node, node_affinity, nodepool, pod, pv, pvc, req, spread
from tests.support.plans import plan, where

AMD_OD = [req(CAPACITY_TYPE, "In", "on-demand"), req(ARCH, "In", "amd64")]
WEB = {"app": "web"}


def _full_nodes_with_one_web_pod_in_zone_a() -> list[dict[str, object]]:
    return [
        node("full-a", "1", "4Gi", zone=ZA),
        node("full-b", "1", "4Gi", zone=ZB),
        node("full-c", "1", "4Gi", zone=ZC),
        pod("old", "1", node_name="full-a", labels=WEB),
        pod("filler-b", "1", node_name="full-b"),
        pod("filler-c", "1", node_name="full-c"),
    ]


def test_a_pod_pinned_by_its_volume_still_counts_every_zone() -> None:
    docs = [
        nodepool(requirements=AMD_OD),
        *_full_nodes_with_one_web_pod_in_zone_a(),
        pv("vol-a", ZA),
        {**pvc("data", volume_name="vol-a")},
        pod("new", "100m", labels=WEB, spread=[spread()], pvcs=["data"]),
    ]
    out = plan(docs)
    # Zone a would hold 2 while zones b and c (eligible, with nodes) hold 0: skew 2 > 1.
    assert where(out)["default/new"] == "unschedulable", out["nodeClaims"]


def test_spread_domains_are_those_of_all_required_terms_ored() -> None:
    terms = node_affinity([req(ZONE, "In", ZA)], [req(ZONE, "In", ZB)])
    docs = [
        nodepool(requirements=AMD_OD),
        *_full_nodes_with_one_web_pod_in_zone_a(),
        pod("new", "100m", labels=WEB, affinity=terms, spread=[spread()]),
    ]
    out = plan(docs)
    loc = where(out)["default/new"]
    assert loc.startswith("claim"), loc
    (claim,) = out["nodeClaims"]
    # Zone a (the first term) is one over zone b (the second term's, counting 0): zone b.
    assert claim["zones"] == [ZB]
