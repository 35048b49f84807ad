"""Topology: pod counts per domain for spread, affinity and anti-affinity, shared by pods.

Karpenter's model: every distinct (kind, key, selector, namespaces, skew...) is one group whose
counts all pods share. A pod's own groups narrow where it may go; anti-affinity groups owned
by other pods (already running or placed in this run) block the domains their owners hold.
Unlike Karpenter, a zonal decision always pins the claim to one zone, so the counts recorded
are exact rather than "somewhere in these zones".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from scheduling.pods import AffinityTerm, LabelSelector, Pod, SpreadConstraint

SPREAD, AFFINITY, ANTI = "spread", "affinity", "anti-affinity"


@dataclass(eq=False)
class TopologyGroup:
    kind: str
    key: str
    selector: LabelSelector
    namespaces: frozenset[str] | None  # None = every namespace
    max_skew: int = 1
    min_domains: int | None = None
    honor_affinity: bool = True
    counts: dict[str, int] = field(default_factory=dict)
    owner_domains: set[str] = field(default_factory=set)  # ANTI: where the term's owners run

    def identity(self) -> tuple[object, ...]:
        """What makes two groups one (their counts are shared)."""
        return (
            self.kind,
            self.key,
            self.selector,
            self.namespaces,
            self.max_skew,
            self.min_domains,
            self.honor_affinity,
        )

    def selects(self, pod: Pod) -> bool:
        if self.namespaces is not None and pod.namespace not in self.namespaces:
            return False
        return self.selector.matches(pod.labels)

    def describe(self) -> str:
        text = self.__dict__.get("_text")
        if text is None:
            text = self._describe()
            self.__dict__["_text"] = text
        return text

    def _describe(self) -> str:
        sel = ", ".join(
            f"{k}={next(iter(v))}" if op == "In" and len(v) == 1 else f"{k} {op} {sorted(v)}"
            for k, op, v in self.selector.clauses
        )
        if self.kind == SPREAD:
            return f"topology spread on {self.key} (maxSkew {self.max_skew}, selector {{{sel}}})"
        return f"pod {self.kind} on {self.key} (selector {{{sel}}})"


def _term_namespaces(
    term: AffinityTerm, pod: Pod, namespace_labels: Mapping[str, Mapping[str, str]]
) -> frozenset[str] | None:
    """The namespaces a pod (anti-)affinity term selects pods in (None: every namespace).

    As the kube-scheduler: ``namespaces`` and ``namespaceSelector`` add up; an empty selector
    (``{}``) means every namespace; with neither, the pod's own namespace."""
    if term.all_namespaces:
        return None
    if term.namespace_selector is not None:
        selected = (
            ns for ns, labels in namespace_labels.items() if term.namespace_selector.matches(labels)
        )
        return term.namespaces | frozenset(selected)
    return term.namespaces or frozenset((pod.namespace,))


class Topology:
    """All topology groups of one scheduling run, interned by identity."""

    def __init__(self, namespace_labels: Mapping[str, Mapping[str, str]] | None = None) -> None:
        # Every namespace the run knows of, with its labels (for namespaceSelector).
        self.namespace_labels = namespace_labels or {}
        self._groups: dict[tuple[object, ...], TopologyGroup] = {}
        self.anti_groups: list[TopologyGroup] = []

    @property
    def groups(self) -> Iterable[TopologyGroup]:
        return self._groups.values()

    def _intern(self, group: TopologyGroup) -> TopologyGroup:
        ident = group.identity()
        found = self._groups.get(ident)
        if found is None:
            self._groups[ident] = group
            if group.kind == ANTI:
                self.anti_groups.append(group)
            found = group
        return found

    def spread_group(self, pod: Pod, s: SpreadConstraint) -> TopologyGroup:
        return self._intern(
            TopologyGroup(
                SPREAD,
                s.key,
                s.selector,
                frozenset((pod.namespace,)),
                s.max_skew,
                s.min_domains,
                s.honor_affinity,
            )
        )

    def affinity_group(self, pod: Pod, term: AffinityTerm, anti: bool) -> TopologyGroup:
        return self._intern(
            TopologyGroup(
                ANTI if anti else AFFINITY,
                term.key,
                term.selector,
                _term_namespaces(term, pod, self.namespace_labels),
            )
        )

    def record(
        self,
        pod: Pod,
        matching: Iterable[TopologyGroup],
        owned_anti: Iterable[TopologyGroup],
        domains: Mapping[str, list[str]],
    ) -> None:
        """Count a placed pod in every group selecting it; mark domains its anti terms hold.

        ``domains`` maps a topology key to the domains the pod may end up in (one when the
        target is pinned); an unpinned key counts only for anti-affinity, conservatively.
        """
        for g in matching:
            ds = domains.get(g.key) or []
            if len(ds) == 1:
                g.counts[ds[0]] = g.counts.get(ds[0], 0) + 1
            elif g.kind == ANTI:
                for d in ds:
                    g.counts[d] = g.counts.get(d, 0) + 1
        for g in owned_anti:
            g.owner_domains.update(domains.get(g.key) or [])
