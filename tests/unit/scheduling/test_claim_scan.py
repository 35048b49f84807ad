"""A new claim's scans of its pool's types (``fit``, ``_target`` in scheduling/solving/claims.py)
read the allocatable vectors inline; they must pick what the plain computation picks (each
type's vector asked for, its worth for the pending mix worked out per dimension)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.catalogs import ec2_like_catalog
from benchmarks.workloads import nodepool, pod
from models.instancetype import InstanceType
from scheduling.pods import parse_pod
from scheduling.problem import Problem
from scheduling.solver import Solver
from scheduling.targets import vec_fits

_CATALOG = ec2_like_catalog()


def _plain_fit(s: Solver, types: list[InstanceType], need: list[int]) -> list[InstanceType]:
    return [it for it in types if vec_fits(need, s.view.vec(it.allocatable))]


def _plain_target(s: Solver, types: list[InstanceType], need: list[int]) -> InstanceType:
    prices = s.view.offers.price_map(s.view.pools[0].requirements)
    demand = s.view.demand
    scored = []
    for it in types:
        alloc = s.view.vec(it.allocatable)
        price = prices.get(it)
        if not vec_fits(need, alloc) or price is None:
            continue
        worth = min(
            (alloc[i] / demand[i] for i in range(len(demand)) if demand[i] > 0), default=1.0
        )
        if worth > 0:
            scored.append((price / worth, worth, it))
    if not scored:
        return types[0]
    floor = min(x[0] for x in scored)
    return max((x for x in scored if x[0] <= floor * 1.03), key=lambda x: (x[1], x[2].name))[2]


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    pods=st.lists(
        st.tuples(st.sampled_from(["0", "100m", "1", "7"]), st.sampled_from(["0", "1Gi", "60Gi"])),
        min_size=1,
        max_size=4,
    ),
    need_cpu=st.integers(0, 8_000),
    need_mem=st.integers(0, 300 * 2**30 * 1000),
)
def test_fit_and_target_pick_what_the_plain_scan_picks(
    seed: int, pods: list[tuple[str, str]], need_cpu: int, need_mem: int
) -> None:
    types = random.Random(seed).sample(_CATALOG, 60)
    pending = [parse_pod(pod(f"p{i}", cpu, mem)) for i, (cpu, mem) in enumerate(pods)]
    s = Solver(Problem([nodepool()], types, pending))
    s.solve()  # sets the pending mix the target weighs types by
    pool_types = s.view.pools[0].instance_types
    need = [need_cpu, need_mem, 1000] + [0] * (len(s.view.dims) - 3)
    assert s.claims.fit(pool_types, need) == _plain_fit(s, pool_types, need)
    if pool_types:
        s.claims._targets.clear()
        got = s.claims._target(pool_types, s.view.pools[0].requirements, need)
        assert got is _plain_target(s, pool_types, need)
        if _plain_fit(s, pool_types, need):
            assert vec_fits(need, s.view.vec(got.allocatable))
