"""PREFERENCE_POLICY: Respect (default) tries a pod's preferences first; Ignore plans as if
it stated none (preferred node affinity, preferred pod affinity and anti-affinity,
ScheduleAnyway spread), while its required terms still hold, as Karpenter's Ignore does."""

from __future__ import annotations

from models.policies import IGNORE, Policies
from tests.support.labels import CAPACITY_TYPE, HOSTNAME, INSTANCE_TYPE, ZONE
from tests.support.manifests import (
    nodepool,
    pod,
    pod_affinity,
    preferred_node_affinity,
    preferred_pod_affinity,
    req,
    spread,
)
from tests.support.plans import claim_of, plan

POOL = nodepool(requirements=[req(CAPACITY_TYPE, "In", "on-demand")])
IGNORING = Policies(preference=IGNORE)
WEB = {"app": "web"}


def test_preferred_node_affinity_is_followed_or_ignored() -> None:
    prefers_m5 = pod(
        "a",
        "1",
        "1Gi",
        affinity=preferred_node_affinity((50, [req(INSTANCE_TYPE, "In", "m5.large")])),
    )
    respected = claim_of(plan([POOL, prefers_m5]), "default/a")
    assert respected["instanceTypes"] == ["m5.large"]
    ignored = claim_of(plan([POOL, prefers_m5], policies=IGNORING), "default/a")
    plain = claim_of(plan([POOL, pod("a", "1", "1Gi")]), "default/a")
    assert ignored["instanceTypes"] == plain["instanceTypes"]  # as with no preference
    assert len(ignored["instanceTypes"]) > 1


def test_preferred_anti_affinity_is_ignored() -> None:
    pods = [
        pod(
            f"w{i}",
            "100m",
            "128Mi",
            labels=WEB,
            affinity=preferred_pod_affinity(HOSTNAME, WEB, anti=True),
        )
        for i in range(3)
    ]
    assert len(plan([POOL, *pods])["nodeClaims"]) == 3
    assert len(plan([POOL, *pods], policies=IGNORING)["nodeClaims"]) == 1


def test_schedule_anyway_spread_is_ignored_but_do_not_schedule_holds() -> None:
    soft = [
        pod(f"s{i}", "100m", "128Mi", labels=WEB, spread=[spread(ZONE, WEB, when="ScheduleAnyway")])
        for i in range(3)
    ]
    respected = plan([POOL, *soft])
    assert sorted(c["zones"][0] for c in respected["nodeClaims"]) == [
        "us-east-1a",
        "us-east-1b",
        "us-east-1c",
    ]
    assert len(plan([POOL, *soft], policies=IGNORING)["nodeClaims"]) == 1
    hard = [pod(f"h{i}", "100m", "128Mi", labels=WEB, spread=[spread(ZONE, WEB)]) for i in range(3)]
    assert len(plan([POOL, *hard], policies=IGNORING)["nodeClaims"]) == 3


def test_required_anti_affinity_still_holds_under_ignore() -> None:
    pods = [
        pod(f"r{i}", "100m", "128Mi", labels=WEB, affinity=pod_affinity(HOSTNAME, WEB, anti=True))
        for i in range(2)
    ]
    assert len(plan([POOL, *pods], policies=IGNORING)["nodeClaims"]) == 2
