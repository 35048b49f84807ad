"""The requirement algebra: intersections of every operator pair, Gt/Lt bounds, compatible vs
intersects, well-known vs custom keys, beta-key normalisation."""

from __future__ import annotations

import itertools

import pytest

from models.requirements import Requirement, Requirements

SAMPLES = ["a", "b", "c", "1", "3", "5", "7", "9"]
OPS: dict[str, list[str]] = {
    "In": ["a", "5"],
    "NotIn": ["a", "3"],
    "Exists": [],
    "DoesNotExist": [],
    "Gt": ["3"],
    "Lt": ["7"],
}


def mk(op: str, key: str = "k") -> Requirement:
    return Requirement.create(key, op, OPS[op])


def allows(op: str, value: str | None) -> bool:
    """Reference semantics: value None means the label is absent."""
    if value is None:
        return op in ("NotIn", "DoesNotExist")
    if op == "In":
        return value in OPS[op]
    if op == "NotIn":
        return value not in OPS[op]
    if op == "Exists":
        return True
    if op == "DoesNotExist":
        return False
    n = int(value) if value.isdigit() else None
    if n is None:
        return False
    return n > 3 if op == "Gt" else n < 7


@pytest.mark.parametrize(("a", "b"), list(itertools.product(OPS, OPS)))
def test_intersection_of_every_operator_pair_matches_reference(a: str, b: str) -> None:
    r = mk(a).intersection(mk(b))
    for v in SAMPLES:
        assert r.has(v) == (allows(a, v) and allows(b, v)), (a, b, v)


@pytest.mark.parametrize(("a", "b"), list(itertools.product(OPS, OPS)))
def test_intersection_is_commutative(a: str, b: str) -> None:
    ab, ba = mk(a).intersection(mk(b)), mk(b).intersection(mk(a))
    assert [ab.has(v) for v in SAMPLES] == [ba.has(v) for v in SAMPLES]


def test_create_rejects_bad_numeric_operands() -> None:
    with pytest.raises(ValueError):
        Requirement.create("k", "Gt", ["x"])
    with pytest.raises(ValueError):
        Requirement.create("k", "Lt", ["1", "2"])
    with pytest.raises(ValueError):
        Requirement.create("k", "Gt", [])
    with pytest.raises(ValueError):
        Requirement.create("k", "Near", ["1"])


def test_gt_lt_bounds() -> None:
    r = Requirement.create("k", "Gt", ["3"]).intersection(Requirement.create("k", "Lt", ["6"]))
    assert [v for v in ("3", "4", "5", "6", "x") if r.has(v)] == ["4", "5"]
    assert len(r) == 2
    empty = Requirement.create("k", "Gt", ["5"]).intersection(Requirement.create("k", "Lt", ["6"]))
    assert len(empty) == 0
    assert empty.operator == "DoesNotExist"


def test_gt_narrows_in_values_to_integers_above() -> None:
    r = Requirement.create("k", "In", ["2", "6", "x"]).intersection(
        Requirement.create("k", "Gt", ["5"])
    )
    assert r.operator == "In" and r.values == frozenset({"6"})


def test_tighter_bound_wins() -> None:
    r = Requirement.create("k", "Gt", ["3"]).intersection(Requirement.create("k", "Gt", ["5"]))
    assert r.gt == 5 and r.operator == "Gt"
    r = Requirement.create("k", "Lt", ["3"]).intersection(Requirement.create("k", "Lt", ["5"]))
    assert r.lt == 3 and r.operator == "Lt"


def test_operator_and_to_dict_round_trip() -> None:
    for op in ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"):
        r = mk(op)
        assert r.operator == op
        d = r.to_dict()
        again = Requirement.create(str(d["key"]), str(d["operator"]), d.get("values", []))  # type: ignore[arg-type]
        assert [again.has(v) for v in SAMPLES] == [r.has(v) for v in SAMPLES]


def test_min_values_kept_through_intersection_and_output() -> None:
    r = Requirement.create("k", "Exists", min_values=2).intersection(
        Requirement.create("k", "In", ["a", "b", "c"], min_values=3)
    )
    assert r.min_values == 3
    assert r.to_dict()["minValues"] == 3


def test_in_len_and_complement_len() -> None:
    assert len(Requirement.create("k", "In", ["a", "b"])) == 2
    assert len(Requirement.create("k", "Exists")) > 10**9
    assert len(Requirement.create("k", "DoesNotExist")) == 0


def test_requirements_adding_same_key_intersects() -> None:
    reqs = Requirements(
        [Requirement.create("k", "In", ["a", "b"]), Requirement.create("k", "NotIn", ["a"])]
    )
    assert len(reqs) == 1
    assert reqs["k"].values == frozenset({"b"}) and not reqs["k"].complement


def test_with_requirements_does_not_mutate() -> None:
    base = Requirements([Requirement.create("k", "In", ["a", "b"])])
    narrowed = base.with_requirements([Requirement.create("k", "In", ["a"])])
    assert base["k"].values == frozenset({"a", "b"})
    assert narrowed["k"].values == frozenset({"a"})


def test_intersects_conflict_names_the_key() -> None:
    a = Requirements([Requirement.create("zone", "In", ["a"])])
    b = Requirements([Requirement.create("zone", "In", ["b"])])
    why = a.intersects(b)
    assert why is not None and "zone" in why
    assert a.intersects(Requirements([Requirement.create("zone", "In", ["a", "b"])])) is None


def test_intersects_ignores_keys_not_shared() -> None:
    a = Requirements([Requirement.create("x", "In", ["a"])])
    b = Requirements([Requirement.create("y", "In", ["b"])])
    assert a.intersects(b) is None


def test_intersects_allows_two_negative_requirements_with_empty_intersection() -> None:
    a = Requirements([Requirement.create("k", "DoesNotExist")])
    assert a.intersects(Requirements([Requirement.create("k", "NotIn", ["x"])])) is None
    assert a.intersects(Requirements([Requirement.create("k", "DoesNotExist")])) is None
    assert a.intersects(Requirements([Requirement.create("k", "Exists")])) is not None
    assert a.intersects(Requirements([Requirement.create("k", "In", ["x"])])) is not None


def test_compatible_requires_custom_keys_to_be_defined() -> None:
    node = Requirements([Requirement.create("kubernetes.io/arch", "In", ["amd64"])])
    pod_custom = Requirements([Requirement.create("team", "In", ["x"])])
    why = node.compatible(pod_custom)
    assert why is not None and "team" in why
    # intersects alone does not care about undefined keys
    assert node.intersects(pod_custom) is None
    # negative requirements on undefined custom keys are fine
    assert node.compatible(Requirements([Requirement.create("team", "NotIn", ["x"])])) is None
    assert node.compatible(Requirements([Requirement.create("team", "DoesNotExist")])) is None


def test_compatible_allows_undefined_well_known_keys() -> None:
    node = Requirements([Requirement.create("kubernetes.io/arch", "In", ["amd64"])])
    pod = Requirements(
        [
            Requirement.create("topology.kubernetes.io/zone", "In", ["a"]),
            Requirement.create("karpenter.sh/capacity-type", "In", ["spot"]),
            Requirement.create("karpenter.k8s.aws/instance-family", "In", ["m5"]),
        ]
    )
    assert node.compatible(pod) is None


def test_compatible_with_extra_allowed_keys() -> None:
    node = Requirements([Requirement.create("kubernetes.io/arch", "In", ["amd64"])])
    pod = Requirements([Requirement.create("size", "In", ["small"])])
    assert node.compatible(pod) is not None
    assert node.compatible(pod, frozenset({"size"})) is None


def test_compatible_still_checks_shared_keys() -> None:
    node = Requirements([Requirement.create("kubernetes.io/arch", "In", ["amd64"])])
    pod = Requirements([Requirement.create("kubernetes.io/arch", "In", ["arm64"])])
    assert node.compatible(pod) is not None


def test_beta_keys_are_normalised() -> None:
    r = Requirement.create("beta.kubernetes.io/arch", "In", ["arm64"])
    assert r.key == "kubernetes.io/arch"
    z = Requirement.create("failure-domain.beta.kubernetes.io/zone", "In", ["a"])
    assert z.key == "topology.kubernetes.io/zone"
    labels = Requirements.from_labels({"failure-domain.beta.kubernetes.io/region": "r"})
    assert "topology.kubernetes.io/region" in labels


def test_from_selector_terms_and_to_list() -> None:
    reqs = Requirements.from_selector_terms(
        [
            {"key": "b", "operator": "In", "values": ["1", "2"], "minValues": 2},
            {"key": "a", "operator": "Exists"},
        ]
    )
    assert reqs.to_list() == [
        {"key": "a", "operator": "Exists"},
        {"key": "b", "operator": "In", "values": ["1", "2"], "minValues": 2},
    ]


def test_labels_are_single_valued_in_keys() -> None:
    reqs = Requirements(
        [
            Requirement.create("a", "In", ["x"]),
            Requirement.create("b", "In", ["x", "y"]),
            Requirement.create("c", "Exists"),
        ]
    )
    assert reqs.labels() == {"a": "x"}


def test_get_or_exists() -> None:
    reqs = Requirements([Requirement.create("a", "In", ["x"])])
    assert reqs.get_or_exists("zzz").operator == "Exists"
    assert reqs.get_or_exists("a").values == frozenset({"x"})
