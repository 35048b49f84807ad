"""NodePool limits as Karpenter applies them (docs/scheduling.md, "NodePool limits"): a new
claim lists only types that fit in what the limits leave, an open claim holds back its
largest type, pods fill that held-back room before they are refused, only limited resources
are counted, and no plan ever exceeds a limit."""

from __future__ import annotations

from typing import Any

import pytest

from models.quantity import parse_quantity
from tests.support.catalogs import ZONES, catalog
from tests.support.labels import ARCH, CAPACITY_TYPE, HOSTNAME
from tests.support.manifests import nodepool, pod, pod_affinity, req
from tests.support.plans import plan, reason, unschedulable

OD = [req(CAPACITY_TYPE, "In", "on-demand")]
SMALL = ["c5.large", "m5.large", "c6i.xlarge", "m5.xlarge", "m5.2xlarge"]


def _big(name: str, cpu: int, memory: str, price: float) -> dict[str, Any]:
    """A large on-demand amd64 type in the catalog format."""
    return {
        "name": name,
        "capacity": {"cpu": str(cpu), "memory": memory, "pods": "737"},
        "requirements": [{"key": ARCH, "operator": "In", "values": ["amd64"]}],
        "offerings": [{"zone": z, "capacityType": "on-demand", "price": price} for z in ZONES],
    }


def _small_and_huge() -> dict[str, Any]:
    """2-8 cpu types and 96/192 cpu ones, priced per cpu like the small ones."""
    cat = catalog(SMALL)
    cat["instanceTypes"] += [
        _big("m7i.24xlarge", 96, "384Gi", 4.84),
        _big("m7i.48xlarge", 192, "768Gi", 9.68),
    ]
    return cat


def _high_memory() -> dict[str, Any]:
    """Small types plus EC2's high-memory sizes (u-*, x2iedn, ... down to 32 GiB)."""
    cat = catalog(["c5.large", "m5.large", "c6i.xlarge", "m5.xlarge"])
    for i, gib in enumerate((24576, 18432, 12288, 9216, 6144, 3904, 2048, 1024, 512, 256, 64)):
        cat["instanceTypes"].append(_big(f"mem{i}.metal", max(4, gib // 64), f"{gib}Gi", gib / 50))
    return cat


def _capacity(cat: dict[str, Any], name: str, resource: str) -> int:
    entry = next(t for t in cat["instanceTypes"] if t["name"] == name)
    return parse_quantity(entry["capacity"][resource])


def _held(out: dict[str, Any], cat: dict[str, Any], resource: str) -> int:
    """What the plan's claims can take from a limit: each claim's largest listed type."""
    return sum(
        max(_capacity(cat, n, resource) for n in c["instanceTypes"]) for c in out["nodeClaims"]
    )


def test_pods_fill_the_room_a_claim_holds_back_before_any_is_refused() -> None:
    # 40 pods of 2 cpu need about 80 cpu; the limit is 100. The first claim lists the 96-cpu
    # type and so holds back 96 cpu, leaving 4: every later pod must go on that claim (it
    # may grow to 96 cpu, as Karpenter's claim does), not be refused for the limit.
    cat = _small_and_huge()
    out = plan([nodepool(requirements=OD, limits={"cpu": "100"}), *_pods(40, "2", "2Gi")], cat)
    assert unschedulable(out) == []
    assert _held(out, cat, "cpu") <= parse_quantity("100")


def test_a_limit_far_above_the_need_refuses_nothing_with_high_memory_types() -> None:
    # 200 single-pod claims (hostname anti-affinity) under a cpu limit of 10,000,000: only cpu
    # is limited, so the 24 TiB types each claim lists must not use up a memory budget.
    anti = pod_affinity(HOSTNAME, {"app": "db"}, anti=True)
    pods = [pod(f"db{i}", "1", "1Gi", labels={"app": "db"}, affinity=anti) for i in range(200)]
    out = plan([nodepool(requirements=OD, limits={"cpu": "10000000"}), *pods], _high_memory())
    assert unschedulable(out) == []
    assert len(out["nodeClaims"]) == 200


def test_a_limit_above_what_the_claims_hold_back_changes_nothing() -> None:
    # About 7 claims, each listing the 192-cpu type: 10,000 cpu never narrows a new claim.
    docs = [*_pods(30, "1500m", "3Gi"), *_pods(30, "250m", "1Gi", prefix="s")]
    free = plan([nodepool(requirements=OD), *docs], _small_and_huge())
    limited = plan([nodepool(requirements=OD, limits={"cpu": "10000"}), *docs], _small_and_huge())
    assert limited == free


def test_a_limit_beyond_64_bit_milli_units_is_accepted_and_never_binds() -> None:
    # Karpenter's own scheduling benchmark NodePool limits memory to 10000000Gi (1.07e19
    # milli-bytes): valid in Kubernetes, so a plan, the same as without the limit.
    docs = [*_pods(30, "1500m", "3Gi"), *_pods(30, "250m", "1Gi", prefix="s")]
    free = plan([nodepool(requirements=OD), *docs], _small_and_huge())
    huge = {"cpu": "10000", "memory": "10000000Gi"}
    limited = plan([nodepool(requirements=OD, limits=huge), *docs], _small_and_huge())
    assert limited == free


def test_once_a_limit_binds_claims_hold_back_only_their_target_size() -> None:
    # Same pods, 1,000 cpu: the fifth claim's 192-cpu type no longer fits in what is left.
    # From then on each claim lists (and holds back) only types no larger than its target,
    # so the plan is the one made without limits: same nodes, same price.
    cat = _small_and_huge()
    docs = [*_pods(30, "1500m", "3Gi"), *_pods(30, "250m", "1Gi", prefix="s")]
    free = plan([nodepool(requirements=OD), *docs], cat)
    out = plan([nodepool(requirements=OD, limits={"cpu": "1000"}), *docs], cat)
    assert unschedulable(out) == []
    assert [c["pods"] for c in out["nodeClaims"]] == [c["pods"] for c in free["nodeClaims"]]
    assert out["cost"] == free["cost"]
    assert _held(out, cat, "cpu") <= parse_quantity("1000")


def test_an_open_claim_grows_within_the_limit_when_no_new_claim_fits() -> None:
    # 6 cpu: the first 3-cpu pod opens a claim aimed at a 4-cpu type; the second leaves no
    # room for a new claim (2 cpu left), so the open claim takes it on the 6-cpu type, as
    # Karpenter's claim (listing both) would.
    cat = catalog(["c5.large", "c6i.xlarge"])
    cat["instanceTypes"].append(_big("x6.large", 6, "24Gi", 0.5))
    out = plan([nodepool(requirements=OD, limits={"cpu": "6"}), *_pods(2, "3", "1Gi")], cat)
    assert unschedulable(out) == []
    assert [c["instanceTypes"] for c in out["nodeClaims"]] == [["x6.large"]]


@pytest.mark.parametrize(
    ("resource", "limit", "pods"),
    [
        ("cpu", "20", 40),
        ("cpu", "100", 80),
        ("cpu", "101", 120),
        ("memory", "64Gi", 40),
        ("memory", "500Gi", 100),
    ],
)
def test_no_plan_exceeds_a_limit(resource: str, limit: str, pods: int) -> None:
    cat = _small_and_huge()
    out = plan([nodepool(requirements=OD, limits={resource: limit}), *_pods(pods, "2", "4Gi")], cat)
    assert _held(out, cat, resource) <= parse_quantity(limit)
    for p in unschedulable(out):
        assert "limits would be exceeded" in reason(out, p)


def test_nodes_limit_with_room_left_on_the_open_claim() -> None:
    # One node allowed: every pod goes on that node, grown past its target, until it is full.
    cat = _small_and_huge()
    out = plan([nodepool(requirements=OD, limits={"nodes": "1"}), *_pods(60, "2", "2Gi")], cat)
    assert len(out["nodeClaims"]) == 1
    assert len(out["nodeClaims"][0]["pods"]) + len(unschedulable(out)) == 60
    assert len(out["nodeClaims"][0]["pods"]) >= 40


def test_growing_a_claim_keeps_hostname_anti_affinity() -> None:
    # The open claim holds back 96 cpu, but pods that must not share a node still each get
    # a node of their own, within the limit, or are refused.
    cat = _small_and_huge()
    anti = pod_affinity(HOSTNAME, {"app": "a"}, anti=True)
    pods = [pod(f"a{i}", "2", "2Gi", labels={"app": "a"}, affinity=anti) for i in range(3)]
    out = plan([nodepool(requirements=OD, limits={"cpu": "100"}), *pods], cat)
    claims = [c for c in out["nodeClaims"] if c["pods"]]
    assert all(len(c["pods"]) == 1 for c in claims)
    assert _held(out, cat, "cpu") <= parse_quantity("100")


def _pods(n: int, cpu: str, memory: str, prefix: str = "p") -> list[dict[str, Any]]:
    return [pod(f"{prefix}{i}", cpu, memory) for i in range(n)]
