"""Drift detection: requirements that no longer admit the node, an instance type no longer
offered, a template changed since launch — and never a fleet rolled because another tool or
version stamped the hash."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from models.catalog import load_catalog
from models.nodepool import NodePool
from models.nodepool_hash import (
    HASH_ANNOTATION,
    HASH_VERSION,
    HASH_VERSION_ANNOTATION,
    hash_annotations,
    template_hash,
)
from scheduling.disruption.prepare import prepare_round
from scheduling.inputs import Document
from tests.support.catalogs import catalog
from tests.support.disruption import NOW, claim_for, managed, pool
from tests.support.labels import CAPACITY_TYPE
from tests.support.manifests import req


def _drift(
    docs: Sequence[Mapping[str, Any]], catalog_doc: Mapping[str, Any] | None = None
) -> dict[str, str | None]:
    i = prepare_round(
        [Document(copy.deepcopy(dict(d)), f"doc {n}") for n, d in enumerate(docs)],
        load_catalog(catalog_doc if catalog_doc is not None else catalog()),
        NOW,
    )
    return {c.node.name: c.drifted for c in i.candidates}


def _node(name: str = "a", **kw: Any) -> list[Mapping[str, Any]]:
    annotations = kw.pop("claim_annotations", None)
    n = managed(name, **kw)
    return [n, claim_for(n, annotations=annotations)]


def test_a_node_the_pool_still_admits_has_not_drifted() -> None:
    assert _drift(
        [pool(requirements=[req(CAPACITY_TYPE, "In", "on-demand", "spot")]), *_node()]
    ) == {"a": None}


def test_requirements_that_no_longer_admit_the_node_drift_it() -> None:
    d = _drift([pool(requirements=[req(CAPACITY_TYPE, "In", "spot")]), *_node()])
    assert (d["a"] or "").startswith("RequirementsDrifted: nodepool default no longer admits it")
    assert CAPACITY_TYPE in (d["a"] or "")


def test_a_required_custom_label_the_node_lacks_drifts_it_but_not_in_does_not() -> None:
    assert (_drift([pool(requirements=[req("team", "In", "a")]), *_node()])["a"] or "").startswith(
        "RequirementsDrifted"
    )
    assert _drift([pool(requirements=[req("team", "NotIn", "a")]), *_node()])["a"] is None
    assert (
        _drift([pool(requirements=[req("team", "In", "a")]), *_node(labels={"team": "a"})])["a"]
        is None
    )


def test_an_instance_type_no_longer_in_the_catalog_drifts_the_node() -> None:
    d = _drift([pool(), *_node()], catalog(["m5.large", "c5.large"]))
    assert d["a"] == "InstanceTypeNotFound: instance type 'm5.xlarge' is no longer offered"


def test_a_claim_younger_than_an_hour_is_not_held_against_the_catalog() -> None:
    """Karpenter checks a claim's type against the catalog only once it is an hour old: a
    type or offering missing from the cloud's answer for a while rolls no fresh node."""
    cat = catalog(["m5.large", "c5.large"])
    for age, drifted in (
        (timedelta(minutes=10), None),
        (timedelta(minutes=59), None),
        (
            timedelta(minutes=61),
            "InstanceTypeNotFound: instance type 'm5.xlarge' is no longer offered",
        ),
    ):
        n = managed("a")
        made = (NOW - age).strftime("%Y-%m-%dT%H:%M:%SZ")
        assert _drift([pool(), n, claim_for(n, created=made)], cat) == {"a": drifted}, age
    # the pool's own reasons are not delayed
    n = managed("a")
    young = claim_for(n, created=(NOW - timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ"))
    d = _drift([pool(requirements=[req(CAPACITY_TYPE, "In", "spot")]), n, young], cat)
    assert (d["a"] or "").startswith("RequirementsDrifted")


def test_a_zone_no_longer_offered_for_the_type_drifts_the_node() -> None:
    cat = catalog()
    for entry in cat["instanceTypes"]:
        if entry["name"] == "m5.xlarge":
            entry["offerings"] = [o for o in entry["offerings"] if o["zone"] != "us-east-1a"]
    d = _drift([pool(), *_node()], cat)
    assert (
        d["a"] == "InstanceTypeNotFound: m5.xlarge is no longer offered as on-demand in us-east-1a"
    )


def test_an_unavailable_offering_is_still_offered() -> None:
    cat = catalog(unavailable=[("m5.xlarge", "us-east-1a", "on-demand")])
    assert _drift([pool(), *_node()], cat)["a"] is None


def _hash_of(body: Mapping[str, Any]) -> dict[str, str]:
    return hash_annotations(NodePool.model_validate(body))


def test_a_template_changed_since_launch_drifts_claims_joinery_stamped() -> None:
    before = pool(labels={"team": "a"})
    after = pool(labels={"team": "b"})
    stamped = _hash_of(before)
    assert _drift([after, *_node(claim_annotations=stamped, labels={"team": "a"})])["a"] == (
        "NodePoolDrifted: nodepool default's template changed since launch"
    )
    assert _drift([before, *_node(claim_annotations=stamped, labels={"team": "a"})])["a"] is None


def test_a_hash_written_by_karpenter_or_another_version_is_never_drift() -> None:
    after = pool(labels={"team": "b"})
    for version in ("v3", "joinery-0", ""):
        stamped = {HASH_ANNOTATION: "12345", HASH_VERSION_ANNOTATION: version}
        assert _drift([after, *_node(claim_annotations=stamped, labels={"team": "b"})])["a"] is None


def test_the_hash_ignores_requirements_and_taint_order() -> None:
    a = NodePool.model_validate(pool(requirements=[req(CAPACITY_TYPE, "In", "spot")]))
    b = NodePool.model_validate(pool())
    assert template_hash(a) == template_hash(b)
    t1, t2 = {"key": "x", "effect": "NoSchedule"}, {"key": "y", "effect": "NoSchedule"}
    c = NodePool.model_validate(pool(taints=[t1, t2]))
    d = NodePool.model_validate(pool(taints=[t2, t1]))
    assert template_hash(c) == template_hash(d)
    assert template_hash(c) != template_hash(b)
    assert hash_annotations(b)[HASH_VERSION_ANNOTATION] == HASH_VERSION


def _with(body: dict[str, Any], **template_spec: str) -> NodePool:
    body["spec"]["template"]["spec"].update(template_spec)
    return NodePool.model_validate(body)


def test_the_hash_covers_expire_after_and_termination_grace_period_by_their_length() -> None:
    """Karpenter v1 hashes the whole template but its requirements: ``expireAfter`` and
    ``terminationGracePeriod`` included, as durations (``60m`` is ``1h``)."""
    base = template_hash(_with(pool(), expireAfter="720h"))
    assert template_hash(NodePool.model_validate(pool())) == base  # 720h is the default
    assert template_hash(_with(pool(), expireAfter="24h")) != base
    assert template_hash(_with(pool(), expireAfter="Never")) != base
    assert template_hash(_with(pool(), expireAfter="43200m")) == base
    tgp = template_hash(_with(pool(), terminationGracePeriod="1h"))
    assert tgp != base
    assert template_hash(_with(pool(), terminationGracePeriod="60m")) == tgp


def test_the_hash_ignores_what_is_outside_the_template() -> None:
    base = template_hash(NodePool.model_validate(pool()))
    for other in (
        pool(budgets=[{"nodes": "0"}], consolidate_after="Never", policy="WhenEmpty"),
        {**pool(), "spec": {**pool()["spec"], "weight": 50, "limits": {"cpu": "10"}}},
    ):
        assert template_hash(NodePool.model_validate(other)) == base


def test_editing_expire_after_or_the_grace_period_drifts_the_pools_nodes() -> None:
    stamped = _hash_of(pool())
    for field, value in (("expireAfter", "24h"), ("terminationGracePeriod", "2h")):
        edited = pool()
        edited["spec"]["template"]["spec"][field] = value
        assert _drift([edited, *_node(claim_annotations=stamped)])["a"] == (
            "NodePoolDrifted: nodepool default's template changed since launch"
        )
