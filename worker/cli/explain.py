"""Why a node is disrupted, blocked or kept: the answer ``joinery explain NODE`` prints.

Four sources, each saying something the others cannot:
- the engine's verdict now (one round run read-only on the live cluster, as ``joinery plan
  --disruption --kubeconfig`` runs it), held back if ``joinery pause`` holds its NodePool;
- the DisruptionWorkflow's last round (what was actually decided and done, from its
  ``status`` query), which may be unavailable;
- the NodePool's budget state (allowed now per reason, already disrupting, taken by the
  round the engine just computed);
- the NodeClaim's disruption conditions (``Consolidatable``, ``Drifted``, ``Empty``,
  ``DisruptionReason``), as ``kubectl get nodeclaim -o yaml`` shows them.

Pure: the command (``worker.cli.explain_command``) reads everything and passes it in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from activities.disruption.compute import summary
from models import conditions as C
from scheduling.disruption.budgets import PoolBudget
from scheduling.disruption.round import RoundResult
from scheduling.disruption.types import REASONS, Command
from workflows.disruption.state import DisruptionStatus, NodeOutcome

# Verdicts of the engine now.
DISRUPT = "disrupt"
BLOCKED = "blocked"
KEPT = "kept"
UNMANAGED = "unmanaged"
ABSENT = "absent"

DISRUPTION_CONDITIONS = (C.CONSOLIDATABLE, C.DRIFTED, C.EMPTY, C.DISRUPTION_REASON)
NODES_SHOWN = 5  # a command's other nodes named on the text line (JSON names them all)


@dataclass
class Now:
    """The engine's answer on the live cluster."""

    verdict: str
    reason: str
    # With DISRUPT: the command's method, nodes and replacement instance types.
    method: str = ""
    nodes: list[str] = field(default_factory=list)
    replacements: list[str] = field(default_factory=list)
    savings_per_hour: float = 0.0
    held_by: str = ""  # why a pause holds the command back, if one does


@dataclass
class LastRound:
    """The DisruptionWorkflow's last round about the node, or why it cannot be told."""

    available: bool
    error: str = ""
    round: int = 0
    at: str = ""
    phase: str = ""
    outcome: str = ""  # a workflows.disruption.state outcome; "" when the round named it not
    reason: str = ""
    in_flight: list[str] = field(default_factory=list)


@dataclass
class Budget:
    nodepool: str
    nodes: int  # initialized nodes of the pool
    disrupting: int  # of those, deleting or NotReady: budget already in use
    allowed: dict[str, int]  # per reason, before this round's commands
    taken: int  # by the commands of the round the engine just computed
    error: str = ""


@dataclass
class Explanation:
    node: str
    nodeclaim: str
    nodepool: str
    now: Now
    last_round: LastRound
    budget: Budget | None
    conditions: list[dict[str, str]]


# -- the engine's verdict --------------------------------------------------------------------


def _command_of(result: RoundResult, node: str) -> Command | None:
    return next((c for c in result.decision.commands if node in c.nodes), None)


def engine_now(result: RoundResult, node: str, paused_all: bool, paused: Sequence[str]) -> Now:
    """What the round just computed on the live cluster says about ``node``."""
    command = _command_of(result, node)
    if command is not None:
        pools = {m.name: m.pool for m in result.inputs.cluster.managed}
        held = sorted({pools[n] for n in command.nodes if pools.get(n) in set(paused)})
        held_by = (
            "disruption is paused for every NodePool"
            if paused_all
            else (f"NodePool {', '.join(held)} is paused" if held else "")
        )
        return Now(
            verdict=DISRUPT,
            reason=summary(
                command.reason,
                len(command.nodes),
                command.replacements,
                command.savings_per_hour,
            ),
            method=command.reason,
            nodes=list(command.nodes),
            replacements=[
                c.instance_types[0].name for c in command.replacements if c.instance_types
            ],
            savings_per_hour=round(command.savings_per_hour, 4),
            held_by=held_by,
        )
    for verdict, verdicts in ((BLOCKED, result.decision.blocked), (KEPT, result.decision.kept)):
        for v in verdicts:
            if v.node == node:
                return Now(verdict=verdict, reason=v.reason)
    return Now(
        verdict=UNMANAGED,
        reason="not managed by Joinery (no karpenter.sh/nodepool label naming a NodePool)",
    )


def budget_of(result: RoundResult, pool: str) -> Budget | None:
    state: PoolBudget | None = result.inputs.budgets.pools.get(pool)
    if state is None:
        return None
    return Budget(
        nodepool=pool,
        nodes=state.total,
        disrupting=state.disrupting,
        allowed={r: state.allowed[r] for r in REASONS},
        taken=sum(state.taken.values()),
        error=state.error or "",
    )


# -- the workflow's last round ---------------------------------------------------------------


def outcome_of(status: DisruptionStatus, node: str) -> NodeOutcome | None:
    return next((o for o in status.last_outcomes if o.node == node), None)


def last_round(status: DisruptionStatus | None, node: str, error: str = "") -> LastRound:
    if status is None:
        return LastRound(available=False, error=error or "no DisruptionWorkflow")
    found = outcome_of(status, node)
    # an outcome carried from an earlier round (a node it disrupted) names that round
    earlier = found is not None and 0 < found.round < status.rounds
    return LastRound(
        available=True,
        round=found.round if found is not None and earlier else status.rounds,
        at="" if earlier else status.last_round_at,
        phase=status.phase,
        outcome=found.outcome if found else "",
        reason=found.reason if found else "",
        in_flight=list(status.in_flight),
    )


# -- the NodeClaim's conditions --------------------------------------------------------------


def disruption_conditions(claim: Mapping[str, Any] | None) -> list[dict[str, str]]:
    if not claim:
        return []
    out = []
    for c in (claim.get("status") or {}).get("conditions") or []:
        if isinstance(c, Mapping) and c.get("type") in DISRUPTION_CONDITIONS:
            out.append(
                {
                    k: str(c.get(k) or "")
                    for k in ("type", "status", "reason", "message", "lastTransitionTime")
                }
            )
    return out


# -- output ----------------------------------------------------------------------------------


def to_dict(e: Explanation) -> dict[str, Any]:
    now = asdict(e.now)
    return {
        "node": e.node,
        "nodeClaim": e.nodeclaim or None,
        "nodePool": e.nodepool or None,
        "now": {
            "verdict": now["verdict"],
            "reason": now["reason"],
            **(
                {
                    "method": now["method"],
                    "nodes": now["nodes"],
                    "replacements": now["replacements"],
                    "savingsPerHour": now["savings_per_hour"],
                    "heldBy": now["held_by"] or None,
                }
                if e.now.verdict == DISRUPT
                else {}
            ),
        },
        "lastRound": (
            {
                "available": True,
                "round": e.last_round.round,
                "at": e.last_round.at or None,
                "phase": e.last_round.phase,
                "outcome": e.last_round.outcome or None,
                "reason": e.last_round.reason or None,
                "inFlight": e.last_round.in_flight,
            }
            if e.last_round.available
            else {"available": False, "error": e.last_round.error}
        ),
        "budget": (
            {
                "nodePool": e.budget.nodepool,
                "nodes": e.budget.nodes,
                "disrupting": e.budget.disrupting,
                "allowed": e.budget.allowed,
                "takenThisRound": e.budget.taken,
                "error": e.budget.error or None,
            }
            if e.budget
            else None
        ),
        "conditions": e.conditions,
    }


def _now_line(now: Now) -> str:
    if now.verdict != DISRUPT:
        return f"{now.verdict}: {now.reason}"
    text = f"would be disrupted ({now.method}): {now.reason}"
    if len(now.nodes) > 1:
        shown = now.nodes[:NODES_SHOWN]
        more = f", +{len(now.nodes) - len(shown)} more" if len(now.nodes) > len(shown) else ""
        text += f" [{', '.join(shown)}{more}]"
    return text + (f"; held: {now.held_by}" if now.held_by else "")


def _last_round_line(last: LastRound) -> str:
    if not last.available:
        return f"unavailable ({last.error})"
    if last.round == 0:
        return f"no round yet ({last.phase})"
    head = f"round {last.round}" + (f" at {last.at}" if last.at else "")
    if not last.outcome:
        return f"{head}: did not name this node"
    return f"{head}: {last.outcome}: {last.reason}"


def _budget_line(b: Budget) -> str:
    if b.error:
        return f"nodepool {b.nodepool}: cannot be evaluated ({b.error}); nothing allowed"
    allowed = ", ".join(f"{r} {b.allowed[r]}" for r in REASONS)
    return (
        f"nodepool {b.nodepool}: allowed now {allowed}; {b.disrupting} of {b.nodes} "
        f"initialized node(s) already disrupting; this round takes {b.taken}"
    )


def _condition_line(c: Mapping[str, str]) -> str:
    text = f"{c['type']}={c['status']}"
    if c["reason"]:
        text += f" ({c['reason']})"
    if c["message"]:
        text += f": {c['message']}"
    return text + (f", since {c['lastTransitionTime']}" if c["lastTransitionTime"] else "")


def to_text(e: Explanation) -> str:
    """A few lines for people."""
    owner = ", ".join(
        p
        for p in (
            f"NodeClaim {e.nodeclaim}" if e.nodeclaim else "",
            e.nodepool and f"NodePool {e.nodepool}",
        )
        if p
    )
    lines = [f"Node {e.node}" + (f" ({owner})" if owner else "")]
    lines.append(f"  now:         {_now_line(e.now)}")
    lines.append(f"  last round:  {_last_round_line(e.last_round)}")
    if e.last_round.in_flight:
        lines.append(f"  in flight:   {'; '.join(e.last_round.in_flight)}")
    if e.budget:
        lines.append(f"  budget:      {_budget_line(e.budget)}")
    if e.conditions:
        lines.append(f"  conditions:  {_condition_line(e.conditions[0])}")
        lines.extend(f"               {_condition_line(c)}" for c in e.conditions[1:])
    elif e.nodeclaim:
        lines.append("  conditions:  no disruption condition on the NodeClaim")
    return "\n".join(lines)
