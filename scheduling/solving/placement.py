"""Placement of one pod: existing and in-flight nodes first, then claims opened in this run,
then a new claim from each NodePool by weight; relaxing preferences when nothing fits.
"""

from __future__ import annotations

from scheduling.pods import Pod
from scheduling.solving.claims import ClaimPlacement
from scheduling.solving.podclass import PodClass, RelaxState
from scheduling.taints import untolerated
from scheduling.targets import (
    ClaimTarget,
    ExistingTarget,
    Failure,
    ports_conflict,
    vec_add,
    vec_fits,
)
from scheduling.volumes import attach, over_limit


class Placement(ClaimPlacement):
    """Placing one pod on the first target that takes it."""

    def _try_existing(self, cls: PodClass, pod: Pod, t: ExistingTarget) -> Failure | None:
        if untolerated(t.taints, cls.tolerations) is not None:
            return Failure("taint not tolerated", True)
        if cls.host_ports and ports_conflict(t.host_ports, cls.host_ports):
            return Failure("host port in use", True)
        vols = self.problem.volumes.get(pod.key) if t.volume_limits else None
        if vols and over_limit(t.volumes, t.volume_limits, vols):  # per pod: not monotone
            return Failure("volume attach limit reached", False)
        if t.requirements.compatible(cls.reqs, self.allow_undefined) is not None:
            return Failure("labels do not match", True)
        need = vec_add(t.used, cls.vec)
        if not vec_fits(need, t.allocatable):
            return Failure("not enough room", True)
        topo = self._topology(cls, t, t.requirements)
        if isinstance(topo, Failure):
            return topo
        t.used = need
        t.pods.append(pod)
        t.new_pods.append(pod)
        t.host_ports.update(cls.host_ports)
        if vols:
            attach(t.volumes, vols)
        self._record(cls, pod, t)
        return None

    def _place(self, pod: Pod, cls: PodClass) -> str | None:
        """Place a pod; returns None on success, else the reason it fits nowhere."""
        cands = cls.candidates
        if cls.cursor < len(self.targets):
            cands.extend(self.targets[cls.cursor :])
            cls.cursor = len(self.targets)
        i = 0
        while i < len(cands):
            t = cands[i]
            if isinstance(t, ClaimTarget):
                f = self._try_claim(cls, pod, t)
            else:
                assert isinstance(t, ExistingTarget)
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
        state = self.states.get(id(pod), RelaxState())
        while True:
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
