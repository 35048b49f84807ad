"""Runs of twins (scheduling/solving/twins.py) place and fail pods exactly as the full path.

A Deployment's replicas follow each other in the queue; the solver places the second and
later of a run on the node the one before went to, or fails them as it failed, without the
full path. ``DirectSolver`` (tests/unit/scheduling/direct_solver.py) takes the full path for
every pod; the plans must be identical on existing nodes of mixed room, zones, taints and
bound pods, with Deployments that have no constraints, a zone spread, a hostname
anti-affinity, a host port, a preference that relaxes, or a zone they cannot have.
"""

from __future__ import annotations

import copy
from typing import Any

from direct_solver import DirectSolver
from helpers import (
    HOSTNAME,
    ZA,
    ZB,
    ZONE,
    Manifest,
    catalog,
    node,
    nodepool,
    pod,
    pod_affinity,
    preferred_pod_affinity,
    spread,
    taint,
    toleration,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from models.catalog import load_catalog
from scheduling.inputs import Document, build_problem
from scheduling.pods import Pod
from scheduling.report import plan_to_dict
from scheduling.solver import Solver
from scheduling.solving.twins import Failed


class CountingSolver(Solver):
    """The solver as shipped, counting the twins it placed and failed without the full path."""

    placed = 0
    failed = 0

    def _follow(self, pod: Pod, head_failed: tuple[Pod, str, int] | None, failed: Failed) -> bool:
        followed = super()._follow(pod, head_failed, failed)
        if followed:
            if head_failed is None:
                CountingSolver.placed += 1
            else:
                CountingSolver.failed += 1
        return followed


def _plan(solver: type[Solver], docs: list[Manifest], order: str = "balanced") -> dict[str, Any]:
    parsed = build_problem(
        [Document(copy.deepcopy(dict(d)), f"doc {i}") for i, d in enumerate(docs)],
        load_catalog(catalog()),
    )
    return plan_to_dict(solver(parsed.problem, order).solve(), 0.0)


def _same(docs: list[Manifest], order: str = "balanced") -> dict[str, Any]:
    shipped = _plan(CountingSolver, docs, order)
    assert shipped == _plan(DirectSolver, docs, order)
    return shipped


def _nodes(placed: dict[str, Any]) -> dict[str, list[str]]:
    return {n["name"]: sorted(n["pods"]) for n in placed["existingNodes"]}


def test_replicas_fill_nodes_in_order_as_twins() -> None:
    """Seven replicas of 1 cpu on nodes with 3, 2 and 4 cpus free: three, two and two, in
    node order, and all but the first on each node placed as twins."""
    docs: list[Manifest] = [
        node("n1", cpu="3"),
        node("n2", cpu="2"),
        node("n3", cpu="4"),
        *(pod(f"web-{i}", "1", "128Mi", labels={"app": "web"}) for i in range(7)),
    ]
    CountingSolver.placed = 0
    out = _same(docs)
    assert _nodes(out) == {
        "n1": ["default/web-0", "default/web-1", "default/web-2"],
        "n2": ["default/web-3", "default/web-4"],
        "n3": ["default/web-5", "default/web-6"],
    }
    assert CountingSolver.placed == 4  # web-1, web-2 on n1; web-4 on n2; web-6 on n3


def test_replicas_that_fit_nowhere_fail_as_twins_with_the_same_reason() -> None:
    """No NodePool and nodes too small: every replica fails, all but the first answered as
    twins, each with the reason the full path gives."""
    docs: list[Manifest] = [
        node("n1", cpu="1"),
        *(pod(f"big-{i}", "2", "128Mi", labels={"app": "big"}) for i in range(5)),
    ]
    CountingSolver.failed = 0
    out = _same(docs)
    assert len(out["unschedulable"]) == 5
    assert len({u["reason"] for u in out["unschedulable"]}) == 1
    assert CountingSolver.failed == 4


def test_a_hostname_anti_affinity_or_a_host_port_sends_each_twin_the_full_way() -> None:
    """Replicas that may not share a node (anti-affinity, a host port) each go to their own
    node: a twin placed on its predecessor's node would break the rule."""
    anti = {"affinity": pod_affinity(HOSTNAME, {"app": "solo"}, anti=True)}
    docs: list[Manifest] = [
        *(node(f"n{i}", cpu="4") for i in range(4)),
        *(pod(f"solo-{i}", "1", "128Mi", labels={"app": "solo"}, **anti) for i in range(3)),
        *(pod(f"port-{i}", "1", "128Mi", labels={"app": "port"}, host_port=8080) for i in range(3)),
    ]
    CountingSolver.placed = 0
    out = _same(docs)
    where = {p: n for n, pods in _nodes(out).items() for p in pods}
    assert len({where[f"default/solo-{i}"] for i in range(3)}) == 3
    assert len({where[f"default/port-{i}"] for i in range(3)}) == 3
    assert CountingSolver.placed == 0


def test_a_zone_spread_sends_each_twin_the_full_way() -> None:
    """Replicas spread over zones alternate zones, as the full path places them."""
    docs: list[Manifest] = [
        node("a1", cpu="8", zone=ZA),
        node("b1", cpu="8", zone=ZB),
        *(
            pod(f"web-{i}", "1", "128Mi", labels={"app": "web"}, spread=[spread(ZONE)])
            for i in range(4)
        ),
    ]
    out = _same(docs)
    assert _nodes(out) == {
        "a1": ["default/web-0", "default/web-2"],
        "b1": ["default/web-1", "default/web-3"],
    }


_KINDS = ("plain", "zone-spread", "anti", "port", "relaxes", "no-zone", "tolerates")


def _deployment(kind: str, name: str, replicas: int, cpu: str, memory: str) -> list[Manifest]:
    labels = {"app": name}
    extra: dict[str, Any] = {}
    if kind == "zone-spread":
        extra["spread"] = [spread(ZONE, labels)]
    elif kind == "anti":
        extra["affinity"] = pod_affinity(HOSTNAME, labels, anti=True)
    elif kind == "port":
        extra["host_port"] = 9000
    elif kind == "relaxes":
        extra["affinity"] = preferred_pod_affinity(HOSTNAME, {"app": "nobody"})
    elif kind == "no-zone":
        extra["node_selector"] = {ZONE: "us-east-1z"}
    elif kind == "tolerates":
        extra["tolerations"] = [toleration("dedicated")]
    return [
        pod(f"{name}-{i}", cpu, memory, labels=labels, **extra)  # type: ignore[arg-type]
        for i in range(replicas)
    ]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    nodes=st.lists(
        st.tuples(
            st.sampled_from(["1", "2", "4", "8"]),
            st.sampled_from(["2Gi", "4Gi", "16Gi"]),
            st.sampled_from([ZA, ZB]),
            st.booleans(),  # tainted
            st.integers(0, 3),  # bound pods of 500m
        ),
        min_size=0,
        max_size=6,
    ),
    deployments=st.lists(
        st.tuples(
            st.sampled_from(_KINDS),
            st.integers(1, 8),
            st.sampled_from(["250m", "500m", "1", "2"]),
            st.sampled_from(["128Mi", "1Gi", "3Gi"]),
        ),
        min_size=1,
        max_size=5,
    ),
    pool=st.sampled_from(["none", "unlimited", "3", "5", "9"]),
    order=st.sampled_from(["balanced", "cpu"]),
)
def test_plans_equal_the_full_path_for_every_pod(
    nodes: list[tuple[str, str, str, bool, int]],
    deployments: list[tuple[str, int, str, str]],
    pool: str,
    order: str,
) -> None:
    """Random clusters; the pool, if any, with a cpu limit or none (a pod that fails may
    turn the pool tight, after which its twin may fit: it must take the full path)."""
    docs: list[Manifest] = []
    if pool != "none":
        docs.append(nodepool(limits=None if pool == "unlimited" else {"cpu": pool}))
    for i, (cpu, memory, zone, tainted, bound) in enumerate(nodes):
        taints = [taint("dedicated")] if tainted else []
        docs.append(node(f"n{i}", cpu=cpu, memory=memory, zone=zone, taints=taints))
        docs += [
            pod(f"bound-{i}-{j}", "500m", "256Mi", labels={"app": "bound"}, node_name=f"n{i}")
            for j in range(bound)
        ]
    for k, (kind, replicas, cpu, memory) in enumerate(deployments):
        docs += _deployment(kind, f"d{k}", replicas, cpu, memory)
    _same(docs, order)
