"""The launch's narrowing (available offerings, spot no dearer than on-demand, the cheapest
N types) judged against minValues, without EC2."""

from __future__ import annotations

from activities.ec2.fleet import launch_min_values_shortfall, rank_candidates
from models.instancetype import InstanceType, Offering
from models.requirements import Requirement, Requirements

IT = "node.kubernetes.io/instance-type"


def _type(name: str, od: float, spot: float, spot_available: bool = True) -> InstanceType:
    return InstanceType(
        name=name,
        capacity={"cpu": 2000, "memory": 8 << 30, "pods": 29},
        overhead={},
        requirements=Requirements([Requirement(IT, False, frozenset({name}))]),
        offerings=(
            Offering("us-east-1a", "on-demand", od),
            Offering("us-east-1a", "spot", spot, spot_available),
        ),
    )


TYPES = [_type(f"t{i}", od=0.1 + i / 100, spot=0.05 + i / 100) for i in range(6)]


def _reqs(capacity: str, min_values: int | None) -> Requirements:
    return Requirements(
        [
            Requirement.create(IT, "In", [t.name for t in TYPES], min_values),
            Requirement.create("karpenter.sh/capacity-type", "In", [capacity]),
        ]
    )


def test_truncation_below_min_values_is_a_shortfall() -> None:
    reqs = _reqs("on-demand", 4)
    kept = rank_candidates(TYPES, reqs, "on-demand", 3)
    assert [c.instance_type.name for c in kept] == ["t0", "t1", "t2"]
    short = launch_min_values_shortfall(kept, reqs)
    assert short is not None and "minValues 4" in short
    assert launch_min_values_shortfall(rank_candidates(TYPES, reqs, "on-demand", 4), reqs) is None


def test_unavailable_offerings_count_against_min_values() -> None:
    types = [_type(t.name, 0.1, 0.05, spot_available=i < 2) for i, t in enumerate(TYPES)]
    reqs = _reqs("spot", 3)
    kept = rank_candidates(types, reqs, "spot", 60)
    assert len(kept) == 2
    assert launch_min_values_shortfall(kept, reqs) is not None


def test_without_min_values_nothing_is_checked() -> None:
    reqs = _reqs("on-demand", None)
    assert launch_min_values_shortfall(rank_candidates(TYPES, reqs, "on-demand", 1), reqs) is None


def test_min_values_keeps_spot_dearer_than_on_demand() -> None:
    """Karpenter's spot-offering filter steps aside when minValues asks for flexibility."""
    types = [_type("cheap", od=0.10, spot=0.05), _type("dear", od=0.5, spot=0.2)]
    reqs = Requirements(
        [
            Requirement.create(IT, "In", ["cheap", "dear"], 2),
            Requirement.create("karpenter.sh/capacity-type", "In", ["spot", "on-demand"]),
        ]
    )
    assert len(rank_candidates(types, reqs, "spot", 60)) == 2
    plain = Requirements(
        [
            Requirement.create(IT, "In", ["cheap", "dear"]),
            Requirement.create("karpenter.sh/capacity-type", "In", ["spot", "on-demand"]),
        ]
    )
    assert [c.instance_type.name for c in rank_candidates(types, plain, "spot", 60)] == ["cheap"]
