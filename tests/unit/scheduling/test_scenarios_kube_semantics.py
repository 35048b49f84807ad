"""Plans judged as the kube-scheduler would judge the nodes they launch, by the test's own
reading of labels (issue 35): a pod must be able to run on the node bought for it."""

from __future__ import annotations

import pytest
from helpers import (
    claim_of,
    node_affinity,
    nodepool,
    plan,
    pod,
    req,
    where,
)

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
