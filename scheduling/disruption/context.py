"""One round in progress: what it has decided so far and what it may still do.

Every method asks the same questions of a command before it is accepted (are its nodes still
free to disrupt, does its pool's budget allow this reason, do the PDBs of the pods it evicts
allow it on top of the round's evictions so far) and records the answer the same way, so a
round with many commands of several reasons stays within every limit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from models import labels as L
from models.nodepool import NodePool
from scheduling.disruption.budgets import BudgetLedger
from scheduling.disruption.new_domains import MovedPods, NodeView
from scheduling.disruption.pdb import PdbLedger
from scheduling.disruption.simulate import RoundState, may_select
from scheduling.disruption.types import Candidate, Command
from scheduling.pods import AffinityTerm, Pod
from scheduling.solver import Plan, PlannedClaim


@dataclass
class RoundContext:
    state: RoundState
    budgets: BudgetLedger
    pdbs: PdbLedger
    pools: Mapping[str, NodePool]
    commands: list[Command] = field(default_factory=list)
    taken: set[str] = field(default_factory=set)  # candidate nodes in a command
    # Candidates held back during the round, with why: budget or PDBs (blocked), or a
    # method's finding (kept). A later method may still take a node a previous one kept.
    held: dict[str, str] = field(default_factory=dict)
    kept: dict[str, str] = field(default_factory=dict)
    # Per candidate, the finding of the longest multi-node group tried with it that failed,
    # and how many other nodes that group held (a kept candidate says why it stayed alone).
    grouped: dict[str, tuple[int, str]] = field(default_factory=dict)
    # Outcomes that failed, by candidate signature and state version (see consolidation).
    failures: dict[tuple[object, ...], str] = field(default_factory=dict)
    failure_pods: dict[tuple[object, ...], list[str]] = field(default_factory=dict)
    # The round's moves of pods with a required spread (a later command must keep them).
    moved: MovedPods = field(default_factory=MovedPods)
    # Few candidates: a small move that is not a delete is simulated in other pod orders
    # too (pod_orders.py; set by underutilized.py).
    search_orders: bool = False
    _pod_sigs: dict[int, tuple[Pod, tuple[str, tuple[object, ...]]]] = field(default_factory=dict)
    # Required pod affinity terms of the pods moved this round, with the pod: the pods they
    # select must stay where they are, or a pod moved earlier in the round may find, when
    # it is evicted and scheduled again, no pod it needs in the domain it was sent to.
    _needed: list[tuple[AffinityTerm, Pod]] = field(default_factory=list)

    def signature(
        self, pod: Pod, compute: Callable[[Pod], tuple[object, ...]]
    ) -> tuple[str, tuple[object, ...]]:
        """The pod's signature (``compute``) with its text, worked out once per pod."""
        hit = self._pod_sigs.get(id(pod))
        if hit is None or hit[0] is not pod:
            sig = compute(pod)
            hit = self._pod_sigs[id(pod)] = (pod, (repr(sig), sig))
        return hit[1]

    def free(self, c: Candidate) -> bool:
        """Still available: in no command and no destination of one."""
        name = c.node.name
        return name not in self.taken and name not in self.state.destinations

    def refusal(self, cands: Sequence[Candidate], reason: str) -> str | None:
        """Why the round may not take ``cands`` for ``reason`` now (budget, PDBs), or None."""
        per_pool: dict[str, int] = {}
        for c in cands:
            per_pool[c.node.pool] = per_pool.get(c.node.pool, 0) + 1
        for pool, n in sorted(per_pool.items()):
            if self.budgets.remaining(pool, reason) < n:
                return self.budgets.describe(pool, reason)
        pods = [p for c in cands for p in c.pods]
        for term, owner in self._needed:
            needed = next((p for p in pods if may_select(term, p)), None)
            if needed is not None:
                return (
                    f"pod {owner.key}, moved this round, needs pod {needed.key} where it is "
                    f"(pod affinity on {term.key})"
                )
        if not self.pdbs.can_evict(pods):
            blocking = next((r for p in pods if (r := self.pdbs.blocking(p))), None)
            return blocking or (
                "the PodDisruptionBudgets of its pods allow no more evictions this round"
            )
        return None

    def spread_refusal(self, cands: Sequence[Candidate], plan: Plan) -> str | None:
        """Why ``cands``' command, with ``plan`` for their pods, would break the spread of a pod
        an earlier command of this round moved (new_domains.py), or None."""
        if not self.moved.moves:
            return None
        return self.moved.refusal(*self._changes(cands, plan))

    def _changes(
        self, cands: Sequence[Candidate], plan: Plan
    ) -> tuple[list[NodeView], list[NodeView], list[NodeView]]:
        """What a command does to the round's nodes: removed, added to, added (named as
        ``RoundState.apply`` will name them)."""
        nodes = self.state.nodes
        removed: list[NodeView] = [
            (nodes[c.node.name].labels, nodes[c.node.name].pods) for c in cands
        ]
        existing: list[NodeView] = [(nodes[n].labels, pods) for n, pods in plan.existing.items()]
        added: list[NodeView] = [
            (
                {
                    **claim.requirements.labels(),
                    L.HOSTNAME: f"replacement-{self.state.version + 1}-{i}",
                },
                claim.pods,
            )
            for i, claim in enumerate(plan.claims)
        ]
        return removed, existing, added

    def accept(
        self,
        reason: str,
        cands: Sequence[Candidate],
        plan: Plan,
        replacements: Sequence[PlannedClaim],
    ) -> Command:
        """Record a command whose refusal() was None: take budget and PDB evictions, remove
        its nodes and place its pods for the rest of the round."""
        for c in cands:
            self.budgets.take(c.node.pool, reason)
        self.pdbs.take([p for c in cands for p in c.pods])
        names = [c.node.name for c in cands]
        changes = self._changes(cands, plan)
        self._needed += [(t, p) for c in cands for p in c.pods for t in p.affinity]
        self.state.apply(names, plan)
        live = (
            (n.labels, n.pods)
            for name, n in self.state.nodes.items()
            if name not in self.state.removed
        )
        self.moved.applied(*changes, live)
        self.taken.update(names)
        for name in names:
            self.held.pop(name, None)
            self.kept.pop(name, None)
        where: dict[str, str] = {}
        for node, pods in plan.existing.items():
            for p in pods:
                where[p.key] = node
        # replacements[i] is plan.claims[i], possibly narrowed to cheaper types.
        assert len(replacements) == len(plan.claims)
        for i, claim in enumerate(plan.claims):
            for p in claim.pods:
                where[p.key] = f"replacement-{i}"
        saved = sum(c.node.price or 0.0 for c in cands) - sum(r.price for r in replacements)
        cmd = Command(
            reason=reason,
            nodes=sorted(names),
            replacements=list(replacements),
            pods=dict(sorted(where.items())),
            savings_per_hour=saved,
        )
        self.commands.append(cmd)
        return cmd
