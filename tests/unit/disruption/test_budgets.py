"""Budgets per NodePool as Karpenter counts them: percentage of initialized nodes rounded up,
minus nodes deleting or NotReady; reasons; cron schedules with a duration; the lowest active
budget wins; default 10%."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import ValidationError

from models.nodepool import NodePool
from scheduling.disruption.budgets import BudgetLedger, budget_nodes, is_active
from scheduling.disruption.types import DRIFTED, EMPTY, UNDERUTILIZED, ManagedNode
from tests.support.manifests import nodepool_body

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)  # a Monday


def _pool(name: str = "default", budgets: list[dict[str, object]] | None = None) -> NodePool:
    disruption = {} if budgets is None else {"budgets": budgets}
    return NodePool.model_validate(nodepool_body(name, node_class="x", disruption=disruption))


def _nodes(n: int, pool: str = "default", **kw: bool) -> list[ManagedNode]:
    base: dict[str, Any] = dict(initialized=True, deleting=False, ready=True)
    out = []
    for i in range(n):
        flags = {**base, **{k: v for k, v in kw.items() if i == 0}}
        out.append(
            ManagedNode(
                f"{pool}-{i}", f"{pool}-{i}", pool, "m5.large", "a", "on-demand", 0.1, **flags
            )
        )
    return out


def test_default_budget_is_ten_percent_rounded_up() -> None:
    ledger = BudgetLedger.build([_pool()], _nodes(11), NOW)
    assert ledger.remaining("default", UNDERUTILIZED) == 2  # ceil(1.1)
    ledger = BudgetLedger.build([_pool()], _nodes(3), NOW)
    assert ledger.remaining("default", EMPTY) == 1  # ceil(0.3)


def test_count_budget_and_uninitialized_nodes_do_not_count() -> None:
    fresh = ManagedNode(
        "new", "new", "default", "m5.large", "a", "on-demand", 0.1, False, False, True
    )
    nodes = [*_nodes(10), fresh]
    ledger = BudgetLedger.build([_pool(budgets=[{"nodes": "50%"}])], nodes, NOW)
    assert ledger.remaining("default", DRIFTED) == 5  # of the 10 initialized


def test_deleting_and_not_ready_nodes_use_up_budget() -> None:
    nodes = _nodes(10, deleting=True)  # node 0 deleting
    ledger = BudgetLedger.build([_pool(budgets=[{"nodes": "2"}])], nodes, NOW)
    assert ledger.remaining("default", EMPTY) == 1
    nodes = _nodes(10, ready=False)
    ledger = BudgetLedger.build([_pool(budgets=[{"nodes": "1"}])], nodes, NOW)
    assert ledger.remaining("default", EMPTY) == 0
    assert ledger.exhausted("default")
    assert "1 already disrupting" in ledger.describe("default")


def test_a_node_whose_instance_is_terminating_counts_in_neither() -> None:
    """Karpenter leaves a node out of its budget count once its claim says
    InstanceTerminating (drained, the instance being deleted): the budget it held is free."""
    nodes = _nodes(10, deleting=True)
    ledger = BudgetLedger.build([_pool()], nodes, NOW)
    assert ledger.remaining("default", EMPTY) == 0  # ceil(10 x 10%) - 1 deleting
    nodes = _nodes(10, deleting=True, instance_terminating=True)
    ledger = BudgetLedger.build([_pool()], nodes, NOW)
    assert ledger.remaining("default", EMPTY) == 1  # ceil(9 x 10%), none disrupting
    assert ledger.pools["default"].total == 9


def test_reasons_and_the_lowest_active_budget_wins() -> None:
    pool = _pool(budgets=[{"nodes": "5"}, {"nodes": "0", "reasons": ["Drifted"]}])
    ledger = BudgetLedger.build([pool], _nodes(10), NOW)
    assert ledger.remaining("default", DRIFTED) == 0
    assert ledger.remaining("default", EMPTY) == 5
    assert not ledger.exhausted("default")


def test_budgets_only_for_one_reason_leave_the_others_unlimited() -> None:
    pool = _pool(budgets=[{"nodes": "1", "reasons": ["Drifted"]}])
    ledger = BudgetLedger.build([pool], _nodes(10), NOW)
    assert ledger.remaining("default", UNDERUTILIZED) == 10
    assert ledger.remaining("default", DRIFTED) == 1


def test_a_round_counts_every_command_against_the_pool() -> None:
    ledger = BudgetLedger.build([_pool(budgets=[{"nodes": "2"}])], _nodes(10), NOW)
    ledger.take("default", EMPTY)
    assert ledger.remaining("default", DRIFTED) == 1
    ledger.take("default", DRIFTED)
    assert ledger.remaining("default", UNDERUTILIZED) == 0
    with pytest.raises(ValueError):
        ledger.take("default", UNDERUTILIZED)
    assert "used up" in ledger.describe("default", UNDERUTILIZED)


@pytest.mark.parametrize(
    ("schedule", "duration", "active"),
    [
        ("0 9 * * *", "8h", True),  # 09:00-17:00 daily; now is 12:00
        ("0 9 * * *", "2h", False),  # 09:00-11:00
        ("0 12 * * *", "1m", True),  # starts exactly now
        ("0 0 * * 1", "13h", True),  # Monday 00:00 for 13h
        ("0 0 * * 2", "24h", False),  # Tuesday
        ("@daily", "13h", True),
        ("@daily", "12h", False),  # the window [00:00, 12:00) has just closed
        ("@hourly", "5m", True),
    ],
)
def test_schedules_are_cron_in_utc_with_a_duration(
    schedule: str, duration: str, active: bool
) -> None:
    pool = _pool(budgets=[{"nodes": "0", "schedule": schedule, "duration": duration}])
    assert is_active(pool.spec.disruption.budgets[0], NOW) is active
    ledger = BudgetLedger.build([pool], _nodes(10), NOW)
    assert ledger.remaining("default", EMPTY) == (0 if active else 10)


def test_an_inactive_schedule_leaves_the_other_budgets() -> None:
    pool = _pool(
        budgets=[{"nodes": "0", "schedule": "0 0 * * 2", "duration": "1h"}, {"nodes": "30%"}]
    )
    assert BudgetLedger.build([pool], _nodes(10), NOW).remaining("default", EMPTY) == 3


@pytest.mark.parametrize("schedule", ["61 * * * *", "* * *", "@fortnightly", "a b c d e"])
def test_an_invalid_schedule_is_rejected_naming_the_field(schedule: str) -> None:
    with pytest.raises(ValidationError) as err:
        _pool(budgets=[{"nodes": "1", "schedule": schedule, "duration": "1h"}])
    assert "schedule" in str(err.value)


def test_percentages_round_up_and_counts_are_taken_as_is() -> None:
    pool = _pool(budgets=[{"nodes": "15%"}])
    assert budget_nodes(pool.spec.disruption.budgets[0], 7) == 2
    assert budget_nodes(pool.spec.disruption.budgets[0], 0) == 0
