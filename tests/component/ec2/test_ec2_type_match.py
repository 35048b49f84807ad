"""The instance-type match memo: same answers as matching afresh, bounded, never stale."""

from __future__ import annotations

from activities.ec2.type_match import CompatibleTypes, compatible_types
from models.instancetype import InstanceType, Offering
from models.requirements import Requirements

GIB = 1024**3


def catalog() -> list[InstanceType]:
    def it(name: str, family: str, cpu: int, mem_gib: int) -> InstanceType:
        reqs = Requirements.from_labels(
            {"node.kubernetes.io/instance-type": name, "karpenter.k8s.aws/instance-family": family}
        )
        return InstanceType.build(
            name,
            {"cpu": cpu * 1000, "memory": mem_gib * GIB * 1000, "pods": 29000},
            [Offering("us-east-1a", "on-demand", 0.1 * cpu, True)],
            {},
            list(reqs.values()),
        )

    return [it("m5.large", "m5", 2, 8), it("m5.xlarge", "m5", 4, 16), it("c5.large", "c5", 2, 4)]


def family(*names: str) -> Requirements:
    return Requirements.from_selector_terms(
        [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": list(names)}]
    )


def names(types: list[InstanceType]) -> list[str]:
    return [t.name for t in types]


def test_answers_equal_a_fresh_match_and_are_shared_across_equal_shapes() -> None:
    memo, types = CompatibleTypes(), catalog()
    small, big = {"cpu": 1000}, {"cpu": 3000}
    for reqs, requests in [(family("m5"), small), (family("m5", "c5"), small), (family("m5"), big)]:
        assert names(memo(types, reqs, requests)) == names(compatible_types(types, reqs, requests))
    # an equal set written again is one entry; the copy handed out is the caller's own
    first = memo(types, family("m5"), {"cpu": 1000})
    first.clear()
    assert names(memo(types, family("m5"), {"cpu": 1000})) == ["m5.large", "m5.xlarge"]
    assert len(memo._by_catalog[id(types)][1]) == 3


def test_a_new_catalog_list_is_matched_afresh_and_the_memo_stays_bounded() -> None:
    memo = CompatibleTypes(max_catalogs=2, max_shapes=2)
    old = catalog()
    assert names(memo(old, family("c5"), {})) == ["c5.large"]
    new = [t for t in catalog() if t.name != "c5.large"]  # the catalog changed
    assert memo(new, family("c5"), {}) == []
    assert all(t in new for t in memo(new, family("m5"), {}))  # types of the list asked about
    for n in range(5):
        memo(new, family("m5"), {"cpu": n})
    memo(catalog(), family("m5"), {})
    memo(catalog(), family("m5"), {})
    assert len(memo._by_catalog) == 2
    assert all(len(shapes) <= 2 for _, shapes in memo._by_catalog.values())


def test_a_template_label_on_the_claim_does_not_rule_types_out() -> None:
    """A NodePool template label (``team: a``) is one of its claims' requirements; no
    instance type defines it, and Karpenter's launch filter (the claim's requirements checked
    against the type's) keeps every type: the label is the node's, not the type's. A custom
    key a claim requires with NotIn is no obstacle either; a well-known one still filters."""
    labelled = Requirements.from_selector_terms(
        [
            {"key": "team", "operator": "In", "values": ["a"]},
            {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m5"]},
        ]
    )
    assert names(compatible_types(catalog(), labelled, {})) == ["m5.large", "m5.xlarge"]
