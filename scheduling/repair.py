"""Node repair (Karpenter's NodeRepair gate): which unhealthy nodes to replace now.

Karpenter replaces a node whose condition has held a bad status for longer than that
condition's toleration (Ready False or Unknown for 30 minutes, and the AWS node monitoring
agent's conditions), by deleting its NodeClaim with the termination timestamp set to now, so
the drain does not wait on PDBs. It never does so while more than 20% of the node's pool
(rounded up) is unhealthy, counting every node with a bad condition whether or not its
toleration has run out: a pool-wide failure is left to a human rather than replaced at once.
A claim without a pool is held to the same share of the whole cluster.

Pure: the caller reads nodes and claims and the clock, and carries out the decision.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

ALLOWED_UNHEALTHY_PERCENT = 20
# How soon a blocked pool is looked at again (Karpenter requeues it after 5 minutes).
BLOCKED_RETRY = timedelta(minutes=5)


@dataclass(frozen=True, slots=True)
class RepairPolicy:
    condition: str
    status: str
    toleration: timedelta


# The kubelet's Ready condition (Karpenter's), then the EKS node monitoring agent's conditions
# (the AWS provider's RepairPolicies), with their tolerations.
REPAIR_POLICIES: tuple[RepairPolicy, ...] = (
    RepairPolicy("Ready", "False", timedelta(minutes=30)),
    RepairPolicy("Ready", "Unknown", timedelta(minutes=30)),
    RepairPolicy("AcceleratedHardwareReady", "False", timedelta(minutes=10)),
    RepairPolicy("StorageReady", "False", timedelta(minutes=30)),
    RepairPolicy("NetworkingReady", "False", timedelta(minutes=30)),
    RepairPolicy("KernelReady", "False", timedelta(minutes=30)),
    RepairPolicy("ContainerRuntimeReady", "False", timedelta(minutes=30)),
)


@dataclass(frozen=True, slots=True)
class Condition:
    status: str
    since: datetime  # lastTransitionTime


@dataclass(frozen=True)
class NodeHealth:
    """What repair reads of a Node: its conditions, its pool, and its NodeClaim (None: not
    managed, counted toward the cluster's share only)."""

    name: str
    conditions: Mapping[str, Condition]
    pool: str | None = None
    claim: str | None = None
    claim_deleting: bool = False


@dataclass(frozen=True, slots=True)
class Repair:
    node: str
    claim: str
    pool: str | None
    condition: str  # e.g. "Ready=Unknown"


@dataclass(frozen=True, slots=True)
class Blocked:
    node: str
    claim: str
    pool: str | None
    message: str


@dataclass
class RepairDecision:
    repairs: list[Repair] = field(default_factory=list)
    blocked: list[Blocked] = field(default_factory=list)
    # The earliest moment a node's toleration runs out (or a blocked pool is due another
    # look): when the next pass has something to do.
    next_check: datetime | None = None


def _matching(node: NodeHealth) -> list[tuple[RepairPolicy, Condition]]:
    out = []
    for policy in REPAIR_POLICIES:
        cond = node.conditions.get(policy.condition)
        if cond is not None and cond.status == policy.status:
            out.append((policy, cond))
    return out


def is_unhealthy(node: NodeHealth) -> bool:
    """A bad condition of any policy, toleration spent or not (what the 20% counts)."""
    return bool(_matching(node))


def due(node: NodeHealth) -> tuple[RepairPolicy, datetime] | None:
    """The policy whose toleration runs out first on this node, and when; None if healthy."""
    best: tuple[RepairPolicy, datetime] | None = None
    for policy, cond in _matching(node):
        at = cond.since + policy.toleration
        if best is None or at < best[1]:
            best = (policy, at)
    return best


def _allowed(total: int) -> int:
    return math.ceil(total * ALLOWED_UNHEALTHY_PERCENT / 100)


def decide(nodes: Iterable[NodeHealth], now: datetime) -> RepairDecision:
    """The claims to replace now, the nodes whose repair their pool's health holds back,
    and when to look again."""
    nodes = list(nodes)
    by_pool: dict[str, list[NodeHealth]] = {}
    for n in nodes:
        if n.pool is not None:
            by_pool.setdefault(n.pool, []).append(n)
    cluster_sick = sum(1 for n in nodes if is_unhealthy(n))
    out = RepairDecision()

    def later(at: datetime) -> None:
        if out.next_check is None or at < out.next_check:
            out.next_check = at

    for n in sorted(nodes, key=lambda n: n.name):
        if n.claim is None or n.claim_deleting:
            continue
        hit = due(n)
        if hit is None:
            continue
        policy, at = hit
        if now < at:
            later(at)
            continue
        if n.pool is not None:
            members = by_pool[n.pool]
            sick = sum(1 for m in members if is_unhealthy(m))
            allowed, scope = _allowed(len(members)), f"nodepool {n.pool}"
        else:
            sick, allowed, scope = cluster_sick, _allowed(len(nodes)), "the cluster"
        if sick > allowed:
            out.blocked.append(
                Blocked(
                    n.name,
                    n.claim,
                    n.pool,
                    f"more than {ALLOWED_UNHEALTHY_PERCENT}% of the nodes in {scope} are "
                    f"unhealthy ({sick} of {len(by_pool[n.pool]) if n.pool else len(nodes)})",
                )
            )
            later(now + BLOCKED_RETRY)
            continue
        out.repairs.append(Repair(n.name, n.claim, n.pool, f"{policy.condition}={policy.status}"))
    return out


def conditions_of(node: Mapping[str, Any]) -> dict[str, Condition]:
    """A Node object's conditions with a parsable lastTransitionTime (others are skipped:
    without it, how long the condition has held is unknown)."""
    out: dict[str, Condition] = {}
    for c in (node.get("status") or {}).get("conditions") or []:
        ltt = c.get("lastTransitionTime")
        if not c.get("type") or not ltt:
            continue
        if isinstance(ltt, datetime):
            since = ltt
        else:
            try:
                since = datetime.fromisoformat(str(ltt).replace("Z", "+00:00"))
            except ValueError:
                continue
        out[str(c["type"])] = Condition(str(c.get("status") or ""), since)
    return out
