"""InterPodAffinity, required terms only.

A term selects pods by labelSelector (plus ``matchLabelKeys`` / ``mismatchLabelKeys`` read from
the pod that owns the term) in its namespaces: ``namespaces`` together with those
``namespaceSelector`` selects (``{}`` selects all); neither given means the owner's namespace.
Two nodes are co-located for a term when both carry its topologyKey with the same value; a
node without the key is co-located with nothing.

Three rules: an existing pod's anti-affinity term that selects the newcomer forbids the
newcomer its domain; the newcomer's anti-affinity term forbids domains holding a pod it
selects; every affinity term of the newcomer needs a selected pod in the candidate's domain,
except the first pod of a self-affine group (no pod anywhere matches all its terms, the pod
matches them itself, and the candidate carries every key).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tests.oracle.cluster import Cluster, Obj, key_of, namespace_of, pod_labels
from tests.oracle.selectors import label_selector_matches, node_labels

Term = Mapping[str, Any]


def _terms(pod: Obj, kind: str) -> list[Term]:
    aff = ((pod.get("spec") or {}).get("affinity") or {}).get(kind) or {}
    return list(aff.get("requiredDuringSchedulingIgnoredDuringExecution") or [])


def affinity_terms(pod: Obj) -> list[Term]:
    return _terms(pod, "podAffinity")


def anti_affinity_terms(pod: Obj) -> list[Term]:
    return _terms(pod, "podAntiAffinity")


def term_selects(owner: Obj, term: Term, target: Obj, cluster: Cluster) -> bool:
    """Does ``owner``'s term select ``target`` (namespace and labels)?"""
    names = set(term.get("namespaces") or [])
    ns_sel = term.get("namespaceSelector")
    if not names and ns_sel is None:
        names = {namespace_of(owner)}
    target_ns = namespace_of(target)
    in_ns = target_ns in names or (
        ns_sel is not None and label_selector_matches(ns_sel, cluster.namespace_labels(target_ns))
    )
    if not in_ns:
        return False
    sel = term.get("labelSelector")
    if sel is None:
        return False
    owner_labels = pod_labels(owner)
    exprs = list(sel.get("matchExpressions") or [])
    for k in term.get("matchLabelKeys") or []:
        if k in owner_labels:
            exprs.append({"key": k, "operator": "In", "values": [owner_labels[k]]})
    for k in term.get("mismatchLabelKeys") or []:
        if k in owner_labels:
            exprs.append({"key": k, "operator": "NotIn", "values": [owner_labels[k]]})
    merged = {"matchLabels": sel.get("matchLabels") or {}, "matchExpressions": exprs}
    return label_selector_matches(merged, pod_labels(target))


def _same_domain(key: str, a: Obj, b: Obj) -> bool:
    la, lb = node_labels(a), node_labels(b)
    return key in la and key in lb and la[key] == lb[key]


def interpod_failure(pod: Obj, node: Obj, cluster: Cluster) -> str | None:
    me = key_of(pod)
    others = [(p, n) for p, n in cluster.placed() if key_of(p) != me]
    for p, n in others:
        for t in anti_affinity_terms(p):
            if term_selects(p, t, pod, cluster) and _same_domain(t["topologyKey"], n, node):
                return (
                    f"existing pod {key_of(p)}'s anti-affinity on {t['topologyKey']} "
                    f"selects this pod"
                )
    for t in anti_affinity_terms(pod):
        for p, n in others:
            if term_selects(pod, t, p, cluster) and _same_domain(t["topologyKey"], n, node):
                return f"pod anti-affinity on {t['topologyKey']}: {key_of(p)} is in the domain"
    terms = affinity_terms(pod)
    if not terms:
        return None
    labels = node_labels(node)
    for t in terms:
        if t["topologyKey"] not in labels:
            return f"pod affinity: node lacks label {t['topologyKey']}"
    satisfied = all(
        any(
            all(term_selects(pod, u, p, cluster) for u in terms)
            and _same_domain(t["topologyKey"], n, node)
            for p, n in others
        )
        for t in terms
    )
    if satisfied:
        return None
    anywhere = any(
        all(term_selects(pod, u, p, cluster) for u in terms)
        and any(u["topologyKey"] in node_labels(n) for u in terms)
        for p, n in others
    )
    if not anywhere and all(term_selects(pod, u, pod, cluster) for u in terms):
        return None  # the first pod of a group that is affine to itself
    return "pod affinity: no selected pod in the node's domain for every term"
