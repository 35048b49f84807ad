"""Runs of twins: a Deployment's replicas, alike in everything a pod class reads (namespace,
labels, requests, constraints) but their names, follow each other in the queue; the second
and later of a run are placed or failed as the one before, without asking every layer again.

After a pod is placed at its first step on an existing node, its twin goes to the same node
if the node still has room, exactly as the full path would place it. Twins share their first
class; with no topology rule of its own or of others on the class and no host ports, every
target the pod tried before that node rejected the class for good and was struck off its
list, so the node heads the list, and the only test that could now fail is room (the node's
taints and labels are as they were). A node out of room, or a pod placed on a claim or at a
later step, sends the twin the full way.

After a pod fails while nothing changes, a twin with the same relaxation chain fails the same
way at the same step: the solver's own memory (``Placement._schedule``) would answer it so,
by its first class and chain.

Pods with volumes are never twins (their own volumes count on nodes with attach limits).
"""

from __future__ import annotations

from scheduling.pods import Pod
from scheduling.solving.podclass import FIRST_STEP
from scheduling.solving.slack import SlackFilling
from scheduling.targets import vec_add, vec_fits

_NO_TWIN = -1

Failed = list[tuple[Pod, str, int]]


class TwinRuns(SlackFilling):
    """Placing the queue a run of twins at a time (see the module docstring)."""

    def _schedule_or_note(self, pod: Pod, failed: Failed) -> None:
        """Schedule a pod from its first relaxation step; if it fits nowhere, note it in
        ``failed`` with the solver's changes count when it failed (-1 if its own attempt
        changed the solver, say by turning a pool tight)."""
        before = self._changes
        why = self._schedule(pod)
        if why is not None:
            failed.append((pod, why, before if self._changes == before else -1))

    def _twin_number(self, pod: Pod) -> int:
        """Equal numbers for pods with the same first class in this solve; -1 for a pod that
        has no twin (one with volumes)."""
        if self.problem.volumes.get(pod.key):
            return _NO_TWIN
        vol = self.problem.volume_requirements.get(pod.key)
        return self.catalog.twin_number(
            pod, vol, lambda: self.catalog.class_parts(pod, FIRST_STEP, vol, self._class_parts)
        )

    def _place_queue(self, queue: list[Pod], failed: Failed) -> None:
        """Schedule the queue in order, noting pods that fit nowhere in ``failed``."""
        head_twin = _NO_TWIN
        # How the run's head fared: its failure as noted in ``failed``, or None if placed.
        head_failed: tuple[Pod, str, int] | None = None
        for p in queue:
            twin = self._twin_number(p)
            if twin != _NO_TWIN and twin == head_twin and self._follow(p, head_failed, failed):
                continue
            self._last_existing = None
            self._schedule_or_note(p, failed)
            head_twin = twin
            head_failed = failed[-1] if failed and failed[-1][0] is p else None
            if head_failed is None and self.states.get(id(p)) is not FIRST_STEP:
                head_twin = _NO_TWIN  # placed at a later step: its twins go the full way

    def _follow(self, pod: Pod, head_failed: tuple[Pod, str, int] | None, failed: Failed) -> bool:
        """Place or fail ``pod`` as the run's head was, if that is provably what the full
        path would do; False if it must take the full path."""
        if head_failed is None:  # the head was placed at its first step
            last = self._last_existing
            if last is None:
                return False  # on a claim
            t, cls = last
            if cls.own or cls.inverse or cls.owned_anti or cls.host_ports:
                return False
            if not vec_fits(vec_add(t.used, cls.vec), t.allocatable):
                return False
            self._put_existing(cls, pod, t, None)
            self.states[id(pod)] = FIRST_STEP
            return True
        head, why, at = head_failed
        if at != self._changes:  # its own attempt changed the solver, or a pod placed since
            return False
        if self._relaxation_chain(pod) != self._relaxation_chain(head):
            return False  # alike at the first step only
        self.states[id(pod)] = self.states[id(head)]
        failed.append((pod, why, at))
        return True
