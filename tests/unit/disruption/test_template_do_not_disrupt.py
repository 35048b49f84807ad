"""``karpenter.sh/do-not-disrupt`` in a NodePool's template annotations holds the pool's nodes,
as in Karpenter: the planned NodeClaim carries the template's annotations, registration copies
the claim's annotations to the Node, and the disruption round reads the Node's.

Karpenter checks the Node's annotation once the node is registered (its state node reads the
NodeClaim's only before then), so an annotation put on the NodeClaim after registration does
not hold the node; one removed from the Node by an operator is not put back."""

from __future__ import annotations

import copy
from typing import Any

from activities.lifecycle.registration import node_patch
from activities.planning.plan import body_for
from models.nodepool import NodePool
from models.requirements import Requirements
from models.resources import Resources
from scheduling.solving.result import PlannedClaim
from tests.support.disruption import (
    ALL,
    DO_NOT_DISRUPT,
    OD_AMD,
    blocked,
    claim_for,
    commands,
    disrupt,
    disrupted,
    managed,
    pool,
)


def _template_pool(annotations: dict[str, str]) -> dict[str, Any]:
    body = pool(requirements=OD_AMD, budgets=ALL)
    body["spec"]["template"].setdefault("metadata", {})["annotations"] = annotations
    return body


def _registered(pool_body: dict[str, Any], name: str) -> list[dict[str, Any]]:
    """An empty managed Node and its NodeClaim, the claim planned from ``pool_body`` and the
    Node patched as registration patches it."""
    model = NodePool.model_validate(copy.deepcopy(pool_body))
    planned = PlannedClaim(
        nodepool=model.name,
        instance_types=[],
        requirements=Requirements.from_labels({}),
        zones=[],
        capacity_types=[],
        price=0.0,
        requests=Resources(),
        pods=[],
    )
    claim_body = body_for(planned, model, f"{name}-claim")
    node = managed(name)
    node["metadata"]["labels"].pop("karpenter.sh/registered", None)
    node["metadata"].update(resourceVersion="1", annotations={"kubelet.example/ttl": "0"})
    claim_body["metadata"]["uid"] = "claim-uid"
    patch = node_patch(node, claim_body)
    assert patch is not None
    for field in ("labels", "annotations"):
        node["metadata"][field].update(patch["metadata"].get(field) or {})
    claim = claim_for(node, annotations=claim_body["metadata"]["annotations"])
    return [node, claim]


def test_registration_copies_the_template_annotations_to_the_node() -> None:
    p = _template_pool({DO_NOT_DISRUPT: "true", "example.com/owner": "team-a"})
    node, _ = _registered(p, "held")
    annotations = node["metadata"]["annotations"]
    assert annotations[DO_NOT_DISRUPT] == "true"
    assert annotations["example.com/owner"] == "team-a"
    assert annotations["kubelet.example/ttl"] == "0"  # the Node's own are kept
    assert "karpenter.sh/nodepool-hash" in annotations  # every claim annotation, as Karpenter


def test_a_template_do_not_disrupt_blocks_the_pools_empty_nodes() -> None:
    p = _template_pool({DO_NOT_DISRUPT: "true"})
    out = disrupt([p, *_registered(p, "held")])
    assert commands(out) == []
    assert blocked(out)["held"] == f'node has {DO_NOT_DISRUPT}: "true"'
    # without it, the same empty node is removed
    q = _template_pool({"example.com/owner": "team-a"})
    assert disrupted(disrupt([q, *_registered(q, "free")])) == {"free": "Empty"}


def test_registration_sets_annotations_once_and_a_removed_one_stays_removed() -> None:
    p = _template_pool({DO_NOT_DISRUPT: "true"})
    node, claim = _registered(p, "held")
    del node["metadata"]["annotations"][DO_NOT_DISRUPT]  # an operator lets it go
    claim["metadata"]["uid"] = "claim-uid"
    again = node_patch(node, claim)
    assert "annotations" not in ((again or {}).get("metadata") or {})


def test_a_do_not_disrupt_only_on_the_nodeclaim_of_a_registered_node_does_not_block() -> None:
    """Karpenter reads the Node's annotations once it is registered."""
    n = managed("late")
    out = disrupt(
        [
            pool(requirements=OD_AMD, budgets=ALL),
            n,
            claim_for(n, annotations={DO_NOT_DISRUPT: "true"}),
        ]
    )
    assert disrupted(out) == {"late": "Empty"}
