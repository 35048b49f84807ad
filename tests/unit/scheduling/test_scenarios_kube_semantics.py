"""Plans judged as the kube-scheduler would judge the nodes they launch, by the test's own
reading of labels (issue 35): a pod must be able to run on the node bought for it."""

from __future__ import annotations

import pytest

from tests.support.manifests import node, node_affinity, nodepool, pod, pod_affinity, req
from tests.support.plans import claim_of, plan, unschedulable, where

RACK = "example.com/rack"  # defined by no pool and no instance type of the test catalog


@pytest.mark.parametrize("opener", ["NotIn", "DoesNotExist"])
def test_a_pod_requiring_an_undefined_label_joins_no_claim_opened_without_it(opener: str) -> None:
    """Another pod's ``NotIn`` / ``DoesNotExist`` on the key put it in the claim's
    requirements, but the node will not carry the label: the kube-scheduler would leave a
    pod requiring it to exist Pending there."""
    values = ("r7",) if opener == "NotIn" else ()
    docs = [
        nodepool(),
        pod("opener", "2", "2Gi", affinity=node_affinity([req(RACK, opener, *values)])),
        pod("needs-rack", "250m", "256Mi", affinity=node_affinity([req(RACK, "Exists")])),
    ]
    out = plan(docs)
    assert where(out)["default/opener"].startswith("claim")
    key = "default/needs-rack"
    if where(out)[key] != "unschedulable":
        # Placed on a claim: its node carries the label only if the claim pins a value.
        rack = {
            r["operator"]: r.get("values")
            for r in claim_of(out, key)["requirements"]
            if r["key"] == RACK
        }
        assert rack.get("In"), (key, claim_of(out, key)["requirements"])


@pytest.mark.parametrize("with_node", [False, True])
def test_anti_affinity_on_a_key_no_node_carries_admits_the_pods(with_node: bool) -> None:
    """Required pod anti-affinity over a topology key no node carries: a node without the key
    is in no domain, so it shares none with the pods the term selects (here the replicas
    themselves), and the kube-scheduler admits every replica, on a new node or an existing
    one that lacks the key."""
    key = "example.com/no-such-domain"
    solo = {"app": "solo"}
    docs = [nodepool()]
    if with_node:
        docs.append(node("plain", "4", "16Gi"))
    docs += [
        pod(f"solo-{i}", "500m", "512Mi", labels=solo, affinity=pod_affinity(key, solo, anti=True))
        for i in range(3)
    ]
    out = plan(docs)
    assert unschedulable(out) == []
    for i in range(3):
        at = where(out)[f"default/solo-{i}"]
        if at.startswith("claim"):
            keys = {r["key"] for r in claim_of(out, f"default/solo-{i}")["requirements"]}
            assert key not in keys  # nothing gives its node the label
        else:
            assert with_node and at == "node:plain"
