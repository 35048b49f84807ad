"""Disruption budgets per NodePool, counted as Karpenter counts them.

For each pool and reason, the allowed number of disruptions is the lowest ``nodes`` value of
the budgets that apply to that reason and are active at ``now`` (a budget without a schedule
is always active), a percentage taken of the pool's initialized nodes and rounded up, minus
the pool's nodes already deleting or NotReady (they use budget up whatever disrupted them),
never below zero. A node whose claim says ``InstanceTerminating`` (drained, its instance
being deleted) counts in neither, as Karpenter leaves it out: its budget is free again. A
budget that cannot be evaluated (a schedule no cron parser accepts) allows nothing, as
Karpenter fails closed. One round then takes from what is left: the ledger is shared by
every method of the round, so commands together never exceed it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from models.cron import next_hit, schedule_error
from models.duration import parse_duration
from models.nodepool import Budget, NodePool
from scheduling.disruption.types import REASONS, ManagedNode


class BudgetError(ValueError):
    """A budget that cannot be evaluated, with the field that is wrong."""


def is_active(budget: Budget, now: datetime) -> bool:
    """Whether ``budget`` applies at ``now``: always without a schedule; otherwise when the
    schedule's next hit after ``now - duration`` is no later than ``now`` (UTC)."""
    if budget.schedule is None or budget.duration is None:
        return True
    err = schedule_error(budget.schedule)
    if err:
        raise BudgetError(f"schedule: {err}")
    start = now - timedelta(seconds=parse_duration(budget.duration))
    return next_hit(budget.schedule, start) <= now


def budget_nodes(budget: Budget, total: int) -> int:
    """``nodes`` as a count: a percentage of ``total`` rounded up, or the integer itself."""
    if budget.nodes.endswith("%"):
        return math.ceil(total * int(budget.nodes[:-1]) / 100)
    return int(budget.nodes)


def _applies(budget: Budget, reason: str) -> bool:
    return budget.reasons is None or reason in budget.reasons


@dataclass
class PoolBudget:
    """One pool's budget state this round, for the one-line reasons people read."""

    total: int  # initialized nodes in the pool
    disrupting: int  # of those, deleting or NotReady
    allowed: dict[str, int]  # per reason, before this round's commands
    taken: dict[str, int]
    error: str | None = None


class BudgetLedger:
    """What each pool may still disrupt this round, per reason."""

    def __init__(self, pools: Mapping[str, PoolBudget]) -> None:
        self.pools = dict(pools)

    @classmethod
    def build(
        cls, pools: Iterable[NodePool], managed: Iterable[ManagedNode], now: datetime
    ) -> BudgetLedger:
        nodes = list(managed)
        out: dict[str, PoolBudget] = {}
        for pool in pools:
            mine = [
                n
                for n in nodes
                if n.pool == pool.name and n.initialized and not n.instance_terminating
            ]
            total = len(mine)
            disrupting = sum(1 for n in mine if n.deleting or not n.ready)
            allowed: dict[str, int] = {}
            error = None
            for reason in REASONS:
                try:
                    limits = [
                        budget_nodes(b, total)
                        for b in pool.spec.disruption.budgets
                        if _applies(b, reason) and is_active(b, now)
                    ]
                except BudgetError as exc:
                    error = str(exc)
                    limits = [0]
                limit = min(limits) if limits else total
                allowed[reason] = max(0, limit - disrupting)
            taken = dict.fromkeys(REASONS, 0)
            out[pool.name] = PoolBudget(total, disrupting, allowed, taken, error)
        return cls(out)

    def remaining(self, pool: str, reason: str) -> int:
        """Disruptions ``pool`` still allows for ``reason`` this round. A pool counts
        every command of the round against each reason's limit, as one pool's nodes are
        one population whatever disrupts them."""
        state = self.pools.get(pool)
        if state is None:
            return 0
        used = sum(state.taken.values())
        return max(0, state.allowed[reason] - used)

    def take(self, pool: str, reason: str, n: int = 1) -> None:
        if n > self.remaining(pool, reason):
            raise ValueError(f"budget of pool {pool} for {reason} would be exceeded")
        self.pools[pool].taken[reason] += n

    def exhausted(self, pool: str) -> bool:
        """Whether ``pool`` allows no disruption at all now, for any reason."""
        return all(self.remaining(pool, r) == 0 for r in REASONS)

    def describe(self, pool: str, reason: str | None = None) -> str:
        """One line: why ``pool`` allows no (more) disruption."""
        state = self.pools.get(pool)
        if state is None:
            return f"nodepool {pool} is not among the inputs"
        if state.error:
            return f"nodepool {pool} budget cannot be evaluated ({state.error}); nothing allowed"
        reasons = [reason] if reason else list(REASONS)
        allowed = max(state.allowed[r] for r in reasons)
        used = sum(state.taken.values())
        what = f"for {reason} " if reason else ""
        if allowed == 0:
            return (
                f"nodepool {pool} budget allows no disruption {what}now "
                f"({state.total} initialized node(s), {state.disrupting} already disrupting)"
            )
        return (
            f"nodepool {pool} budget {what}is used up: {used} of {allowed} disruption(s) "
            "allowed now are taken by this round"
        )
