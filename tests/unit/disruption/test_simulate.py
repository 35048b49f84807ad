"""RoundState.simulate: where the pods of nodes to remove would go, on the cluster as the
round's accepted commands leave it (removed nodes never a destination, moved pods counted
where they landed), with or without new claims."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from models.catalog import load_catalog
from scheduling.disruption.simulate import RoundState
from scheduling.inputs import Document, build_problem
from scheduling.pods import Pod
from scheduling.solver import Solver
from tests.support.catalogs import catalog
from tests.support.disruption import bound, managed, pool
from tests.support.labels import ARCH, CAPACITY_TYPE, HOSTNAME
from tests.support.manifests import pod_affinity, req

OD_AMD = [req(CAPACITY_TYPE, "In", "on-demand"), req(ARCH, "In", "amd64")]


def _state(docs: Sequence[Mapping[str, Any]]) -> RoundState:
    parsed = build_problem(
        [Document(copy.deepcopy(dict(d)), f"doc {i}") for i, d in enumerate(docs)],
        load_catalog(catalog()),
    )
    plan = Solver(parsed.problem).solve()
    return RoundState.after_plan(parsed.problem, plan)


def _pods_of(state: RoundState, name: str) -> list[Pod]:
    return list(state.nodes[name].pods)


def _where(plan: Any) -> dict[str, str]:
    out = {p.key: name for name, pods in plan.existing.items() for p in pods}
    for i, c in enumerate(plan.claims):
        out.update({p.key: f"claim-{i}" for p in c.pods})
    return out


def _cluster(extra: Sequence[Mapping[str, Any]] = ()) -> list[Mapping[str, Any]]:
    return [
        pool(requirements=OD_AMD),
        managed("a", "m5.xlarge"),
        bound("a0", "a", "3500m", "12Gi"),
        managed("b", "m5.xlarge"),
        bound("b0", "b", "1", "2Gi"),
        managed("c", "m5.xlarge"),
        bound("c0", "c", "1", "2Gi"),
        *extra,
    ]


def test_pods_go_to_a_remaining_node_with_room() -> None:
    state = _state(_cluster())
    plan = state.simulate(["c"], _pods_of(state, "c"))
    assert _where(plan) == {"default/c0": "b"}
    assert plan.claims == [] and plan.unschedulable == {}


def test_a_removed_node_is_never_a_destination() -> None:
    state = _state(_cluster())
    state.removed.add("b")
    plan = state.simulate(["c"], _pods_of(state, "c"))
    assert "b" not in _where(plan).values() and "c" not in _where(plan).values()
    assert _where(plan) == {"default/c0": "claim-0"}


def test_without_new_nodes_a_pod_that_fits_nowhere_is_unschedulable() -> None:
    state = _state(_cluster())
    state.removed.add("b")
    plan = state.simulate(["c"], _pods_of(state, "c"), new_nodes=False)
    assert plan.claims == []
    assert list(plan.unschedulable) == ["default/c0"]


def test_an_accepted_command_fills_its_destination() -> None:
    state = _state(_cluster())
    first = state.simulate(["c"], _pods_of(state, "c"))
    state.apply(["c"], first)
    assert "b" in state.destinations
    assert [p.key for p in state.nodes["b"].pods] == ["default/b0", "default/c0"]
    # "b" now holds 2 of its 4 cpu: the 3.5-cpu pod from "a" no longer fits there
    second = state.simulate(["a"], _pods_of(state, "a"), new_nodes=False)
    assert list(second.unschedulable) == ["default/a0"]


def test_anti_affinity_counts_pods_on_nodes_too_full_to_take_any() -> None:
    anti = {"podAntiAffinity": pod_affinity(HOSTNAME, {"app": "db"}, anti=True)["podAntiAffinity"]}
    state = _state(
        [
            pool(requirements=OD_AMD),
            managed("a", "m5.xlarge"),
            bound("a0", "a", "3500m", "12Gi", labels={"app": "db"}, affinity=anti),
            managed("b", "m5.xlarge"),
            bound("b0", "b", "500m", "1Gi", labels={"app": "db"}, affinity=anti),
            managed("c", "m5.xlarge"),
            bound("c0", "c", "500m", "1Gi", labels={"app": "web"}),
        ]
    )
    plan = state.simulate(["b"], _pods_of(state, "b"), new_nodes=False)
    assert _where(plan) == {"default/b0": "c"}
    # and it never joins the other db pod, even where there is room
    state2 = _state(
        [
            pool(requirements=OD_AMD),
            managed("a", "m5.xlarge"),
            bound("a0", "a", "500m", "1Gi", labels={"app": "db"}, affinity=anti),
            managed("b", "m5.xlarge"),
            bound("b0", "b", "500m", "1Gi", labels={"app": "db"}, affinity=anti),
        ]
    )
    plan2 = state2.simulate(["b"], _pods_of(state2, "b"), new_nodes=False)
    assert list(plan2.unschedulable) == ["default/b0"]


def test_the_same_simulation_twice_gives_the_same_plan() -> None:
    state = _state(_cluster())
    one = _where(state.simulate(["b", "c"], _pods_of(state, "b") + _pods_of(state, "c")))
    two = _where(state.simulate(["b", "c"], _pods_of(state, "b") + _pods_of(state, "c")))
    assert one == two
    assert state.simulations == 2


def test_cheapest_holding_is_a_lower_bound_on_a_new_node() -> None:
    state = _state(_cluster())
    pods = _pods_of(state, "a")
    bound_price = state.cheapest_holding(pods)
    assert bound_price is not None
    state.removed.update(["b", "c"])
    plan = state.simulate(["a"], pods)
    (claim,) = plan.claims
    assert bound_price <= claim.price
