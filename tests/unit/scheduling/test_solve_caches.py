"""The solver's memos and shortcuts give the answers the direct computation gives.

``DirectSolver`` undoes each of them (the topology narrowing memo, the offered-domains memo,
the cheapest-room memo, the claim listing memo, the memo of what a claim holds back from its
pool's limits, the memos of the types a tight pool's claim may keep and an open claim may grow
to, a class's and a pod's remembered failures, and the "claim is full whatever
the topology picks" shortcut); the
plans must be identical, on Deployments over EC2-shaped catalogs where some offerings are
unavailable (so the shortcut's "the target survives any zone" test goes both ways) and with
NodePools that pin a zone or a capacity type.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.catalogs import ec2_like_catalog
from benchmarks.workloads import deployments, diverse_pods, nodepool, pod
from models import labels as L
from models.instancetype import InstanceType, Offering
from models.quantity import parse_quantity
from models.requirements import Requirement, Requirements
from scheduling.offers import OfferIndex
from scheduling.pods import Pod, parse_pod
from scheduling.problem import Problem
from scheduling.report import plan_to_dict
from scheduling.solver import Solver
from scheduling.solving.claims import _FULL_FOR_NOW, Claims
from scheduling.solving.domains import TopologyDomains
from scheduling.solving.podclass import PodClass
from scheduling.targets import ClaimTarget, Failure
from tests.support.direct_solver import DirectSolver

_CATALOG = ec2_like_catalog()


class CountingDomains(TopologyDomains):
    """Topology as shipped, counting how often the full-claim shortcut was worked out."""

    def full_whatever_pinned(
        self, cls: PodClass, c: ClaimTarget, reqs: Requirements, need: list[int]
    ) -> bool:
        hit = super().full_whatever_pinned(cls, c, reqs, need)
        CountingSolver.shortcuts += hit
        return hit


class CountingClaims(Claims):
    """Claims as shipped, counting how often a claim was remembered full for a class."""

    def try_claim(self, cls: PodClass, pod: Pod, c: ClaimTarget) -> Failure | None:
        before = CountingSolver.shortcuts
        out = super().try_claim(cls, pod, c)
        if out is _FULL_FOR_NOW and CountingSolver.shortcuts == before:
            CountingSolver.shortcuts += 1
            CountingSolver.remembered += 1
        return out


class CountingSolver(Solver):
    """The solver as shipped, counting how often the shortcut answered (worked out, or
    remembered from the last time it was worked out for the class and claim)."""

    shortcuts = 0
    remembered = 0
    domains_part = CountingDomains
    claims_part = CountingClaims


def _catalog(rng: random.Random, size: int, holes: float) -> list[InstanceType]:
    """``size`` EC2-shaped types, each offering unavailable with probability ``holes``."""
    out = []
    for it in rng.sample(_CATALOG, size):
        offers = [
            Offering(o.zone, o.capacity_type, o.price, rng.random() >= holes) for o in it.offerings
        ]
        if not any(o.available for o in offers):
            offers[0] = Offering(offers[0].zone, offers[0].capacity_type, offers[0].price)
        out.append(InstanceType(it.name, it.capacity, it.overhead, it.requirements, tuple(offers)))
    return out


def _plan(solver_class: type[Solver], types: list[InstanceType], raw: list[Any], pool: Any) -> Any:
    pods = [parse_pod(p) for p in raw]
    plan = solver_class(Problem([pool], types, pods)).solve()
    return plan_to_dict(plan, 0.0)


POOL_REQUIREMENTS: list[list[dict[str, Any]]] = [
    [],
    [{"key": L.ZONE, "operator": "In", "values": ["us-east-1a", "us-east-1b"]}],
    [{"key": L.CAPACITY_TYPE, "operator": "In", "values": ["on-demand"]}],
]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    deployments_count=st.integers(2, 10),
    types=st.integers(20, 120),
    holes=st.sampled_from([0.0, 0.03, 0.3]),
    pool_reqs=st.sampled_from(range(len(POOL_REQUIREMENTS))),
)
def test_plans_equal_the_direct_computation(
    seed: int, deployments_count: int, types: int, holes: float, pool_reqs: int
) -> None:
    rng = random.Random(seed)
    catalog = _catalog(rng, types, holes)
    raw = deployments(seed=seed, count=deployments_count)[:600]
    pool = nodepool(requirements=POOL_REQUIREMENTS[pool_reqs])
    assert _plan(Solver, catalog, raw, pool) == _plan(DirectSolver, catalog, raw, pool)


# Limits: never reached (Karpenter's benchmark pool), reached part-way through (the pool turns
# tight and open claims grow), and reached almost at once; and a minValues pool.
POOL_SPECS: list[dict[str, Any]] = [
    {"limits": {"cpu": "10000000", "memory": "10000000Gi"}},
    {"limits": {"cpu": "400"}},
    {"limits": {"cpu": "64", "memory": "256Gi"}},
    {"limits": {"nodes": "6"}},
    {
        "requirements": [
            {"key": "karpenter.k8s.aws/instance-family", "operator": "Exists", "minValues": 3}
        ]
    },
    {
        "limits": {"cpu": "300"},
        "requirements": [
            {"key": "karpenter.k8s.aws/instance-family", "operator": "Exists", "minValues": 2}
        ],
    },
]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    deployments_count=st.integers(2, 10),
    types=st.integers(20, 120),
    holes=st.sampled_from([0.0, 0.03, 0.3]),
    spec=st.sampled_from(range(len(POOL_SPECS))),
)
def test_plans_equal_the_direct_computation_with_limits_and_min_values(
    seed: int, deployments_count: int, types: int, holes: float, spec: int
) -> None:
    """The full-claim shortcut answers for pools with limits and minValues too: a claim it
    skips fails on the full path before limits or minValues are looked at."""
    rng = random.Random(seed)
    catalog = _catalog(rng, types, holes)
    raw = deployments(seed=seed, count=deployments_count)[:600]
    pool = nodepool(**copy.deepcopy(POOL_SPECS[spec]))
    assert _plan(Solver, catalog, raw, pool) == _plan(DirectSolver, catalog, raw, pool)


@pytest.mark.parametrize(
    "spec",
    [{}, POOL_SPECS[0], {"limits": {"cpu": "2000"}}],
    ids=["free", "out-of-reach", "binding"],  # binding: 139 of the 1,858 pods are refused
)
def test_shortcut_fires_on_the_benchmark_shape_and_changes_nothing(spec: dict[str, Any]) -> None:
    """On zonal spreads over claims opened by other Deployments the shortcut answers many
    tries (so the equality above is not vacuous) and the plan stays the same, with or
    without limits."""
    rng = random.Random(5)
    catalog = _catalog(rng, 150, 0.0)
    raw = deployments(seed=11, count=12)
    pool = nodepool(**copy.deepcopy(spec))
    CountingSolver.shortcuts = CountingSolver.remembered = 0
    shipped = _plan(CountingSolver, catalog, raw, pool)
    assert CountingSolver.shortcuts > 100
    assert CountingSolver.remembered > 50  # the same claim asked again by the next replica
    assert shipped == _plan(DirectSolver, catalog, raw, pool)


@given(
    keys=st.lists(st.sampled_from(["a", "b", "c", L.ZONE]), max_size=4),
    probe=st.sampled_from(["a", "b", "c", "d", L.ZONE]),
)
def test_requirements_get_and_in_read_like_a_mapping(keys: list[str], probe: str) -> None:
    reqs = Requirements(Requirement(k, False, frozenset({"x"})) for k in keys)
    expected = dict(reqs.items())
    assert reqs.get(probe) == expected.get(probe)
    assert reqs.get(probe, "dflt") == expected.get(probe, "dflt")
    assert (probe in reqs) == (probe in expected)


@given(
    available=st.lists(st.booleans(), min_size=6, max_size=6),
    zones=st.lists(st.sampled_from(["z1", "z2", "z3"]), max_size=3, unique=True),
    cts=st.lists(st.sampled_from(["spot", "on-demand"]), max_size=2, unique=True),
)
def test_offered_in_all_matches_the_offerings(
    available: list[bool], zones: list[str], cts: list[str]
) -> None:
    pairs = [(z, c) for z in ("z1", "z2", "z3") for c in ("spot", "on-demand")]
    offers = [Offering(z, c, 1.0, a) for (z, c), a in zip(pairs, available, strict=True)]
    if not any(available):
        offers.append(Offering("z1", "spot", 2.0))
    it = InstanceType.build("t", {"cpu": 1000}, offers)
    index = OfferIndex([it])
    direct = all(
        any(o.available and o.zone == z and o.capacity_type == c for o in it.offerings)
        for z in zones
        for c in cts
    )
    assert index.offered_in_all(it, zones, cts) == direct


@pytest.mark.parametrize(
    "spec",
    [
        {},
        {"limits": {"cpu": "10000000", "memory": "10000000Gi"}},
        {"limits": {"cpu": "20"}},
        {
            "requirements": [
                {"key": L.INSTANCE_TYPE, "operator": "Exists", "minValues": 1},
            ]
        },
    ],
    ids=["no-limits", "limits-out-of-reach", "limits-that-narrow", "min-values"],
)
def test_a_full_claim_whose_target_a_zone_narrowing_drops_still_takes_the_pod(
    spec: dict[str, Any],
) -> None:
    """The shortcut must not answer when narrowing to the zone the spread picks drops the
    claim's target: here the small type is sold in one zone only, so the second spread pod
    (sent to another zone by maxSkew) re-targets the plain pod's claim to the large type and
    joins it rather than opening a claim of its own. The same with limits and minValues."""
    small = InstanceType.build(
        "small",
        {"cpu": parse_quantity("2"), "memory": parse_quantity("8Gi"), "pods": parse_quantity(10)},
        [Offering("z-a", "on-demand", 0.1)],
        overhead={"cpu": parse_quantity("100m")},
    )
    large = InstanceType.build(
        "large",
        {"cpu": parse_quantity("8"), "memory": parse_quantity("32Gi"), "pods": parse_quantity(50)},
        [Offering(z, "on-demand", 0.8) for z in ("z-a", "z-b", "z-c")],
    )
    spread: dict[str, Any] = {
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": L.ZONE,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "z"}},
            }
        ]
    }
    raw = [
        pod("plain", "1500m", "1Gi", {"app": "p"}),
        pod("z1", "600m", "1Gi", {"app": "z"}, **spread),
        pod("z2", "600m", "1Gi", {"app": "z"}, **spread),
    ]
    shipped = _plan(Solver, [small, large], raw, nodepool(**copy.deepcopy(spec)))
    assert shipped == _plan(DirectSolver, [small, large], raw, nodepool(**copy.deepcopy(spec)))
    together = [c for c in shipped["nodeClaims"] if "default/plain" in c["pods"]]
    assert together[0]["pods"] == ["default/plain", "default/z2"]
    assert together[0]["zones"] == ["z-b"]


@pytest.mark.parametrize("order", ["balanced", "cpu"])
def test_a_class_that_failed_is_tried_again_once_a_pod_is_placed(order: str) -> None:
    """A remembered failure lasts only until something changes: a1 and a9 need a pod of app
    b on their node and come before and after b's one pod in the queue (same size, name
    order). a1 fails, b is placed, a9 must join it (not be answered from a1's failure), and
    a1's retry must see b too."""
    affinity: dict[str, Any] = {
        "affinity": {
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": "b"}}, "topologyKey": L.HOSTNAME}
                ]
            }
        }
    }
    raw = [
        pod("a1", "1", "1Gi", {"app": "a"}, **affinity),
        pod("a5", "1", "1Gi", {"app": "b"}),
        pod("a9", "1", "1Gi", {"app": "a"}, **affinity),
    ]
    catalog = _catalog(random.Random(3), 40, 0.0)
    pods = [parse_pod(p) for p in raw]
    shipped = plan_to_dict(Solver(Problem([nodepool()], catalog, pods), order).solve(), 0.0)
    pods = [parse_pod(p) for p in raw]
    direct = plan_to_dict(DirectSolver(Problem([nodepool()], catalog, pods), order).solve(), 0.0)
    assert shipped == direct
    assert not shipped["unschedulable"]
    assert [sorted(c["pods"]) for c in shipped["nodeClaims"]] == [
        ["default/a1", "default/a5", "default/a9"]
    ]


def test_a_pod_alike_at_its_first_step_but_relaxing_otherwise_is_not_answered_for() -> None:
    """Two pods of one class at their first step (the same pod-affinity term, required in
    one, preferred in the other) relax differently: the failure of the first (required,
    no pod of app b anywhere) must not answer for the second, which drops its preference
    and is placed."""
    term = {"labelSelector": {"matchLabels": {"app": "b"}}, "topologyKey": L.HOSTNAME}
    required: dict[str, Any] = {
        "affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    }
    preferred: dict[str, Any] = {
        "affinity": {
            "podAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 10, "podAffinityTerm": term}
                ]
            }
        }
    }
    raw = [
        pod("a1", "1", "1Gi", {"app": "a"}, **required),
        pod("a2", "1", "1Gi", {"app": "a"}, **preferred),
    ]
    catalog = _catalog(random.Random(3), 40, 0.0)
    shipped = _plan(Solver, catalog, raw, nodepool())
    assert shipped == _plan(DirectSolver, catalog, raw, nodepool())
    assert [u["pod"] for u in shipped["unschedulable"]] == ["default/a1"]
    assert [c["pods"] for c in shipped["nodeClaims"]] == [["default/a2"]]


class GrowthCountingClaims(Claims):
    """Claims as shipped, counting the open claims asked to grow."""

    def widened(self, c: ClaimTarget, types: list[InstanceType]) -> list[InstanceType]:
        GrowthCountingSolver.asked += 1
        return super().widened(c, types)


class GrowthCountingSolver(Solver):
    """The solver as shipped, counting the open claims it asked to grow."""

    asked = 0
    claims_part = GrowthCountingClaims


@pytest.mark.parametrize("limits", [{"cpu": "150"}, {"cpu": "400", "memory": "900Gi"}])
def test_a_pool_at_its_limits_refuses_diverse_pods_as_the_direct_computation(
    limits: dict[str, str],
) -> None:
    """Karpenter's diverse shape (spreads, affinities) against limits reached part-way:
    every pod the pool then refuses asks each open claim whether it could grow (memoised per
    claim, usage and what the limits leave); the plans are the direct computation's."""
    rng = random.Random(3)
    catalog = _catalog(rng, 80, 0.03)
    raw = diverse_pods(700, seed=7)
    pool = nodepool(limits=dict(limits))
    GrowthCountingSolver.asked = 0
    shipped = _plan(GrowthCountingSolver, catalog, raw, pool)
    assert GrowthCountingSolver.asked > 100
    assert any("limits would be exceeded" in u["reason"] for u in shipped["unschedulable"])
    assert shipped == _plan(DirectSolver, catalog, raw, pool)
