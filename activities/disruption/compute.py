"""A round's decision from the live cluster: read it, ask the engine, return names and specs.

The engine (``scheduling.disruption.round``) is pure; this module is the I/O around it, and
it chooses the replacements' names (``<pool>-<5 chars>``, as the provisioner does) so the
workflow history records them and a retried launch finds the claims it already made.
Commands touching a paused NodePool (``joinery pause [--nodepool]``) are dropped here and
named in ``held``.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

from activities.deps import Deps
from activities.disruption import claim_conditions, cluster_state, events
from activities.disruption.types import MAX_VERDICTS, CommandSpec, ComputeInput, Decision, clip
from activities.planning.plan import disruption_catalogs, planned_nodeclaim
from models.nodepool import NodePool
from scheduling.disruption.due import next_due
from scheduling.disruption.round import RoundResult, run_round
from scheduling.disruption.types import DRIFTED, EMPTY, REASONS, UNDERUTILIZED, Command, ManagedNode
from scheduling.inputs import Document
from scheduling.solver import PlannedClaim


def summary(reason: str, nodes: int, replacements: list[PlannedClaim], savings: float) -> str:
    """``replace 3 nodes by 1 m5.xlarge, saves $0.21/h`` (the round's and command's summary)."""
    noun = "node" if nodes == 1 else "nodes"
    if not replacements:
        head = f"delete {nodes} {reason.lower()} {noun}"
    else:
        types = sorted({c.instance_types[0].name for c in replacements if c.instance_types})
        head = f"replace {nodes} {noun} by {len(replacements)} {'/'.join(types) or 'node'}"
        if reason != "Underutilized":
            head += f" ({reason.lower()})"
    return head + (f", saves ${savings:.2f}/h" if savings > 0 else "")


def compute(deps: Deps, inp: ComputeInput, now: datetime | None = None) -> Decision:
    resource = deps.provider().nodeclass_kind.resource
    state = cluster_state.read_state(deps.kube, resource, deps.watched, managed_only=True)
    types, own = disruption_catalogs(deps.provider(), state.nodepools, state.nodeclasses)
    started = time.perf_counter()
    at = now or datetime.now(UTC)
    docs = [*state.documents, *cluster_state.nodeclass_documents(state.nodeclasses, resource)]
    result = run_round(docs, types, at, own, deps.policies)
    deps.counters.disruption_evaluated(
        time.perf_counter() - started, eligible(result), allowed(result), consuming(result)
    )
    tell(deps, result, state.documents)
    claim_conditions.sync(deps, result.inputs.cluster, state.documents, at)
    out = decision(result, inp, at)
    kept = {c.key() for c in out.commands} | {
        (c.reason, tuple(sorted(c.nodes))) for c in result.decision.commands
    }
    # an emptiness command holds node by node (workflows/disruption/compute.still_valid)
    empty = {n for c in out.commands if c.reason == EMPTY and not c.replacements for n in c.nodes}
    for proposed in inp.validating:
        if proposed and proposed[0] == EMPTY and set(proposed[1:]) <= empty:
            continue
        if proposed and (proposed[0], tuple(proposed[1:])) not in kept:
            deps.counters.disruption_validation_failed(
                consolidation_type(proposed[0], len(proposed) - 1)
            )
    return out


def decision(result: RoundResult, inp: ComputeInput, at: datetime) -> Decision:
    """The engine's round as the workflow records it: the commands (those on paused pools
    moved to ``held``), bounded per-node verdicts and when the next round is due. No I/O."""
    managed = {m.name: m for m in result.inputs.cluster.managed}
    pools = result.inputs.cluster.pools
    paused = set(inp.paused_pools)
    due = next_due(result.inputs.cluster, at)
    out = Decision(
        cost_before=result.decision.cost_before,
        cost_after=result.decision.cost_after,
        blocked=len(result.decision.blocked),
        kept=len(result.decision.kept),
        due=due.isoformat() if due else "",
    )
    for command in result.decision.commands:
        spec = _spec(command, managed, pools)
        held = ""
        if inp.paused_all:
            held = f"{spec.summary} (disruption paused for every NodePool)"
        elif paused & set(spec.pools):
            held = f"{spec.summary} (NodePool {', '.join(sorted(paused & set(spec.pools)))} paused)"
        if held:
            out.held.append(held)
            out.held_nodes.update(dict.fromkeys(spec.nodes, clip(held)))
            continue
        out.commands.append(spec)
    room = MAX_VERDICTS - len(out.held_nodes)
    for verdicts, into in (
        (result.decision.blocked, out.blocked_nodes),
        (result.decision.kept, out.kept_nodes),
    ):
        for v in verdicts[: max(0, room)]:
            into[v.node] = clip(v.reason)
        room -= len(verdicts)
    return out


def consolidation_type(reason: str, nodes: int) -> str:
    """Karpenter's consolidation_type label: empty, single, multi, or none for drift."""
    if reason == "Empty":
        return "empty"
    if reason == "Underutilized":
        return "single" if nodes == 1 else "multi"
    return ""


def _spec(
    command: Command, managed: dict[str, ManagedNode], pools: dict[str, NodePool]
) -> CommandSpec:
    replacements = [planned_nodeclaim(c, pools[c.nodepool]) for c in command.replacements]
    nodes = list(command.nodes)
    return CommandSpec(
        reason=command.reason,
        nodes=nodes,
        claims=[managed[n].claim if n in managed else n for n in nodes],
        pools=sorted({managed[n].pool for n in nodes if n in managed}),
        replacements=replacements,
        savings_per_hour=round(command.savings_per_hour, 4),
        summary=summary(command.reason, len(nodes), command.replacements, command.savings_per_hour),
    )


def eligible(result: RoundResult) -> dict[str, int]:
    """Candidates per method, as ``karpenter_voluntary_disruption_eligible_nodes`` counts
    them: empty ones, drifted ones, and those in pools that consolidate underutilized nodes."""
    pools = result.inputs.cluster.pools
    out = dict.fromkeys(REASONS, 0)
    for c in result.inputs.candidates:
        pool = pools.get(c.node.pool)
        out[EMPTY] += not c.pods
        out[DRIFTED] += c.drifted is not None
        if pool is not None and pool.spec.disruption.consolidation_policy != "WhenEmpty":
            out[UNDERUTILIZED] += 1
    return out


def allowed(result: RoundResult) -> dict[tuple[str, str], int]:
    """What each pool's budgets allow per reason now (before this round's commands)."""
    ledger = result.inputs.budgets.pools
    return {(pool, r): state.allowed[r] for pool, state in ledger.items() for r in REASONS}


def consuming(result: RoundResult) -> dict[tuple[str, str], int]:
    """Nodes using up each pool's budgets now (deleting or NotReady), for every reason."""
    ledger = result.inputs.budgets.pools
    return {(pool, r): state.disrupting for pool, state in ledger.items() for r in REASONS}


def tell(deps: Deps, result: RoundResult, documents: list[Document]) -> None:
    """DisruptionBlocked / Unconsolidatable events for the round's verdicts (deduplicated,
    see ``activities.disruption.events``)."""
    uids: dict[tuple[str, str], str] = {}
    for d in documents:
        meta = d.body.get("metadata") or {}
        uids[(str(d.body.get("kind")), str(meta.get("name")))] = str(meta.get("uid") or "")
    subjects = {
        m.name: events.Subject(
            m.name, m.claim, uids.get(("Node", m.name), ""), uids.get(("NodeClaim", m.claim), "")
        )
        for m in result.inputs.cluster.managed
    }
    budgets = result.inputs.budgets
    blocked_pools = {
        pool: (uids.get(("NodePool", pool), ""), budgets.describe(pool))
        for pool, state in budgets.pools.items()
        if state.total and all(state.allowed[r] == 0 for r in REASONS)
    }
    decision = result.decision
    events.verdicts(deps.kube, decision.blocked, decision.kept, subjects, blocked_pools)
