"""Karpenter's registration-health memory: the last four outcomes, False from half failed
(when the last one failed), True when the last succeeded and fewer failed; seeded after a
restart from the condition as written; reset when the pool or its NodeClass changes."""

from __future__ import annotations

from typing import Any

from activities.status.registration_health import RegistrationHealth, reset


def _pool(status: str | None = None, generation: int = 1, observed: int = 1) -> dict[str, Any]:
    conditions = (
        []
        if status is None
        else [{"type": "NodeRegistrationHealthy", "status": status, "observedGeneration": observed}]
    )
    return {
        "metadata": {"name": "p", "uid": "u1", "generation": generation},
        "status": {"conditions": conditions, "nodeClassObservedGeneration": 3},
    }


def _claim(launched: str = "True", uid: str = "u1") -> dict[str, Any]:
    return {
        "metadata": {"ownerReferences": [{"kind": "NodePool", "name": "p", "uid": uid}]},
        "status": {"conditions": [{"type": "Launched", "status": launched, "reason": "Boom"}]},
    }


def _after(t: RegistrationHealth, pool: dict[str, Any], success: bool) -> str | None:
    t.record(_claim("False" if not success else "True"), success)
    wanted = t.wanted(pool)
    return None if wanted is None else wanted.status


def test_half_of_the_last_four_failed_turns_it_false() -> None:
    t = RegistrationHealth()
    pool = _pool()
    assert _after(t, pool, False) is None  # 1 of 4: left as it is
    assert _after(t, pool, False) == "False"  # 2 of 4
    t.record(_claim(), True)
    assert t.wanted(_pool("False")) is None  # half still failed
    t.record(_claim(), True)
    assert t.wanted(_pool("False")) is None
    t.record(_claim(), True)
    wanted = t.wanted(_pool("False"))
    assert wanted is not None and wanted.status == "True"  # the first failure fell out


def test_seeded_from_the_condition_after_a_restart() -> None:
    t = RegistrationHealth()
    t.record(_claim(), True)
    assert t.wanted(_pool("False")) is None  # [F, F, T]: still unhealthy
    fresh = RegistrationHealth()
    fresh.record(_claim("False"), False)
    assert fresh.wanted(_pool("True")) is None  # [T, F]: still healthy


def test_claims_of_another_pool_with_the_name_do_not_count() -> None:
    t = RegistrationHealth()
    t.record(_claim("False", uid="old"), False)
    t.record(_claim("False", uid="old"), False)
    assert t.wanted(_pool()) is None


def test_reset_when_the_pool_or_its_nodeclass_changes() -> None:
    nodeclass = {"metadata": {"generation": 3}}
    assert reset(_pool("True"), nodeclass) == (None, None)
    unknown, recorded = reset(_pool("True", generation=2), nodeclass)
    assert unknown is not None and unknown.status == "Unknown" and recorded is None
    unknown, recorded = reset(_pool("True"), {"metadata": {"generation": 4}})
    assert unknown is not None and recorded == 4
    assert reset(_pool(None), nodeclass)[0] is not None
    assert reset(_pool("True"), None) == (None, None)  # no NodeClass: left alone
