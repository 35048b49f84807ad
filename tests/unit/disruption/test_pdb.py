"""PodDisruptionBudgets: disruptions allowed now as the disruption controller computes them,
counted across a round; invalid PDBs named by field."""

from __future__ import annotations

import pytest

from scheduling.disruption.pdb import PdbError, PdbLedger, parse_pdb
from scheduling.pods import Pod, parse_pod


def _pods(n: int, app: str = "web") -> list[Pod]:
    return [
        parse_pod(
            {"metadata": {"name": f"{app}-{i}", "labels": {"app": app}}, "spec": {"containers": []}}
        )
        for i in range(n)
    ]


def _pdb(**spec: object) -> dict[str, object]:
    return {
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, **spec},
    }


@pytest.mark.parametrize(
    ("spec", "healthy", "allowed"),
    [
        ({"minAvailable": 3}, 4, 1),
        ({"minAvailable": 4}, 4, 0),
        ({"minAvailable": "50%"}, 4, 2),
        ({"minAvailable": "60%"}, 4, 1),  # ceil(2.4) = 3 required
        ({"maxUnavailable": 1}, 4, 1),
        ({"maxUnavailable": 1}, 3, 0),  # one already unhealthy
        ({"maxUnavailable": "30%"}, 4, 2),  # ceil(1.2) = 2 of 4 may be down
        ({"maxUnavailable": 0}, 4, 0),
    ],
)
def test_disruptions_allowed(spec: dict[str, object], healthy: int, allowed: int) -> None:
    pods = _pods(4)
    ok = {p.key for p in pods[:healthy]}
    ledger = PdbLedger([parse_pdb(_pdb(**spec))], pods, ok)
    assert ledger.allowed["default/web"] == allowed
    assert (ledger.blocking(pods[0]) is None) == (allowed > 0)


def test_evictions_are_counted_across_the_round() -> None:
    pods = _pods(5)
    ledger = PdbLedger([parse_pdb(_pdb(minAvailable=3))], pods, {p.key for p in pods})
    assert ledger.can_evict(pods[:2])
    assert not ledger.can_evict(pods[:3])
    ledger.take(pods[:1])
    assert ledger.can_evict(pods[1:2])
    assert not ledger.can_evict(pods[1:3])
    ledger.take(pods[1:2])
    assert ledger.blocking(pods[2]) is not None
    assert "allows no eviction" in (ledger.blocking(pods[2]) or "")


def test_a_pod_under_two_pdbs_cannot_be_evicted() -> None:
    pods = _pods(3)
    other = {
        "metadata": {"name": "all", "namespace": "default"},
        "spec": {"selector": {}, "maxUnavailable": 3},
    }
    ledger = PdbLedger(
        [parse_pdb(_pdb(maxUnavailable=3)), parse_pdb(other)], pods, {p.key for p in pods}
    )
    assert "more than one PodDisruptionBudget" in (ledger.blocking(pods[0]) or "")
    assert not ledger.can_evict(pods[:1])


def test_pdbs_select_only_in_their_namespace() -> None:
    pods = _pods(2)
    body = _pdb(minAvailable=2)
    body["metadata"] = {"name": "web", "namespace": "other"}
    ledger = PdbLedger([parse_pdb(body)], pods, {p.key for p in pods})
    assert ledger.blocking(pods[0]) is None


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({"minAvailable": 1, "maxUnavailable": 1}, "mutually exclusive"),
        ({"minAvailable": "ten"}, "spec.minAvailable"),
        ({"maxUnavailable": -1}, "spec.maxUnavailable"),
        ({"maxUnavailable": True}, "spec.maxUnavailable"),
    ],
)
def test_invalid_pdbs_name_the_field(spec: dict[str, object], field: str) -> None:
    with pytest.raises(PdbError, match=field):
        parse_pdb(_pdb(**spec))
