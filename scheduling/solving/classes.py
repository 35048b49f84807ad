"""Pod classes and preference relaxation: pods with identical constraints share one class,
relaxed one preference at a time in Karpenter's order.
"""

from __future__ import annotations

from dataclasses import replace

from models import labels as L
from models.requirements import Requirements
from scheduling.pods import Pod, SpreadConstraint
from scheduling.solving.catalog import ClassParts
from scheduling.solving.domains import TopologyDomains
from scheduling.solving.podclass import PodClass, RelaxState
from scheduling.solving.rejections import NodeRejections
from scheduling.solving.view import ProblemView
from scheduling.taints import TOLERATE_ALL_PREFER_NO_SCHEDULE
from scheduling.topology import AFFINITY, SPREAD, TopologyGroup


class PodClasses:
    """The run's pod classes, by constraints once relaxed (see the module docstring)."""

    def __init__(
        self, view: ProblemView, domains: TopologyDomains, rejections: NodeRejections | None
    ) -> None:
        """``rejections``: the existing nodes known to reject a class (one round's), which
        each class made here is given."""
        self.view = view
        self.problem = view.problem
        self.catalog = view.catalog
        self.vec = view.vec
        self._sig = view.sig
        self._label_keys = view.label_keys
        self.domains = domains
        self.topology = domains.topology
        self.rejections = rejections
        self._classes: dict[tuple[object, ...], PodClass] = {}

    def pod_class(self, pod: Pod, state: RelaxState) -> PodClass:
        vol = self.problem.volume_requirements.get(pod.key)
        parts = self.catalog.class_parts(pod, state, vol, self.class_parts)
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
        own = _affinity_first(own)
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
                eligible: set[str] = set()
                for term in _spread_terms(pod):
                    eligible |= self.domains.eligible_domains(
                        term, tolerations, g.key, s.honor_affinity, s.honor_taints
                    )
                cls.eligible[g.key] = eligible
        self._classes[key] = cls
        return cls

    def class_parts(self, pod: Pod, state: RelaxState, vol: Requirements | None) -> ClassParts:
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

    def relax(self, pod: Pod, s: RelaxState) -> RelaxState | None:
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


def _spread_terms(pod: Pod) -> list[Requirements]:
    """What ``nodeAffinityPolicy: Honor`` filters a spread's domains by, as the kube-scheduler
    and Karpenter read it: the node selector and the required node-affinity terms, ORed (one
    requirement set a term). Not the term the solver is trying, preferred terms or the
    volumes' zones: a zone the pod cannot use for another reason still counts."""
    if not pod.required_terms:
        return [pod.node_selector]
    return [pod.node_selector.with_requirements(t) for t in pod.required_terms]


def _affinity_first(
    own: list[tuple[TopologyGroup, SpreadConstraint | None]],
) -> list[tuple[TopologyGroup, SpreadConstraint | None]]:
    """The class's own groups with each spread after the pod affinity on its key. A spread
    narrows a new claim's domains to the least filled; read first, it can leave only
    domains without a pod the affinity needs, where the affinity read first leaves the
    domains with one and the spread then takes the least filled of those (Karpenter reads
    a pod's groups in no set order, so either is its own; seeds 772 and 2665 of the
    exactness tool). Where both orders admit the pod, they pin the same domains."""
    followed = {g.key for g, _ in own if g.kind == AFFINITY}
    if not followed:
        return own
    late = {id(g) for g, _ in own if g.kind == SPREAD and g.key in followed}
    if not late:
        return own
    return [x for x in own if id(x[0]) not in late] + [x for x in own if id(x[0]) in late]
