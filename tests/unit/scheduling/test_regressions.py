"""Regression tests for solver bugs found while writing the scenario suite.

Each docstring names the Karpenter (or Kubernetes) behaviour relied on: other pods' preferred
anti-affinity does not block; nodeTaintsPolicy Ignore counts tainted pools' domains; bounded
integer ranges with NotIn values keep their size; claim requirements keep numeric bounds.
"""

from __future__ import annotations

from models.requirements import Requirement, Requirements
from tests.support.catalogs import ZA, ZB, ZC
from tests.support.labels import ARCH, CAPACITY_TYPE, GENERATION, ZONE
from tests.support.manifests import (
    node_affinity,
    nodepool,
    pod,
    preferred_pod_affinity,
    req,
    spread,
    taint,
)
from tests.support.plans import claim_of, plan, requirement, unschedulable, where

OD = [req(CAPACITY_TYPE, "In", "on-demand")]
AMD_OD = [*OD, req(ARCH, "In", "amd64")]
WEB = {"app": "web"}


def test_preferred_anti_affinity_of_other_pods_does_not_block() -> None:
    """Karpenter tracks no *inverse* preferred anti-affinity ("should violate preferred pod
    anti-affinity on zone (inverse)"): three pods with a preferred zonal anti-affinity against
    app=web, one per zone; the web pod must still schedule."""
    anti = preferred_pod_affinity(ZONE, {"security": "s2"}, anti=True)
    out = plan(
        [
            nodepool(requirements=AMD_OD),
            pod("z1", "2", "1Gi", affinity=anti, node_selector={ZONE: ZA}),
            pod("z2", "2", "1Gi", affinity=anti, node_selector={ZONE: ZB}),
            pod("z3", "2", "1Gi", affinity=anti, node_selector={ZONE: ZC}),
            pod("target", "100m", labels={"security": "s2"}),
        ]
    )
    assert unschedulable(out) == []
    assert where(out)["default/target"].startswith("claim")


def test_self_preferred_zonal_anti_affinity_relaxes_for_the_fourth_pod() -> None:
    """Four replicas with a *preferred* zonal anti-affinity against each other and three zones:
    the preference is honoured for three, and the fourth schedules anyway."""
    pods = [
        pod(f"w{i}", "100m", labels=WEB, affinity=preferred_pod_affinity(ZONE, WEB, anti=True))
        for i in range(4)
    ]
    out = plan([nodepool(requirements=AMD_OD), *pods])
    assert unschedulable(out) == []
    assert {c["zones"][0] for c in out["nodeClaims"][:3]} == {ZA, ZB, ZC}


def test_node_taints_policy_ignore_counts_domains_of_tainted_pools() -> None:
    """nodeTaintsPolicy Ignore (the default) counts domains of nodes whose taints the pod does not
    tolerate (Karpenter: "should balance pods across a label when discovered from the nodepool
    (NodeTaintsPolicy=ignore)"). Zone c exists only in a tainted pool, so it counts 0 and zones
    a and b can hold one pod each: the third pod waits."""
    out = plan(
        [
            nodepool("general", [*AMD_OD, req(ZONE, "In", ZA, ZB)]),
            nodepool("tainted", [*AMD_OD, req(ZONE, "In", ZC)], taints=[taint("dedicated")]),
            *[
                pod(f"w{i}", "100m", labels=WEB, spread=[spread(nodeTaintsPolicy="Ignore")])
                for i in range(3)
            ],
        ]
    )
    assert sorted(c["zones"][0] for c in out["nodeClaims"]) == [ZA, ZB]
    assert unschedulable(out) == ["default/w2"]


def test_node_taints_policy_defaults_to_ignore() -> None:
    """Same as above without naming the policy: Kubernetes defaults nodeTaintsPolicy to Ignore."""
    out = plan(
        [
            nodepool("general", [*AMD_OD, req(ZONE, "In", ZA, ZB)]),
            nodepool("tainted", [*AMD_OD, req(ZONE, "In", ZC)], taints=[taint("dedicated")]),
            *[pod(f"w{i}", "100m", labels=WEB, spread=[spread()]) for i in range(3)],
        ]
    )
    assert unschedulable(out) == ["default/w2"]


def test_bounded_range_with_not_in_outside_range_is_not_empty() -> None:
    """Gt 5, Lt 7, NotIn [9] allows 6. Requirement.__len__ subtracts every NotIn value, even
    ones outside the range, so the set looks empty and the pod is rejected against a NodePool
    that requires the key to exist."""
    aff = node_affinity(
        [req(GENERATION, "Gt", "5"), req(GENERATION, "Lt", "7"), req(GENERATION, "NotIn", "9")]
    )
    out = plan(
        [
            nodepool(requirements=[*OD, req(GENERATION, "Exists")]),
            pod("a", "1", "1Gi", affinity=aff),
        ]
    )
    assert claim_of(out, "default/a")["instanceTypes"] == ["m6g.large", "m6g.xlarge", "c6i.xlarge"]


def test_requirement_length_ignores_not_in_values_outside_bounds() -> None:
    r = (
        Requirement.create("k", "Gt", ["1"])
        .intersection(Requirement.create("k", "Lt", ["3"]))
        .intersection(Requirement.create("k", "NotIn", ["7"]))
    )
    assert r.has("2")
    assert len(r) == 1
    exists = Requirements([Requirement.create("k", "Exists")])
    assert exists.intersects(Requirements([r])) is None


def test_claim_requirements_keep_numeric_bounds() -> None:
    """A claim for a pod requiring generation Gt 4 and Lt 6 reports its generation requirement as
    plain ``Exists`` (Requirement.to_dict drops both bounds when both are set, and drops the bound
    of a NotIn+Gt requirement): the output then admits nodes the pod cannot use. Karpenter keeps at
    least the Gt bound; expected here: the reported requirement rejects 3 and 7 and admits 5."""
    aff = node_affinity([req(GENERATION, "Gt", "4"), req(GENERATION, "Lt", "6")])
    out = plan([nodepool(requirements=AMD_OD), pod("a", "1", "1Gi", affinity=aff)])
    r = requirement(claim_of(out, "default/a"), GENERATION)
    assert r is not None
    parsed = Requirement.create(r["key"], r["operator"], r.get("values", []))
    assert parsed.has("5")
    assert not parsed.has("3")
    assert not parsed.has("7")


def test_not_in_with_bound_round_trips_through_to_dict() -> None:
    r = Requirement.create("k", "NotIn", ["a"]).intersection(Requirement.create("k", "Gt", ["5"]))
    d = r.to_dict()
    parsed = Requirement.create(str(d["key"]), str(d["operator"]), d.get("values", []))  # type: ignore[arg-type]
    assert not parsed.has("4")
