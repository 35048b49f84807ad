"""What a round remembers between its simulations must never change one: nodes known to reject
a pod class (``NodeRejections``), the per-solve room index, and the collector set aside.

Each scenario runs the same simulation on a round that has already run others (so whatever
it remembered is in play) and on a fresh round, and asserts the same placements: a memory
that wrongly leaves a node out sends a pod to a new claim or to another node instead.
"""

from __future__ import annotations

import copy
import gc
import random
from collections.abc import Mapping, Sequence
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from models.catalog import load_catalog
from scheduling.disruption import engine
from scheduling.disruption.simulate import RoundState
from scheduling.inputs import Document, build_problem
from scheduling.solver import NodeRejections, Solver
from scheduling.solving.existing import RoomIndex
from scheduling.targets import ExistingTarget
from tests.support.catalogs import ZA, ZB, catalog
from tests.support.disruption import bound, managed, pool
from tests.support.labels import ARCH, CAPACITY_TYPE, HOSTNAME, ZONE
from tests.support.manifests import pod_affinity, req

OD_AMD = [req(CAPACITY_TYPE, "In", "on-demand"), req(ARCH, "In", "amd64")]
ANTI_HOST = pod_affinity(HOSTNAME, {"app": "db"}, anti=True)
ANTI_ZONE = pod_affinity(ZONE, {"app": "db"}, anti=True)


def _state(docs: Sequence[Mapping[str, Any]]) -> RoundState:
    parsed = build_problem(
        [Document(copy.deepcopy(dict(d)), f"doc {i}") for i, d in enumerate(docs)],
        load_catalog(catalog()),
    )
    return RoundState.after_plan(parsed.problem, Solver(parsed.problem).solve())


def _where(plan: Any) -> dict[str, str]:
    out = {p.key: name for name, pods in plan.existing.items() for p in pods}
    for i, c in enumerate(plan.claims):
        out.update({p.key: f"claim-{i}" for p in c.pods})
    return out


def _moves(
    state: RoundState, without: str, *, new_nodes: bool = True, also: Sequence[str] = ()
) -> dict[str, str]:
    """Where the pods of ``without`` go when it (and ``also``) are left out."""
    pods = list(state.nodes[without].pods)
    plan = state.simulate([without, *also], pods, new_nodes=new_nodes)
    return {**_where(plan), **{k: "unschedulable" for k in plan.unschedulable}}


def _after(docs: Sequence[Mapping[str, Any]], first: Sequence[str], then: str) -> None:
    """Simulating ``then`` after the simulations in ``first`` equals simulating it alone."""
    used = _state(docs)
    for name in first:
        _moves(used, name)
    assert _moves(used, then) == _moves(_state(docs), then)


def test_a_zonal_rejection_is_not_remembered() -> None:
    # "b" shares zone a with "a", whose db pod keeps the db pod of "c" out of the whole zone;
    # once "a" is the node removed, "b" takes it. Remembering b's first refusal would not.
    docs = [
        pool(requirements=OD_AMD),
        managed("a", zone=ZA),
        bound("a0", "a", labels={"app": "db"}, affinity=ANTI_ZONE),
        managed("b", zone=ZA),
        bound("b0", "b"),
        managed("c", zone=ZB),
        bound("c0", "c", labels={"app": "db"}, affinity=ANTI_ZONE),
    ]
    used = _state(docs)
    assert _moves(used, "c", new_nodes=False) == {"default/c0": "unschedulable"}
    assert _moves(used, "a", new_nodes=False) == {"default/a0": "b"}
    _after(docs, ["c", "b"], "a")


def test_a_rejection_by_another_pods_zonal_anti_affinity_is_not_remembered() -> None:
    # a's web pod keeps db pods out of zone a, so "b" refuses c's db pod; with "a" left out
    # too, b takes d's db pod (the same class) before "c" in zone b can.
    web = {"app": "web"}
    docs = [
        pool(requirements=OD_AMD),
        managed("a", zone=ZA),
        bound("a0", "a", labels=web, affinity=ANTI_ZONE),
        managed("b", zone=ZA),
        bound("b0", "b", labels=web),
        managed("c", zone=ZB),
        bound("c0", "c", labels={"app": "db"}),
        managed("d", zone=ZB),
        bound("d0", "d", labels={"app": "db"}),
    ]
    used = _state(docs)
    assert _moves(used, "c", new_nodes=False) == {"default/c0": "d"}
    assert _moves(used, "d", new_nodes=False, also=["a"]) == {"default/d0": "b"}
    assert _moves(used, "d", new_nodes=False, also=["a"]) == _moves(
        _state(docs), "d", new_nodes=False, also=["a"]
    )


def test_a_hostname_rejection_holds_in_later_simulations() -> None:
    docs = [
        pool(requirements=OD_AMD),
        managed("a"),
        bound("a0", "a", labels={"app": "db"}, affinity=ANTI_HOST),
        managed("b"),
        bound("b0", "b", labels={"app": "db"}, affinity=ANTI_HOST),
        managed("c"),
        bound("c0", "c", labels={"app": "db"}, affinity=ANTI_HOST),
        managed("d"),
        bound("d0", "d"),
    ]
    used = _state(docs)
    assert _moves(used, "c", new_nodes=False) == {"default/c0": "d"}
    # a and b refused c's db pod and are remembered; d still takes b's db pod
    assert used.rejections is not None
    assert any({"a", "b"} <= s for s in used.rejections._by_class.values())
    assert _moves(used, "b", new_nodes=False) == {"default/b0": "d"}
    _after(docs, ["c", "a"], "b")


def test_a_node_sharing_its_hostname_is_never_remembered() -> None:
    # "b1" and "b2" carry one hostname: the db pod on b1 keeps c's db pod off b2 too, until
    # b1 is the node removed; b2's refusal depended on another node and must not be kept.
    shared = {HOSTNAME: "shared"}
    docs = [
        pool(requirements=OD_AMD),
        managed("b1", labels=shared),
        bound("b10", "b1", labels={"app": "db"}, affinity=ANTI_HOST),
        managed("b2", labels=shared),
        bound("b20", "b2"),
        managed("c"),
        bound("c0", "c", labels={"app": "db"}, affinity=ANTI_HOST),
    ]
    used = _state(docs)
    assert _moves(used, "c", new_nodes=False) == {"default/c0": "unschedulable"}
    assert _moves(used, "b1", new_nodes=False) == {"default/b10": "b2"}
    _after(docs, ["c"], "b1")


def test_node_rejections_skip_shared_and_placeholder_hostnames() -> None:
    memory = NodeRejections(
        [("a", "a"), ("b1", "h"), ("b2", "h"), ("p", "hostname-placeholder-00001")]
    )
    seen = memory.of(("class",))
    for name in ("a", "b1", "b2", "p"):
        memory.note(seen, name)
    assert seen == {"a"}
    assert memory.of(("class",)) is seen and memory.of(("other",)) == set()


def _target(i: int, cpu: int, mem: int) -> ExistingTarget:
    return ExistingTarget(
        hostname=f"n{i}",
        requirements=None,  # type: ignore[arg-type]
        taints=(),
        used=[0, 0, 0],
        name=f"n{i}",
        allocatable=[cpu, mem, 110_000],
    )


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 8), st.integers(0, 8)), max_size=30),
    st.integers(0, 8),
    st.integers(0, 8),
)
def test_the_room_index_leaves_out_exactly_the_nodes_without_room(
    free: list[tuple[int, int]], cpu: int, mem: int
) -> None:
    nodes = [_target(i, c, m) for i, (c, m) in enumerate(free)]
    want = [i for i, (c, m) in enumerate(free) if c >= cpu and m >= mem]
    assert RoomIndex(nodes).holding([cpu, mem, 1000]) == want


def test_a_round_gives_the_collector_its_objects_back() -> None:
    rnd = random.Random(7)
    docs: list[Mapping[str, Any]] = [pool(requirements=OD_AMD)]
    for i in range(6):
        docs += [managed(f"n{i}"), bound(f"p{i}", f"n{i}", f"{rnd.choice([250, 500])}m")]
    before = gc.get_freeze_count()
    with engine._inputs_frozen():
        assert gc.get_freeze_count() > before
        _moves(_state(docs), "n0")
    assert gc.get_freeze_count() == before
