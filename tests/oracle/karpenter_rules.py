"""Karpenter's scheduling rules where they refuse a placement the kube-scheduler admits.

Karpenter simulates a consolidation with its own scheduler, which reads a few constraints
more strictly than the kube-scheduler's filters (its documented semantics, written here from
its docs and design, sharing nothing with ``scheduling/``):

- **Topology domains include the nodes a NodePool could launch.** A spread's domains are the
  kube-scheduler's (eligible existing nodes) plus, for each node a pool could launch for the
  pod (a pool, a type and an available offering, the pod's node selection honoured as
  ``nodeAffinityPolicy`` says and the pool's taints as ``nodeTaintsPolicy`` says), its zone
  holding 0 pods, and for a hostname spread a new node holding 0 (so at most ``maxSkew``
  pods of a group on any node while a pool could launch one for it).
- **Soft spread is honoured.** ``ScheduleAnyway`` is a preference Karpenter keeps required
  until the pod fits nowhere, and a pool can nearly always launch a node for it; here it is
  read as a hard constraint, counted as above.
- **The first node-selector term that can be met wins.** A pod with several required terms
  is held to the first one some existing or launchable node satisfies; Karpenter drops a
  term only when the pod cannot be scheduled with it.
- **A replacement of several nodes is no delete in disguise** (``same_type_allows``).

``KarpenterRules.refusal`` says why a placement breaks one of these, or None; the caller
applies it on top of the kube-scheduler's verdict. The SpotToSpotConsolidation gate is
a rule on the step (a replacement), not on a placement: ``exactness.cheapest_step`` has it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tests.oracle.cluster import Cluster, Obj, key_of, namespace_of, pod_labels
from tests.oracle.generate import INSTANCE_TYPE
from tests.oracle.objects import HOSTNAME
from tests.oracle.resources import node_allocatable, pod_requests
from tests.oracle.selectors import (
    label_selector_matches,
    node_labels,
    pod_matches_node_selection,
    required_node_affinity,
    term_matches,
    untolerated_taint,
)
from tests.oracle.spread import constraint_selector


def _eligible(pod: Obj, c: Mapping[str, Any], node: Obj) -> bool:
    """Whether ``node`` counts for the pod's constraint ``c`` (the kube-scheduler's policies)."""
    if c["topologyKey"] not in node_labels(node):
        return False
    honor_affinity = (c.get("nodeAffinityPolicy") or "Honor") == "Honor"
    if honor_affinity and not pod_matches_node_selection(pod, node):
        return False
    honor_taints = (c.get("nodeTaintsPolicy") or "Ignore") == "Honor"
    return not (honor_taints and untolerated_taint(pod, node))


def _selection_without_terms(pod: Obj) -> Obj:
    """The pod with its nodeSelector only (for testing its required terms one at a time)."""
    spec = dict(pod.get("spec") or {})
    affinity = dict(spec.get("affinity") or {})
    affinity.pop("nodeAffinity", None)
    spec["affinity"] = affinity
    return {**pod, "spec": spec}


class KarpenterRules:
    """The rules above for one cluster, given every node its pools could launch
    (``launchable``: Node bodies with a pool's labels and taints, one per pool, type and
    available offering)."""

    def __init__(self, launchable: Sequence[Obj]) -> None:
        self.launchable = list(launchable)
        self._new_domains: dict[tuple[str, int], set[str]] = {}

    def refusal(self, pod: Obj, node: Obj, cluster: Cluster) -> str | None:
        return self._term_refusal(pod, node, cluster) or self._spread_refusal(pod, node, cluster)

    def _term_refusal(self, pod: Obj, node: Obj, cluster: Cluster) -> str | None:
        terms = required_node_affinity(pod) or []
        if len(terms) < 2:
            return None
        base = _selection_without_terms(pod)
        for i, term in enumerate(terms):
            candidates = [*cluster.nodes.values(), *self.launchable]
            if any(self._meets(base, term, n) for n in candidates):
                if self._meets(base, term, node):
                    return None
                return f"Karpenter holds the pod to its node-selector term {i}, unmet here"
        return None

    @staticmethod
    def _meets(base: Obj, term: Mapping[str, Any], node: Obj) -> bool:
        name = str((node.get("metadata") or {}).get("name"))
        return pod_matches_node_selection(base, node) and term_matches(
            term, node_labels(node), name
        )

    def _launchable_domains(self, pod: Obj, i: int, c: Mapping[str, Any]) -> set[str]:
        """The domains of constraint ``i`` that nodes the pools could launch add, holding 0
        (for a hostname spread, one new node, whatever its name)."""
        key = (key_of(pod), i)
        if key not in self._new_domains:
            topology = c["topologyKey"]
            found = [n for n in self.launchable if _eligible(pod, c, n)]
            if topology == HOSTNAME:
                self._new_domains[key] = {"<a new node>"} if found else set()
            else:
                self._new_domains[key] = {node_labels(n)[topology] for n in found}
        return self._new_domains[key]

    def _spread_refusal(self, pod: Obj, node: Obj, cluster: Cluster) -> str | None:
        constraints = (pod.get("spec") or {}).get("topologySpreadConstraints") or []
        ns = namespace_of(pod)
        for i, c in enumerate(constraints):
            key = c["topologyKey"]
            if key not in node_labels(node):
                continue  # the kube-scheduler's filter already judged a hard one
            selector = constraint_selector(pod, c)
            counts: dict[str, int] = {}
            for n in cluster.nodes.values():
                if _eligible(pod, c, n):
                    counts.setdefault(node_labels(n)[key], 0)
            for d in self._launchable_domains(pod, i, c):
                counts.setdefault(d, 0)
            for p, n in cluster.placed():
                if not _eligible(pod, c, n) or namespace_of(p) != ns:
                    continue
                if (p.get("metadata") or {}).get("deletionTimestamp"):
                    continue
                if label_selector_matches(selector, pod_labels(p)):
                    domain = node_labels(n)[key]
                    counts[domain] = counts.get(domain, 0) + 1
            floor = min(counts.values()) if counts else 0
            if len(counts) < int(c.get("minDomains") or 1):
                floor = 0
            here = counts.get(node_labels(node)[key], 0)
            self_match = 1 if label_selector_matches(selector, pod_labels(pod)) else 0
            if here + self_match - floor > int(c["maxSkew"]):
                soft = c.get("whenUnsatisfiable") == "ScheduleAnyway"
                return (
                    f"Karpenter counts {len(counts)} {key} domains (with those a pool could "
                    f"launch), min {floor}: {here + self_match} here is skew above "
                    f"{c['maxSkew']}" + (" (ScheduleAnyway, honoured)" if soft else "")
                )
        return None


def same_type_allows(
    price: float,
    landed: Sequence[Obj],
    options: Sequence[Obj],
    gone: Mapping[str, float],
    cluster: Cluster,
) -> bool:
    """Karpenter's rule for a replacement of several nodes: when one of the types that could
    hold the replacement's pods (``options``, the pool's launchable nodes) is the type of a
    node being replaced (``gone``: type -> the cheapest such node's price), every type the
    replacement may launch must cost less than that node (else keeping that node and
    deleting the others would do, with fewer pods moved)."""
    cap = float("inf")
    for body in options:
        kind = node_labels(body).get(INSTANCE_TYPE)
        if kind is not None and kind in gone and gone[kind] < cap and _holds(body, landed, cluster):
            cap = gone[kind]
    return price < cap - 1e-9


def _holds(body: Obj, pods: Sequence[Obj], cluster: Cluster) -> bool:
    """Whether the empty node ``body`` admits every pod by labels and taints and holds them
    all by requests."""
    if any(not pod_matches_node_selection(p, body) or untolerated_taint(p, body) for p in pods):
        return False
    alloc = node_allocatable(body)
    if len(pods) > alloc.get("pods", 0):
        return False
    need: dict[str, int] = {}
    for p in pods:
        for resource, amount in pod_requests(p, cluster).items():
            need[resource] = need.get(resource, 0) + amount
    return all(v <= alloc.get(r, 0) for r, v in need.items() if v > 0 and r != "pods")
