"""The placement loop: each pod, largest first, on existing and in-flight nodes, then claims
opened in this run, then a new claim from each NodePool by weight; relaxing preferences when
nothing fits, and remembering failures until something changes.

The parts it drives own their state: ``ProblemView`` (the problem as the solve reads it),
``TopologyDomains`` (topology groups and counts), ``PodClasses``, ``ExistingNodes``,
``Claims`` (with ``PoolLimits``), ``Pricing`` and ``SlackFilling``. The scheduler itself
owns the run's targets, each pod's relaxation step and the failures it remembers;
``Progress`` counts the changes that tell a remembered failure from a stale one.
"""

from __future__ import annotations

from collections.abc import Callable

from scheduling.pods import Pod
from scheduling.problem import Problem
from scheduling.solving.catalog import CatalogCache
from scheduling.solving.claims import Claims
from scheduling.solving.classes import PodClasses
from scheduling.solving.domains import TopologyDomains
from scheduling.solving.existing import ExistingNodes
from scheduling.solving.limits import PoolLimits
from scheduling.solving.order import balanced_order, cpu_order
from scheduling.solving.podclass import PodClass, RelaxState
from scheduling.solving.pricing import Pricing
from scheduling.solving.rejections import NodeRejections
from scheduling.solving.reservations import share_reservations
from scheduling.solving.result import Plan
from scheduling.solving.slack import SlackFilling
from scheduling.solving.view import ProblemView
from scheduling.targets import ClaimTarget, ExistingTarget, Target


def _in_closed(labels: dict[str, str], closed: list[tuple[str, set[str | None]]]) -> bool:
    # A plain loop: any() over a generator costs several times more in this hot path.
    for key, domains in closed:  # noqa: SIM110
        if labels.get(key) in domains:
            return True
    return False


class Progress:
    """How far the run has moved: pods placed, and every change a placement attempt can see
    (a pod placed, a pool turned tight). The parts tell it; the scheduler reads ``changes``
    to know whether a remembered failure still holds.

    The parts hold this, never the scheduler: a part referring back to its scheduler would
    make every solve a reference cycle, left for the cyclic collector (a disruption round
    runs hundreds of solves)."""

    def __init__(self, record: Callable[[PodClass, Pod, Target], None]) -> None:
        """``record``: counts a placed pod in the topology (``TopologyDomains.record``)."""
        self.placements = 0
        self.changes = 0
        self._record = record

    def placed(self, cls: PodClass, pod: Pod, t: Target) -> None:
        """A pod joined ``t``: the run changed, and the topology counts it."""
        self.placements += 1
        self.changes += 1
        self._record(cls, pod, t)

    def changed(self) -> None:
        """Something placement attempts can see changed (a pool turned tight)."""
        self.changes += 1


class Scheduler:
    """One scheduling run over a Problem. Deterministic for a given input.

    The part classes are class attributes so that a test can run the loop over parts with
    their memories undone (tests/unit/scheduling/direct_solver.py)."""

    domains_part: type[TopologyDomains] = TopologyDomains
    classes_part: type[PodClasses] = PodClasses
    existing_part: type[ExistingNodes] = ExistingNodes
    limits_part: type[PoolLimits] = PoolLimits
    claims_part: type[Claims] = Claims
    pricing_part: type[Pricing] = Pricing
    slack_part: type[SlackFilling] = SlackFilling

    def __init__(
        self,
        problem: Problem,
        order: str = "balanced",
        catalog: CatalogCache | None = None,
        rejections: NodeRejections | None = None,
    ) -> None:
        """``order`` is "balanced" (ours), "cpu" (Karpenter's: cpu, then memory, descending;
        with first-fit claims this is the first-fit-decreasing baseline benchmarks compare to)
        or "given" (the pending pods as the problem lists them, otherwise as "balanced": a
        disruption simulation trying other orders, scheduling/disruption/pod_orders.py).

        ``catalog`` carries what depends only on the pools and the instance types from one
        solve to the next (disruption runs hundreds of simulations on one catalog);
        ``rejections``, the existing nodes known to reject a pod class (one round's)."""
        if order not in ("balanced", "cpu", "given"):
            raise ValueError(f"unknown order {order!r}")
        self.problem = problem
        self.order = order
        self.view = view = ProblemView(problem, catalog if catalog is not None else CatalogCache())
        # Every target pods can join: the existing nodes, then the claims in creation order.
        self.targets: list[Target] = []
        # Each pod's relaxation step: where it was placed, or its last when it fit nowhere.
        self.states: dict[int, RelaxState] = {}
        # First class → (changes, relaxation chain → (reason, last step)) of pods that failed.
        self._chain_failures: dict[int, tuple[int, dict[int, tuple[str, RelaxState]]]] = {}
        self.domains = domains = self.domains_part(view)
        # Pods placed and changes seen (``_place`` remembers a class's failure until it moves).
        self.progress = progress = Progress(domains.record)
        self.classes = classes = self.classes_part(view, domains, rejections)
        self.nodes = self.existing_part(view, domains, rejections, progress.placed)
        self.limits = limits = self.limits_part(view, progress.changed)
        self.claims = claims = self.claims_part(
            view, domains, limits, self.targets, progress.placed
        )
        self.pricing = pricing = self.pricing_part(view)
        self.slack = self.slack_part(view, claims, limits, pricing)
        # The hot loop's calls, bound once.
        self._pod_class = classes.pod_class
        self._relax = classes.relax
        self._try_claim = claims.try_claim
        self._new_claim = claims.new_claim
        self._try_existing = self.nodes.try_existing
        self._closed_domains = domains.closed_domains

    @property
    def existing(self) -> list[ExistingTarget]:
        """The existing and in-flight nodes as targets, in order."""
        return self.nodes.targets

    def solve(self) -> Plan:
        self.view.start()
        self.targets.extend(self.nodes.targets)
        self.domains.declare_groups()
        self.domains.count_bound_pods()
        problem = self.problem
        pending = [p for p in problem.pending if p.key not in problem.rejected]
        unschedulable = dict(problem.rejected)
        queue = []
        for p in pending:
            if p.invalid:
                unschedulable[p.key] = p.invalid
            else:
                queue.append(p)
        if self.order == "balanced":
            queue = balanced_order(queue, self.view.memory_per_cpu)
        elif self.order == "cpu":
            queue = cpu_order(queue)
        failed: list[tuple[Pod, str, int]] = []
        for p in queue:
            self._schedule_or_note(p, failed)
        # Pods that failed may fit now that others placed (pod affinity); retry until stable.
        while failed:
            retry, failed = failed, []
            for p, why, at in retry:
                if self._fails_again(at):
                    failed.append((p, why, at))
                    continue
                self.states.pop(id(p), None)
                self._schedule_or_note(p, failed)
            if len(failed) == len(retry):
                break
        for p, why, _ in failed:
            unschedulable[p.key] = why
        scheduled = [p for p in queue if p.key not in unschedulable]
        if self.order != "cpu":
            self.slack.fill()
        claims = share_reservations([self.pricing.finalize(c) for c in self.claims.open if c.pods])
        existing = {t.name: list(t.new_pods) for t in self.nodes.targets if t.new_pods}
        return Plan(claims, existing, unschedulable, scheduled)

    def _schedule_or_note(self, pod: Pod, failed: list[tuple[Pod, str, int]]) -> None:
        """Schedule a pod from its first relaxation step; if it fits nowhere, note it in
        ``failed`` with the solver's changes count when it failed (-1 if its own attempt
        changed the solver, say by turning a pool tight)."""
        progress = self.progress
        before = progress.changes
        why = self._schedule(pod)
        if why is not None:
            failed.append((pod, why, before if progress.changes == before else -1))

    def _fails_again(self, at: int) -> bool:
        """Whether a pod that failed when the solver's changes count was ``at`` would fail
        again now, for the same reason and at the same relaxation step: nothing it can see
        has changed since (a retry starts from the first step, as its attempt did). On a
        consolidation simulation most failed pods failed after the last placement."""
        return at == self.progress.changes

    def _fresh_targets(self, cls: PodClass) -> list[Target]:
        """The targets a class has not looked at yet, in order, less the existing nodes that
        would reject it for good (``ExistingNodes.with_room``)."""
        start = cls.cursor
        n = len(self.nodes.targets)
        if start >= n:
            return self.targets[start:]
        assert start == 0  # a class takes every target the first time it looks
        return [*self.nodes.with_room(cls), *self.targets[n:]]

    def _place(self, pod: Pod, cls: PodClass) -> str | None:
        """Place a pod; returns None on success, else the reason it fits nowhere.

        A class that failed to place a pod fails again, for the same reason, while nothing
        has changed since (no pod placed, no pool turned tight): every target and pool
        answers a class alone, except for a pod's own volumes on nodes with attach limits
        (such pods are always tried, and never answer for others). On a consolidation
        simulation most pods fit nowhere, and the replicas of a Deployment follow each other
        in the queue: nine tries in ten are answered here."""
        if self.problem.volumes.get(pod.key):
            return self._try_targets(pod, cls)
        progress = self.progress
        known = cls.failed_at
        if known is not None and known[0] == progress.changes:
            return known[1]
        before = progress.changes
        reason = self._try_targets(pod, cls)
        if reason is not None and progress.changes == before:
            cls.failed_at = (before, reason)
        return reason

    def _try_targets(self, pod: Pod, cls: PodClass) -> str | None:
        """``_place`` without its memory of failures."""
        cands = cls.candidates
        if cls.cursor < len(self.targets):
            cands.extend(self._fresh_targets(cls))
            cls.cursor = len(self.targets)
        closed = self._closed_domains(cls) if cls.own else None
        i = 0
        while i < len(cands):
            t = cands[i]
            if isinstance(t, ClaimTarget):
                f = self._try_claim(cls, pod, t)
            else:
                assert isinstance(t, ExistingTarget)
                if closed is not None and (
                    t.labels.get(closed[0][0]) in closed[0][1]
                    or (len(closed) > 1 and _in_closed(t.labels, closed))
                ):
                    i += 1  # fails for now, not for good: kept for later pods
                    continue
                f = self._try_existing(cls, pod, t)
            if f is None:
                return None
            if f.monotone:
                del cands[i]
            else:
                i += 1
        reasons = []
        pools = self.view.pools
        for pool in pools:
            why = self._new_claim(cls, pod, pool, self.progress.placements)
            if why is None:
                if len(self.targets) > cls.cursor:  # a new claim, not an open one grown
                    cls.cursor = len(self.targets)
                    cands.append(self.targets[-1])
                return None
            reasons.append(why)
        if not pools:
            return "no NodePool exists and no existing node has room"
        return "; ".join(reasons)

    def _schedule(self, pod: Pod) -> str | None:
        """Place a pod, relaxing its preferences one step at a time until it fits; None on
        success, else why it fits nowhere (its last step's reason).

        A pod alike in every step to one that failed, from the first step, while nothing has
        changed since (no pod placed, no pool turned tight) fails the same way: it is
        answered at once. "Alike" is the first step's class (namespace, the labels selectors
        read, requests, constraints) and ``_relaxation_chain``; pods with volumes are always
        tried (their volumes count on nodes with attach limits)."""
        start = self.states.get(id(pod))
        if start is not None or self.problem.volumes.get(pod.key):
            return self._schedule_from(pod, start or RelaxState())
        first = self._pod_class(pod, RelaxState())
        progress = self.progress
        known = self._chain_failures.get(id(first))
        if known is not None and known[0] == progress.changes:
            # Only now is the chain worked out: pods that fit at once never need it.
            hit = known[1].get(self._relaxation_chain(pod))
            if hit is not None:
                self.states[id(pod)] = hit[1]
                return hit[0]
        before = progress.changes
        why = self._schedule_from(pod, RelaxState(), first)
        if why is not None and progress.changes == before:
            if known is None or known[0] != before:
                known = self._chain_failures[id(first)] = (before, {})
            known[1][self._relaxation_chain(pod)] = (why, self.states[id(pod)])
        return why

    def _relaxation_chain(self, pod: Pod) -> int:
        """A number for the pod's relaxation steps with their requests and constraints: equal
        numbers (with equal first classes) mean the same class at every step. Kept per pod
        for the round (``CatalogCache.chain_number``)."""
        vol = self.problem.volume_requirements.get(pod.key)
        catalog = self.view.catalog
        class_parts = self.classes.class_parts

        def steps() -> tuple[object, ...]:
            out: list[object] = []
            state: RelaxState | None = RelaxState()
            while state is not None:
                parts = catalog.class_parts(pod, state, vol, class_parts)
                out.append((state, parts[5], parts[6]))
                state = self._relax(pod, state)
            return tuple(out)

        return catalog.chain_number(pod, vol, steps)

    def _schedule_from(
        self, pod: Pod, state: RelaxState, first: PodClass | None = None
    ) -> str | None:
        """``_schedule`` from relaxation step ``state`` (``first``: its class, if known),
        without its memory of failures."""
        while True:
            if first is not None:
                cls, first = first, None
            else:
                cls = self._pod_class(pod, state)
            reason = self._place(pod, cls)
            if reason is None:
                self.states[id(pod)] = state
                return None
            nxt = self._relax(pod, state)
            if nxt is None:
                self.states[id(pod)] = state
                return reason
            state = nxt
