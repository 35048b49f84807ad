"""Underutilized: delete nodes whose pods fit elsewhere, replace nodes by one cheaper node.

For pools whose ``consolidationPolicy`` is ``WhenEmptyOrUnderutilized`` or ``Balanced``. Two
passes over the candidates (run in order by ``underutilized.py``, after an exhaustive search
when they are few), cheapest to disrupt for what they cost first (Karpenter v1.14's
order: price over disruption cost, highest first), each on the cluster the previous commands
leave:

1. **Multi-node**: the largest prefix of the remaining candidates (at most 100, within
   budget) that one strictly cheaper node, or no node at all, can replace, found by binary
   search as Karpenter does; repeated while it finds one, so a round can hold several; then
   the same over the candidates cheapest first, which finds groups of small nodes that one
   node can hold, and dearest first, which right-sizes a large node together with small
   nodes whose pods fill its unused room (Karpenter's order finds neither).
2. **Single-node**: each remaining node deleted when its pods fit on the remaining nodes,
   else replaced by one strictly cheaper node.

A candidate left in no command is kept with the finding that stopped it: a pod that fits
nowhere, more than one node needed, or the cheapest replacement's price.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from functools import partial
from operator import itemgetter

from models import labels as L
from models.resources import CPU, MEMORY
from scheduling.disruption import pod_orders
from scheduling.disruption.context import RoundContext
from scheduling.disruption.replacement import cheaper_replacement
from scheduling.disruption.types import UNDERUTILIZED, Candidate
from scheduling.pods import Pod
from scheduling.solver import Plan, PlannedClaim

MAX_MULTI_NODE = 100
_NAMED_POD = re.compile(r"pod (\S+) ")
CONSOLIDATING_POLICIES = ("WhenEmptyOrUnderutilized", "Balanced")
# Balanced approves a command whose share of the pool's savings is at least this fraction of
# its share of the pool's disruption (Karpenter v1.14's k = 2).
BALANCED_MIN_SCORE = 0.5


class TooDear(str):
    """A finding that the candidates' pods fit (on the other nodes and one new node), only
    not for less than the candidates cost. Unlike a pod that fits nowhere, it says nothing
    of a longer prefix: one more node adds its price and may need no larger replacement
    (two 2-cpu nodes' pods need a 4-cpu node costing as much as both; three nodes' pods
    fit on the same node, for less than the three)."""

    __slots__ = ()


def _order_key(c: Candidate) -> tuple[float, str]:
    return (-(c.node.price or 0.0) / (1.0 + max(0.0, c.disruption_cost)), c.node.name)


def _pod_signature(p: Pod) -> tuple[object, ...]:
    """Everything about a pod a placement depends on (not its name)."""
    return (
        p.namespace,
        tuple(sorted(p.labels.items())),
        tuple(sorted(p.requests.items())),
        repr(p.node_selector),
        repr(p.required_terms),
        repr(p.preferred_terms),
        p.tolerations,
        p.spreads,
        p.affinity,
        p.preferred_affinity,
        p.anti_affinity,
        p.preferred_anti_affinity,
        p.host_ports,
        p.pvcs,
        p.priority,
    )


def _signature(ctx: RoundContext, cands: Sequence[Candidate]) -> tuple[object, ...]:
    """Candidates with the same signature have the same outcome on the same cluster state:
    the nodes' pool, type, zone, capacity type and price, and their pods' constraints."""
    nodes = tuple(
        sorted(
            (c.node.pool, c.node.instance_type, c.node.zone, c.node.capacity_type, c.node.price)
            for c in cands
        )
    )
    # Sorted by their text (kept with each pod's signature), as they always were.
    signed = [ctx.signature(p, _pod_signature) for c in cands for p in c.pods]
    pods = tuple(sig for _, sig in sorted(signed, key=itemgetter(0)))
    return (ctx.state.version, nodes, pods)


def outcome_of(
    ctx: RoundContext, cands: Sequence[Candidate]
) -> tuple[Plan, list[PlannedClaim]] | str:
    """Where the candidates' pods would go, as a valid Underutilized command, or why not.
    A failure is remembered for candidates alike until the cluster state changes."""
    key = _signature(ctx, cands)
    known = ctx.failures.get(key)
    if known is not None:
        return _for_own_pods(known, ctx.failure_pods.get(key, []), _pod_keys(ctx, cands))
    out = _simulate_outcome(ctx, cands)
    if ctx.search_orders and (isinstance(out, str) or out[1]):
        out = _searched(ctx, cands, out)
    if isinstance(out, str):
        ctx.failures[key] = out
        ctx.failure_pods[key] = _pod_keys(ctx, cands)
    return out


def _searched(
    ctx: RoundContext, cands: Sequence[Candidate], out: tuple[Plan, list[PlannedClaim]] | str
) -> tuple[Plan, list[PlannedClaim]] | str:
    """The best outcome of a small move in other pod orders, with each other node in turn
    taking none of its pods, and with its replacement pinned to each other zone
    (pod_orders.py): a delete first, else the cheapest replacement; only outcomes whose
    pods land as planned in any order (``_steady``)."""
    pods = [p for c in cands for p in c.pods]
    if len(pods) > pod_orders.MAX_PODS:
        return out
    orders = pod_orders.orders(pods, lambda p: ctx.signature(p, _pod_signature)[0])
    out = pod_orders.best(
        out, [partial(_steady_outcome, ctx, cands, order) for order in orders], _rank
    )
    names = {c.node.name for c in cands}
    others = [n for n in ctx.state.usable() if n not in names]
    if not isinstance(out, str):
        others = sorted(out[0].existing) or others
    tries = [partial(_steady_outcome, ctx, cands, None, (n,)) for n in sorted(others)]
    out = pod_orders.best(out, tries[: pod_orders.MAX_PODS], _rank)
    if not isinstance(out, str) and out[1]:
        zoned = _steady(ctx, cands, _in_another_zone(ctx, cands, pods, out[0], ""))
        if _rank(zoned) < _rank(out):
            out = zoned
    return out


def _steady_outcome(
    ctx: RoundContext,
    cands: Sequence[Candidate],
    order: Sequence[Pod] | None = None,
    avoid: Collection[str] = (),
) -> tuple[Plan, list[PlannedClaim]] | str:
    return _steady(ctx, cands, _simulate_outcome(ctx, cands, order, avoid))


def _steady(
    ctx: RoundContext, cands: Sequence[Candidate], out: tuple[Plan, list[PlannedClaim]] | str
) -> tuple[Plan, list[PlannedClaim]] | str:
    """``out`` if every existing node it sends pods to still takes them when the other
    moving pods it admits are scheduled there first, else why not.

    The kube-scheduler sees the evicted pods in an order Joinery does not choose and puts
    each on any node that admits it. A plan the solver's own order found is Karpenter's
    bet; one found in another order is so because the solver's order failed or cost
    more, often because a pod with other options took the room on a node that a pickier
    pod needs: were it scheduled first on a live cluster, the picky pod would stay
    Pending. So a searched plan is kept only when no such pod can: each receiving node is
    simulated with the command's other pods first (all it admits land there), then its
    own, which must all still fit (a pod alike to one of them only swaps places with it).
    A replacement is no such risk: it is launched for its pods, and a pod it does not hold
    that lands there only leaves room elsewhere."""
    if isinstance(out, str):
        return out
    names = [c.node.name for c in cands]
    moving = [p for c in cands for p in c.pods]
    usable = [n for n in ctx.state.usable() if n not in names]
    for node, mine in sorted(out[0].existing.items()):
        # A pod alike to one of ``mine`` that lands here first leaves it its own place.
        alike = {ctx.signature(p, _pod_signature)[0] for p in mine}
        others = [p for p in moving if ctx.signature(p, _pod_signature)[0] not in alike]
        if not others:
            continue
        rest = [n for n in usable if n != node]
        trial = ctx.state.simulate(
            names, [*others, *mine], new_nodes=False, avoid=rest, given_order=True
        )
        stranded = next((p.key for p in mine if p.key in trial.unschedulable), None)
        if stranded is not None:
            return f"pod {stranded} may find no room on {node} if the others land there first"
    return out


def _rank(out: tuple[Plan, list[PlannedClaim]] | str) -> tuple[float, ...]:
    """A delete first, then the cheapest replacement, then a failure."""
    if isinstance(out, str):
        return (2.0,)
    return (1.0, round(sum(r.price for r in out[1]), 9)) if out[1] else (0.0,)


def _pod_keys(ctx: RoundContext, cands: Sequence[Candidate]) -> list[str]:
    """The candidates' pod keys in the order their signatures are sorted (``_signature``):
    candidates alike have, position by position, pods alike."""
    signed = [(ctx.signature(p, _pod_signature)[0], p.key) for c in cands for p in c.pods]
    return [k for _, k in sorted(signed, key=itemgetter(0))]


def _for_own_pods(why: str, then: list[str], now: list[str]) -> str:
    """A remembered finding about candidates alike, naming these candidates' own pods: a
    kept node's reason must not name another node's pod."""
    if then == now:
        return why
    mapping = dict(zip(then, now, strict=False))
    text = _NAMED_POD.sub(lambda m: f"pod {mapping.get(m[1], m[1])} ", why)
    return text if text == why else type(why)(text)


def _simulate_outcome(
    ctx: RoundContext,
    cands: Sequence[Candidate],
    order: Sequence[Pod] | None = None,
    avoid: Collection[str] = (),
) -> tuple[Plan, list[PlannedClaim]] | str:
    """The outcome with the solver's pod order, or with ``order``, and the nodes in
    ``avoid`` taking none of the pods (pod_orders.py)."""
    names = [c.node.name for c in cands]
    pods = [p for c in cands for p in c.pods] if order is None else list(order)
    how = _How(order is not None, frozenset(avoid))
    total = sum(c.node.price or 0.0 for c in cands)
    floor = ctx.state.cheapest_holding(pods)
    if floor is None or floor >= total - 1e-9:
        # No new node for all the pods could be cheaper: try a delete, solved without pools.
        plan = ctx.state.simulate(
            names, pods, new_nodes=False, given_order=how.given, avoid=how.avoid
        )
        if not plan.unschedulable:
            return plan, []
        # Some pods may still land on the other nodes and the rest on a smaller new node.
        floor = ctx.state.cheapest_holding(pods, names)
        if floor is None or floor >= total - 1e-9:
            key = next(iter(sorted(plan.unschedulable)))
            cheapest = "no instance type" if floor is None else f"none under ${floor:.4f}/h"
            why = (
                f"pod {key} fits on no other node, and no new node could be cheaper than "
                f"${total:.4f}/h ({cheapest} holds the pods the other nodes have no room for)"
            )
            return why if floor is None else TooDear(why)
    plan = ctx.state.simulate(names, pods, given_order=how.given, avoid=how.avoid)
    if plan.unschedulable:
        key, reason = next(iter(sorted(plan.unschedulable.items())))
        return f"pod {key} fits on no other node or new node: {reason}"
    if not plan.claims:
        return plan, []
    if len(plan.claims) > 1:
        # The solver opens a claim per best-priced size; one larger node may hold them all.
        single = ctx.state.simulate(
            names, pods, one_new_node=True, given_order=how.given, avoid=how.avoid
        )
        if single.unschedulable or len(single.claims) != 1:
            single = _all_on_one_new_node(ctx, names, pods, how.given)
        if how.given and (single.unschedulable or len(single.claims) != 1):
            # In an order of its own, the first pod that needs a new node opens it in the
            # first pool that admits it, and the others join it, as in Karpenter (the
            # solver's one claim per pool lets another pool open a second).
            single = ctx.state.simulate(
                names,
                pods,
                one_new_node=True,
                given_order=True,
                avoid=how.avoid,
                only_pool=plan.claims[0].nodepool,
            )
        if single.unschedulable or len(single.claims) != 1:
            why = f"its pods need {len(plan.claims)} new nodes, consolidation launches at most one"
            return _in_another_zone(ctx, cands, pods, single, why, how)
        plan = single
    gates = ctx.state.problem.policies.gates
    narrowed = cheaper_replacement(
        plan.claims[0], [c.node for c in cands], gates.spot_to_spot_consolidation
    )
    if isinstance(narrowed, str):
        return _in_another_zone(ctx, cands, pods, plan, TooDear(narrowed), how)
    return plan, [narrowed]


@dataclass(frozen=True)
class _How:
    """How a simulation places the pods: in the order given (else the solver's), and
    taking none of them onto the nodes in ``avoid``."""

    given: bool = False
    avoid: frozenset[str] = frozenset()


def _all_on_one_new_node(
    ctx: RoundContext, names: Sequence[str], pods: Sequence[Pod], given: bool = False
) -> Plan:
    """Every pod on one new node, the other nodes counted but taking none. The solver fills
    the other nodes first, and a pod placed there can pin the rest elsewhere: a pod whose
    affinity follows another moving pod into the zone of the node that took it, where the
    one new node the others need is pinned to another zone. Karpenter's scheduler fills
    existing nodes first too; this finds the command it misses."""
    others = [n for n in ctx.state.nodes if n not in ctx.state.removed and n not in names]
    return ctx.state.simulate(names, pods, one_new_node=True, avoid=others, given_order=given)


def _zonal(p: Pod) -> bool:
    """The pod's own spread, pod affinity or anti-affinity counts pods per zone."""
    return any(s.key == L.ZONE for s in p.spreads) or any(
        t.key == L.ZONE for t in (*p.affinity, *p.anti_affinity)
    )


def _in_another_zone(
    ctx: RoundContext,
    cands: Sequence[Candidate],
    pods: Sequence[Pod],
    plan: Plan,
    why: str,
    how: _How | None = None,
) -> tuple[Plan, list[PlannedClaim]] | str:
    """The replacement in another zone, when a pod's zonal spread, affinity or anti-affinity
    pinned the claim's zone: the solver pins the zone cheapest for the first pod alone, where
    the pods together may need a larger type than in a zone dearer for one pod (Karpenter
    pins any least-filled zone). Each other zone is tried as the pinned one, the rules still
    counted as before; the cheapest valid replacement wins. Only tried when a zone was
    pinned, so a candidate whose pods have no zonal rule costs no extra simulation: one
    zone for all the claims, or, in a search of other pod orders (pod_orders.py), for the
    claims holding a pod with a zonal rule (the first pod of a pool's claim may pin it
    where the pods another pool took would also fit)."""
    zones = {z for c in plan.claims for z in c.zones}
    if how is not None and how.given and len(plan.claims) > 1:
        zones = {z for c in plan.claims if any(_zonal(p) for p in c.pods) for z in c.zones}
    if len(zones) != 1 or not any(_zonal(p) for p in pods):
        return why
    names = [c.node.name for c in cands]
    gates = ctx.state.problem.policies.gates
    best: tuple[Plan, list[PlannedClaim]] | None = None
    for zone in ctx.state.zones():
        if zone in zones:
            continue
        other = ctx.state.simulate(
            names,
            pods,
            one_new_node=True,
            zone=zone,
            given_order=how is not None and how.given,
            avoid=() if how is None else how.avoid,
        )
        if other.unschedulable or len(other.claims) > 1:
            continue
        if not other.claims:
            return other, []
        narrowed = cheaper_replacement(
            other.claims[0], [c.node for c in cands], gates.spot_to_spot_consolidation
        )
        if isinstance(narrowed, str):
            continue
        if best is None or narrowed.price < best[1][0].price:
            best = (other, [narrowed])
    return why if best is None else best


def _balanced_refusal(
    ctx: RoundContext, cands: Sequence[Candidate], saved: float, all_cands: Sequence[Candidate]
) -> str | None:
    for pool in sorted({c.node.pool for c in cands}):
        if ctx.pools[pool].spec.disruption.consolidation_policy != "Balanced":
            continue
        mine = [c for c in cands if c.node.pool == pool]
        members = [c for c in all_cands if c.node.pool == pool]
        pool_cost = sum(c.node.price or 0.0 for c in members)
        pool_disruption = sum(max(0.0, c.disruption_cost) for c in members)
        move = sum(max(0.0, c.disruption_cost) for c in mine)
        if pool_cost <= 0 or move <= 0 or pool_disruption <= 0:
            continue
        share = saved * len(mine) / len(cands)
        score = (share / pool_cost) / (move / pool_disruption)
        if score < BALANCED_MIN_SCORE:
            return (
                f"nodepool {pool} is Balanced: saving ${share:.4f}/h does not outweigh "
                f"disrupting its pods (score {score:.2f} < {BALANCED_MIN_SCORE})"
            )
    return None


def attempt(
    ctx: RoundContext,
    cands: Sequence[Candidate],
    all_cands: Sequence[Candidate],
    *,
    delete_only: bool = False,
) -> str | None:
    """Accept ``cands`` as one command if valid; otherwise say why not."""
    why = ctx.refusal(cands, UNDERUTILIZED)
    if why is not None:
        return why
    out = outcome_of(ctx, cands)
    if isinstance(out, str):
        return out
    plan, replacements = out
    if delete_only and replacements:
        return "its pods do not fit on the other nodes"
    saved = sum(c.node.price or 0.0 for c in cands) - sum(r.price for r in replacements)
    if saved <= 1e-9:
        return "replacing it would save nothing"
    why = _balanced_refusal(ctx, cands, saved, all_cands) or ctx.spread_refusal(cands, plan)
    if why is not None:
        return why
    ctx.accept(UNDERUTILIZED, cands, plan, replacements)
    return None


class _Room:
    """Requests the other nodes could still take: a quick test before a delete simulation."""

    def __init__(self, ctx: RoundContext) -> None:
        self.ctx = ctx
        self.total = (0, 0)
        self.refresh()

    def refresh(self) -> None:
        cpu = mem = 0
        for name in self.ctx.state.nodes:
            if name not in self.ctx.state.removed:
                room = self.ctx.state.room(name)
                cpu += max(0, room[0])
                mem += max(0, room[1])
        self.total = (cpu, mem)

    def may_fit(self, c: Candidate) -> bool:
        own = self.ctx.state.room(c.node.name)
        cpu = sum(p.requests.get(CPU, 0) for p in c.pods)
        mem = sum(p.requests.get(MEMORY, 0) for p in c.pods)
        return cpu <= self.total[0] - max(0, own[0]) and mem <= self.total[1] - max(0, own[1])


def consolidatable(ctx: RoundContext, candidates: list[Candidate]) -> list[Candidate]:
    """The candidates consolidation may take, in the order it tries them; the others of a
    pool that does not consolidate, or whose price is unknown, are kept with that reason."""
    out = []
    for c in candidates:
        if not c.pods or c.consolidation_hold:
            continue  # empty: the Empty method's; held: only the Drifted method may take it
        policy = ctx.pools[c.node.pool].spec.disruption.consolidation_policy
        if policy not in CONSOLIDATING_POLICIES:
            ctx.kept.setdefault(
                c.node.name,
                f"nodepool {c.node.pool} removes only empty nodes (consolidationPolicy: {policy})",
            )
        elif c.node.price is None:
            ctx.kept.setdefault(
                c.node.name,
                f"its price is unknown (no {c.node.capacity_type} offering of "
                f"{c.node.instance_type} in {c.node.zone} in the catalog)",
            )
        else:
            out.append(c)
    return sorted(out, key=_order_key)


def multi_node_pass(
    ctx: RoundContext, order: list[Candidate], *, repeat: bool = True, prefer_delete: bool = True
) -> int:
    """Replace (or delete) prefixes of several candidates; returns how many commands.
    ``prefer_delete=False`` takes the prefix as Karpenter does, even where deleting one of its
    nodes alone would save more (the benchmark's baseline)."""
    found = 0
    while True:
        batch = [c for c in order if ctx.free(c) and ctx.refusal([c], UNDERUTILIZED) is None]
        batch = _within_budget(ctx, batch)[:MAX_MULTI_NODE]
        if len(batch) < 2 or not _multi_node(ctx, batch, order, prefer_delete):
            return found
        found += 1
        if not repeat:
            return found


def single_node_pass(ctx: RoundContext, order: list[Candidate], *, first_only: bool = False) -> int:
    """Replace each remaining candidate by one cheaper node; returns how many commands."""
    found = 0
    for c in order:
        if not ctx.free(c):
            continue
        why = attempt(ctx, [c], order)
        if why is None:
            found += 1
            if first_only:
                return found
        elif _is_hold(why):
            ctx.held[c.node.name] = why
        else:
            ctx.kept[c.node.name] = _with_group(ctx, c, why)
    return found


def _with_group(ctx: RoundContext, c: Candidate, why: str) -> str:
    """``why`` (the node alone), and what stopped the multi-node search from taking it with
    others, when it tried: a finding about the node alone is not the whole truth."""
    group = ctx.grouped.get(c.node.name)
    if group is None:
        return why
    others, finding = group
    plural = "s" if others > 1 else ""
    return f"alone: {why}; with {others} other node{plural}: {finding}"


def _is_hold(why: str) -> bool:
    """A refusal that says "not now" (budget, PDBs) rather than "nothing to gain"."""
    return ("budget" in why and why.startswith("nodepool")) or "PodDisruptionBudget" in why


def _within_budget(ctx: RoundContext, batch: list[Candidate]) -> list[Candidate]:
    """The prefix of ``batch`` that the pools' Underutilized budgets allow together."""
    left: dict[str, int] = {}
    out = []
    for c in batch:
        pool = c.node.pool
        if pool not in left:
            left[pool] = ctx.budgets.remaining(pool, UNDERUTILIZED)
        if left[pool] > 0:
            left[pool] -= 1
            out.append(c)
    return out


def _multi_node(
    ctx: RoundContext, batch: list[Candidate], pool_ok: list[Candidate], prefer_delete: bool
) -> bool:
    """Find the largest valid prefix of at least two and accept it if found.

    Karpenter's binary search reads any failed prefix as "every longer prefix fails too".
    That holds for pods that fit nowhere (a longer prefix has more pods and fewer places),
    not for a prefix whose pods fit only on a new node as dear as its nodes: one more node
    adds its price, maybe not a larger replacement. So a second binary search finds the
    longest prefix whose pods fit at all, stepping longer past those findings, and the
    longer of the two valid prefixes wins (the searches share each prefix's outcome, so
    they cost more only where a price finding sends them apart)."""
    outcomes: dict[int, tuple[Plan, list[PlannedClaim]] | str] = {}

    def outcome(n: int) -> tuple[Plan, list[PlannedClaim]] | str:
        if n not in outcomes:
            outcomes[n] = outcome_of(ctx, batch[:n])
        return outcomes[n]

    best = _largest(2, len(batch), lambda n: not isinstance(outcome(n), str))
    fits = _largest(2, len(batch), lambda n: not _misfit(outcome(n)))
    if fits is not None and not isinstance(outcome(fits), str) and (best or 0) < fits:
        best = fits
    if best is None:
        _note_groups(ctx, batch, outcomes)
        return False
    out = outcome(best)
    assert not isinstance(out, str)
    saved = sum(c.node.price or 0.0 for c in batch[:best]) - sum(r.price for r in out[1])
    if prefer_delete and _delete_saves_more(ctx, batch[:best], saved, pool_ok):
        return True
    if attempt(ctx, batch[:best], pool_ok) is None:
        return True
    _note_groups(ctx, batch, outcomes)
    return False


def _misfit(out: tuple[Plan, list[PlannedClaim]] | str) -> bool:
    """A finding that the prefix's pods fit nowhere (not merely not for less)."""
    return isinstance(out, str) and not isinstance(out, TooDear)


def _largest(lo: int, hi: int, ok: Callable[[int], bool]) -> int | None:
    """The largest n in [lo, hi] binary search finds with ``ok(n)``, or None."""
    best = None
    while lo <= hi:
        mid = (lo + hi) // 2
        if ok(mid):
            best = mid
            lo = mid + 1
        else:
            hi = mid - 1
    return best


def _note_groups(
    ctx: RoundContext,
    batch: list[Candidate],
    outcomes: dict[int, tuple[Plan, list[PlannedClaim]] | str],
) -> None:
    """Remember, for each candidate of a failed prefix, the finding of the longest failed
    prefix that held it: a candidate kept in the end says why merging failed too."""
    for n, out in sorted(outcomes.items(), reverse=True):
        if not isinstance(out, str):
            continue
        for c in batch[:n]:
            ctx.grouped.setdefault(c.node.name, (n - 1, out))


def _delete_saves_more(
    ctx: RoundContext, prefix: list[Candidate], saved: float, pool_ok: list[Candidate]
) -> bool:
    """Delete one node of ``prefix`` alone when its pods fit on the other nodes and its price
    exceeds what replacing the whole prefix saves; True if one was deleted.

    Karpenter takes the largest prefix one cheaper node can replace, whatever it saves: with a
    full node and a nearly empty one, it swaps both for a node costing almost as much as both,
    where deleting the empty one alone saves more and launches nothing."""
    room = _Room(ctx)
    for c in sorted(prefix, key=lambda c: (-(c.node.price or 0.0), c.node.name)):
        if (c.node.price or 0.0) <= saved + 1e-9:
            return False
        if room.may_fit(c) and attempt(ctx, [c], pool_ok, delete_only=True) is None:
            return True
    return False
