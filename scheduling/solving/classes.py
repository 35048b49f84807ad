"""Pod classes and preference relaxation: pods with identical constraints share one class,
relaxed one preference at a time in Karpenter's order; and the order pods are tried in.
"""

from __future__ import annotations

from dataclasses import replace

from models import labels as L
from models.requirements import Requirements
from models.resources import CPU, MEMORY
from scheduling.pods import Pod, SpreadConstraint
from scheduling.solving.catalog import ClassParts
from scheduling.solving.domains import TopologyDomains
from scheduling.solving.podclass import PodClass, RelaxState
from scheduling.taints import TOLERATE_ALL_PREFER_NO_SCHEDULE
from scheduling.topology import TopologyGroup


class PodClasses(TopologyDomains):
    """Pod classes, preference relaxation and queue order."""

    def _pod_class(self, pod: Pod, state: RelaxState) -> PodClass:
        vol = self.problem.volume_requirements.get(pod.key)
        parts = self.catalog.class_parts(pod, state, vol, self._class_parts)
        reqs, tolerations, spreads, aff, anti, requests, constraints = parts
        labels = tuple(sorted((k, v) for k, v in pod.labels.items() if k in self._label_keys))
        key = (pod.namespace, labels, requests, constraints)
        cls = self._classes.get(key)
        if cls is not None:
            return cls
        own: list[tuple[TopologyGroup, SpreadConstraint | None]] = [
            (self.topology.spread_group(pod, s), s) for s in spreads
        ]
        own += [(self.topology.affinity_group(pod, t, anti=False), None) for t in aff]
        own += [(self.topology.affinity_group(pod, t, anti=True), None) for t in anti]
        # Only required anti-affinity binds other pods (Karpenter does not track the inverse
        # of preferences either): a preference is the owner's wish, not the others' rule.
        owned_anti = [self.topology.affinity_group(pod, t, anti=True) for t in pod.anti_affinity]
        matching = [g for g in self.topology.groups if g.selects(pod)]
        inverse = [g for g in self.topology.anti_groups if g.selects(pod)]
        cls = PodClass(
            requests=pod.requests,
            vec=self.vec(pod.requests),
            reqs=reqs,
            tolerations=tolerations,
            own=own,
            owned_anti=owned_anti,
            inverse=inverse,
            matching=matching,
            host_ports=pod.host_ports,
            self_selecting={id(g): int(g.selects(pod)) for g, _ in own},
        )
        if self.rejections is not None:
            # Everything but the pod's size: room is the RoomIndex's; a rejection remembered
            # is one no pod of these constraints, whatever its requests, could pass.
            full = (
                pod.namespace,
                tuple(sorted(pod.labels.items())),
                self._sig(reqs),
                tolerations,
                spreads,
                aff,
                anti,
                pod.host_ports,
            )
            cls.rejected_by = self.rejections.of(full)
        for g, s in own:
            # A hostname spread never reads its eligible domains (its floor is 0).
            if s is not None and g.key != L.HOSTNAME and g.key not in cls.eligible:
                cls.eligible[g.key] = self._eligible_domains(
                    cls, g.key, s.honor_affinity, s.honor_taints
                )
        self._classes[key] = cls
        return cls

    def _class_parts(self, pod: Pod, state: RelaxState, vol: Requirements | None) -> ClassParts:
        """The pod's constraints once relaxed to ``state`` (see ``ClassParts``)."""
        reqs = pod.node_selector
        if pod.required_terms:
            reqs = reqs.with_requirements(pod.required_terms[state.term])
        prefs = pod.preferred_terms[state.pref_node_dropped :]
        if prefs:
            reqs = reqs.with_requirements(prefs[0][1])
        if vol is not None:
            reqs = reqs.with_requirements(vol)
        spreads = tuple(s for s in pod.spreads if s.hard or not state.schedule_anyway_dropped)
        aff = (
            *pod.affinity,
            *(t for _, t in pod.preferred_affinity[state.pref_affinity_dropped :]),
        )
        anti = (
            *pod.anti_affinity,
            *(t for _, t in pod.preferred_anti_affinity[state.pref_anti_dropped :]),
        )
        tolerations = pod.tolerations
        if state.tolerate_prefer_no_schedule:
            tolerations = (*tolerations, TOLERATE_ALL_PREFER_NO_SCHEDULE)
        constraints = (self._sig(reqs), tolerations, spreads, aff, anti, pod.host_ports)
        return (
            reqs,
            tolerations,
            spreads,
            aff,
            anti,
            tuple(sorted(pod.requests.items())),
            self.catalog.constraints_number(constraints),
        )

    def _relax(self, pod: Pod, s: RelaxState) -> RelaxState | None:
        if s.term + 1 < len(pod.required_terms):
            return replace(s, term=s.term + 1)
        if s.pref_affinity_dropped < len(pod.preferred_affinity):
            return replace(s, pref_affinity_dropped=s.pref_affinity_dropped + 1)
        if s.pref_anti_dropped < len(pod.preferred_anti_affinity):
            return replace(s, pref_anti_dropped=s.pref_anti_dropped + 1)
        if s.pref_node_dropped < len(pod.preferred_terms):
            return replace(s, pref_node_dropped=s.pref_node_dropped + 1)
        if not s.schedule_anyway_dropped and any(not sp.hard for sp in pod.spreads):
            return replace(s, schedule_anyway_dropped=True)
        if not s.tolerate_prefer_no_schedule:
            return replace(s, tolerate_prefer_no_schedule=True)
        return None

    def _balanced_order(self, pods: list[Pod]) -> list[Pod]:
        """Largest first, zipped from cpu-heavy and memory-heavy pods to keep the mix even.

        Pods are sorted by size (cpu and memory weighed by how the catalog sells them), then
        split by which resource dominates; the queue takes the next pod from whichever side
        brings the running cpu:memory mix back toward the catalog's. Claims are filled in
        queue order, so each ends up with a mix its instance types can hold without paying for
        an idle resource. (Karpenter sorts by cpu, then memory, which puts the cpu-heavy pods
        on the first nodes and the memory-heavy ones on the last: both half-used.)
        """
        ordered = sorted(pods, key=self._order_key)
        k = self._memory_per_cpu
        cpu_heavy = [p for p in ordered if p.requests.get(CPU, 0) * k >= p.requests.get(MEMORY, 0)]
        mem_heavy = [p for p in ordered if p.requests.get(CPU, 0) * k < p.requests.get(MEMORY, 0)]
        out: list[Pod] = []
        i = j = 0
        balance = 0.0
        while i < len(cpu_heavy) or j < len(mem_heavy):
            take_cpu = j >= len(mem_heavy) or (i < len(cpu_heavy) and balance <= 0)
            p = cpu_heavy[i] if take_cpu else mem_heavy[j]
            if take_cpu:
                i += 1
            else:
                j += 1
            balance += p.requests.get(CPU, 0) * k - p.requests.get(MEMORY, 0)
            out.append(p)
        return out

    def _order_key(self, p: Pod) -> tuple[object, ...]:
        """Largest first, where size weighs cpu and memory by how the catalog sells them.

        Karpenter sorts by cpu, then memory; that puts cpu-heavy pods together on the first
        nodes and memory-heavy ones on the last, and both kinds of node end up half empty in
        the other resource. Weighing both keeps every node's mix close to the catalog's.
        """
        size = p.requests.get(CPU, 0) * self._memory_per_cpu + p.requests.get(MEMORY, 0)
        return (-size, -p.requests.get(CPU, 0), p.namespace, p.owner_name or "", p.name)
