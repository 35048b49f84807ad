"""Placement of one pod: existing and in-flight nodes first, then claims opened in this run,
then a new claim from each NodePool by weight; relaxing preferences when nothing fits.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence

from scheduling.pods import Pod
from scheduling.solving.claims import ClaimPlacement
from scheduling.solving.podclass import PodClass, RelaxState
from scheduling.taints import untolerated
from scheduling.targets import (
    ClaimTarget,
    ExistingTarget,
    Failure,
    Target,
    ports_conflict,
    vec_add,
    vec_fits,
)
from scheduling.volumes import Volumes, attach, over_limit


def _in_closed(labels: dict[str, str], closed: list[tuple[str, set[str | None]]]) -> bool:
    # A plain loop: any() over a generator costs several times more in this hot path.
    for key, domains in closed:  # noqa: SIM110
        if labels.get(key) in domains:
            return True
    return False


class RoomIndex:
    """Existing nodes by the cpu and memory they had free when the solve began."""

    def __init__(self, nodes: Sequence[ExistingTarget]) -> None:
        free = [(t.allocatable[0] - t.used[0], t.allocatable[1] - t.used[1]) for t in nodes]
        self._order = sorted(range(len(nodes)), key=lambda i: free[i][0])
        self._cpu = [free[i][0] for i in self._order]
        self._memory = [free[i][1] for i in self._order]

    def holding(self, need: Sequence[int]) -> list[int]:
        """Indices, ascending, of the nodes whose free cpu and memory cover ``need``."""
        cpu, memory = need[0], need[1]
        start = bisect_left(self._cpu, cpu)
        mem = self._memory
        order = self._order
        return sorted(order[k] for k in range(start, len(order)) if mem[k] >= memory)


class Placement(ClaimPlacement):
    """Placing one pod on the first target that takes it."""

    _room_index: RoomIndex | None = None
    # Existing nodes that had room for a request vector (cpu, memory) when the solve began.
    _held: dict[tuple[int, int], list[ExistingTarget]] | None = None

    def _try_existing(self, cls: PodClass, pod: Pod, t: ExistingTarget) -> Failure | None:
        vols = self.problem.volumes.get(pod.key) if t.volume_limits else None
        f = self._existing_failure(cls, t, vols)
        if f is not None:
            if f.local and cls.rejected_by is not None and not t.new_pods:
                assert self.rejections is not None
                self.rejections.note(cls.rejected_by, t.name)
            return f
        t.used = vec_add(t.used, cls.vec)
        t.pods.append(pod)
        t.new_pods.append(pod)
        t.host_ports.update(cls.host_ports)
        if vols:
            attach(t.volumes, vols)
        self._record(cls, pod, t)
        return None

    def _existing_failure(
        self, cls: PodClass, t: ExistingTarget, vols: Volumes | None
    ) -> Failure | None:
        if untolerated(t.taints, cls.tolerations) is not None:
            return Failure("taint not tolerated", True, local=True)
        if cls.host_ports and ports_conflict(t.host_ports, cls.host_ports):
            return Failure("host port in use", True, local=True)
        if vols and over_limit(t.volumes, t.volume_limits, vols):  # per pod: not monotone
            return Failure("volume attach limit reached", False)
        allow = t.undefined_allowed(self.allow_undefined)
        if self.catalog.label_conflict(t.requirements, cls.reqs, allow) is not None:
            return Failure("labels do not match", True, local=True)
        need = vec_add(t.used, cls.vec)
        if not vec_fits(need, t.allocatable):
            return Failure("not enough room", True)  # room: RoomIndex
        topo = self._topology(cls, t, t.requirements)
        return topo if isinstance(topo, Failure) else None

    def _fresh_targets(self, cls: PodClass) -> list[Target]:
        """The targets a class has not looked at yet, in order, less the existing nodes that
        would reject it for good: too little cpu or memory free when the solve began (room
        only shrinks), or known to reject it (``NodeRejections``). Leaving them out changes
        no placement; on a consolidated cluster it spares most of the tries. The nodes with
        room are listed once per request vector (most classes of a solve share a few)."""
        start = cls.cursor
        n = len(self.existing)
        if start >= n:
            return self.targets[start:]
        assert start == 0  # a class takes every target the first time it looks
        held = self._held
        if held is None:
            held = self._held = {}
        need = (cls.vec[0], cls.vec[1])
        picked = held.get(need)
        if picked is None:
            room = self._room_index
            if room is None:
                room = self._room_index = RoomIndex(self.existing)
            picked = held[need] = [self.existing[i] for i in room.holding(cls.vec)]
        gone = cls.rejected_by
        if gone:
            picked = [t for t in picked if t.name not in gone]
        return [*picked, *self.targets[n:]]

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
        known = cls.failed_at
        if known is not None and known[0] == self._changes:
            return known[1]
        before = self._changes
        reason = self._try_targets(pod, cls)
        if reason is not None and self._changes == before:
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
        for pool in self.pools:
            why = self._new_claim(cls, pod, pool)
            if why is None:
                if len(self.targets) > cls.cursor:  # a new claim, not an open one grown
                    cls.cursor = len(self.targets)
                    cands.append(self.targets[-1])
                return None
            reasons.append(why)
        if not self.pools:
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
        known = self._chain_failures.get(id(first))
        if known is not None and known[0] == self._changes:
            # Only now is the chain worked out: pods that fit at once never need it.
            hit = known[1].get(self._relaxation_chain(pod))
            if hit is not None:
                self.states[id(pod)] = hit[1]
                return hit[0]
        before = self._changes
        why = self._schedule_from(pod, RelaxState(), first)
        if why is not None and self._changes == before:
            if known is None or known[0] != before:
                known = self._chain_failures[id(first)] = (before, {})
            known[1][self._relaxation_chain(pod)] = (why, self.states[id(pod)])
        return why

    def _relaxation_chain(self, pod: Pod) -> int:
        """A number for the pod's relaxation steps with their requests and constraints: equal
        numbers (with equal first classes) mean the same class at every step. Kept per pod
        for the round (``CatalogCache.chain_number``)."""
        vol = self.problem.volume_requirements.get(pod.key)

        def steps() -> tuple[object, ...]:
            out: list[object] = []
            state: RelaxState | None = RelaxState()
            while state is not None:
                parts = self.catalog.class_parts(pod, state, vol, self._class_parts)
                out.append((state, parts[5], parts[6]))
                state = self._relax(pod, state)
            return tuple(out)

        return self.catalog.chain_number(pod, vol, steps)

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
