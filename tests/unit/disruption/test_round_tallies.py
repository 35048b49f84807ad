"""Topology counts kept from one solve to the next (``TopologyTallies``) must equal a recount.

A round's simulations solve over nearly the same nodes; the running pods' counts per topology
group are brought up to date by the nodes that changed instead of recounted. Each example
runs a sequence of solves on one cache, as a round does (nodes left out, nodes whose pods
changed, nodes present only as counts), and compares every group's counts and owner domains,
and the order groups were made in, with a solve that counts from nothing.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from models.catalog import load_catalog
from scheduling.inputs import Document, build_problem
from scheduling.problem import NodeInfo, Problem
from scheduling.solver import CatalogCache, Solver
from tests.support.catalogs import ZA, ZB, catalog
from tests.support.disruption import bound, managed, pool
from tests.support.labels import ARCH, CAPACITY_TYPE, HOSTNAME, ZONE
from tests.support.manifests import pod_affinity, req, spread

OD_AMD = [req(CAPACITY_TYPE, "In", "on-demand"), req(ARCH, "In", "amd64")]
APPS = ("web", "db", "batch")
ZONES = (ZA, ZB, "us-east-1c")


def _counts(solver: Solver) -> list[tuple[tuple[object, ...], dict[str, int], set[str]]]:
    solver.domains.declare_groups()
    solver.domains.count_bound_pods()
    groups = solver.domains.topology.groups
    return [(g.identity(), dict(g.counts), set(g.owner_domains)) for g in groups]


_POD = st.tuples(
    st.sampled_from(APPS),  # its app label
    st.sampled_from([None, ZONE, HOSTNAME]),  # a spread over this key, selecting its app
    st.sampled_from([None, ZONE, HOSTNAME]),  # required anti-affinity to a random app
    st.sampled_from(APPS),
)


def _cluster(draw: Any) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = [pool(requirements=OD_AMD)]
    for n in range(draw(st.integers(2, 7))):
        docs.append(managed(f"n{n}", zone=draw(st.sampled_from(ZONES))))
        for i, (app, spread_key, anti_key, other) in enumerate(draw(st.lists(_POD, max_size=4))):
            kw: dict[str, Any] = {"labels": {"app": app}}
            if spread_key is not None:
                kw["spread"] = [spread(spread_key, {"app": app})]
            if anti_key is not None:
                kw["affinity"] = pod_affinity(anti_key, {"app": other}, anti=True)
            docs.append(bound(f"p{n}-{i}", f"n{n}", "100m", "128Mi", **kw))
    return docs


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_kept_topology_counts_equal_a_recount(data: st.DataObject) -> None:
    docs = _cluster(data.draw)
    parsed = build_problem(
        [Document(copy.deepcopy(d), f"doc {i}") for i, d in enumerate(docs)],
        load_catalog(catalog()),
    )
    problem = parsed.problem
    nodes: list[NodeInfo] = list(problem.nodes)
    twins: dict[str, NodeInfo] = {}
    shared = CatalogCache()
    for _ in range(data.draw(st.integers(1, 6))):
        # An accepted command gives a node new pods (a new list): here, a pod of another.
        if data.draw(st.booleans()):
            i, j = data.draw(st.tuples(*[st.integers(0, len(nodes) - 1)] * 2))
            nodes[i] = replace(nodes[i], pods=[*nodes[i].pods, *nodes[j].pods[:1]])
        # A simulation leaves some nodes out and moves their pods; others are counts only.
        out = set(data.draw(st.lists(st.integers(0, len(nodes) - 1), max_size=3)))
        pending = [p for i in sorted(out) for p in nodes[i].pods]
        kept = []
        for i, n in enumerate(nodes):
            if i in out:
                continue
            if data.draw(st.booleans()):
                twin = twins.get(n.name)
                if twin is None or twin.pods is not n.pods:
                    twin = twins[n.name] = replace(n, schedulable=False)
                n = twin
            kept.append(n)
        sub = Problem(
            nodepools=problem.nodepools,
            instance_types=problem.instance_types,
            pending=pending,
            nodes=kept,
            daemonsets=problem.daemonsets,
        )
        assert _counts(Solver(sub, catalog=shared)) == _counts(Solver(sub))


def test_a_node_left_out_is_taken_out_of_the_counts() -> None:
    web = {"app": "web"}
    docs = [
        pool(requirements=OD_AMD),
        managed("a", zone=ZA),
        bound("a0", "a", labels=web, spread=[spread(ZONE, web)]),
        managed("b", zone=ZB),
        bound("b0", "b", labels=web, spread=[spread(ZONE, web)]),
        bound("b1", "b", labels=web),
    ]
    parsed = build_problem(
        [Document(d, f"doc {i}") for i, d in enumerate(docs)], load_catalog(catalog())
    )
    problem = parsed.problem
    a, b = problem.nodes
    shared = CatalogCache()

    def zone_counts(nodes: list[NodeInfo], pending: list[Any]) -> dict[str, int]:
        sub = Problem(problem.nodepools, problem.instance_types, pending, nodes)
        counted = _counts(Solver(sub, catalog=shared))
        return next(c for ident, c, _ in counted if ZONE in ident)

    assert zone_counts([a, b], list(a.pods[:1])) == {ZA: 1, ZB: 2}
    assert zone_counts([b], list(a.pods)) == {ZB: 2}
    assert zone_counts([a], list(b.pods)) == {ZA: 1}
    assert zone_counts([a, b], list(a.pods[:1])) == {ZA: 1, ZB: 2}
