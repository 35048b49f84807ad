"""Placements the feasibility oracle (tests/oracle) found the kube-scheduler would refuse,
each reduced to its smallest input: the solver must not place a pod where the kube-scheduler's
NodeAffinity filter rejects it."""

from __future__ import annotations

from tests.support.labels import CAPACITY_TYPE, GENERATION, SIZE
from tests.support.manifests import node, nodepool, pod, req
from tests.support.plans import plan, reason, unschedulable, where


def _terms(*terms: list[dict[str, object]]) -> dict[str, object]:
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": t} for t in terms]
            }
        }
    }


def test_an_existing_node_lacking_a_catalog_label_does_not_take_a_pod_selecting_it() -> None:
    """A Node's labels are all known: one it lacks is absent, and the kube-scheduler refuses
    a pod whose nodeSelector names it, even when the key is one the catalog defines (an
    unmanaged node carries no catalog labels)."""
    bare = node("bare", labels={})
    docs = [bare, pod("p", node_selector={SIZE: "small"})]
    out = plan(docs)
    assert unschedulable(out) == ["default/p"]
    docs.append(nodepool("default", [req(CAPACITY_TYPE, "In", "on-demand")]))
    assert where(plan(docs))["default/p"] == "claim0"


def test_an_existing_node_lacking_a_catalog_label_fails_gt() -> None:
    docs = [
        node("bare", labels={}),
        pod("p", affinity=_terms([req(GENERATION, "Gt", "4")])),
    ]
    assert unschedulable(plan(docs)) == ["default/p"]


def test_a_term_contradicting_the_node_selector_matches_no_node() -> None:
    """nodeSelector and the required terms are ANDed: ``size=small`` with a term requiring
    ``size In [large]`` matches no node (merged as requirements it would read as "size does
    not exist" and admit a node without the label). The other term still counts."""
    gen5 = node("gen5", labels={GENERATION: "5"})
    contradicting = [req(SIZE, "In", "large")]
    other = [req(GENERATION, "In", "5")]
    docs = [gen5, pod("p", node_selector={SIZE: "small"}, affinity=_terms(contradicting, other))]
    assert unschedulable(plan(docs)) == ["default/p"]
    only = [gen5, pod("p", node_selector={SIZE: "small"}, affinity=_terms(contradicting))]
    out = plan(only)
    assert "nodeSelectorTerms[0]" in reason(out, "default/p")
    labelled = node("small5", labels={GENERATION: "5", SIZE: "small"})
    assert where(plan([labelled, docs[1]]))["default/p"] == "node:small5"


def test_an_empty_node_selector_term_matches_no_node() -> None:
    docs = [node("n"), pod("p", affinity=_terms([]))]
    assert unschedulable(plan(docs)) == ["default/p"]
