"""Label selectors, node selector terms and tolerations, as the Kubernetes API defines them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Labels = Mapping[str, str]


def label_selector_matches(selector: Mapping[str, Any] | None, labels: Labels) -> bool:
    """``metav1.LabelSelector``: null selects nothing, ``{}`` selects everything."""
    if selector is None:
        return False
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != str(value):
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op = expr["key"], expr["operator"]
        values = [str(v) for v in expr.get("values") or []]
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def _as_int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def requirement_matches(expr: Mapping[str, Any], labels: Labels) -> bool:
    """One ``NodeSelectorRequirement`` against a node's labels (Gt/Lt compare integers; a
    missing label or a value that is not an integer never matches them)."""
    key, op = expr["key"], expr["operator"]
    values = [str(v) for v in expr.get("values") or []]
    present = key in labels
    if op == "In":
        return present and labels[key] in values
    if op == "NotIn":
        return not present or labels[key] not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt"):
        if not present or len(values) != 1:
            return False
        have, bound = _as_int(labels[key]), _as_int(values[0])
        if have is None or bound is None:
            return False
        return have > bound if op == "Gt" else have < bound
    raise ValueError(f"unknown operator {op}")


def term_matches(term: Mapping[str, Any], labels: Labels, node_name: str) -> bool:
    """A ``NodeSelectorTerm``: its expressions and fields ANDed; an empty term matches nothing."""
    exprs = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not exprs and not fields:
        return False
    if not all(requirement_matches(e, labels) for e in exprs):
        return False
    return all(requirement_matches(f, {"metadata.name": node_name}) for f in fields)


def required_node_affinity(pod: Mapping[str, Any]) -> list[Mapping[str, Any]] | None:
    """The pod's required node selector terms (None when it has none)."""
    aff = ((pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {}
    req = aff.get("requiredDuringSchedulingIgnoredDuringExecution")
    if req is None:
        return None
    return list(req.get("nodeSelectorTerms") or [])


def pod_matches_node_selection(pod: Mapping[str, Any], node: Mapping[str, Any]) -> bool:
    """nodeSelector AND (any of the required node-affinity terms)."""
    labels = node_labels(node)
    for key, value in ((pod.get("spec") or {}).get("nodeSelector") or {}).items():
        if labels.get(key) != str(value):
            return False
    terms = required_node_affinity(pod)
    if terms is None:
        return True
    name = node["metadata"]["name"]
    return any(term_matches(t, labels, name) for t in terms)


def node_labels(node: Mapping[str, Any]) -> dict[str, str]:
    return {str(k): str(v) for k, v in ((node.get("metadata") or {}).get("labels") or {}).items()}


def toleration_tolerates(tol: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    """``Toleration.ToleratesTaint``: an empty effect matches every effect, an empty key with
    ``Exists`` every key; ``Equal`` (the default) compares values."""
    effect = tol.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = tol.get("key") or ""
    op = tol.get("operator") or "Equal"
    if key and key != taint.get("key"):
        return False
    if op == "Exists":
        return True
    return str(tol.get("value") or "") == str(taint.get("value") or "")


def untolerated_taint(pod: Mapping[str, Any], node: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The first NoSchedule/NoExecute taint of the node the pod does not tolerate
    (PreferNoSchedule is a preference, not a filter)."""
    tolerations = (pod.get("spec") or {}).get("tolerations") or []
    for taint in (node.get("spec") or {}).get("taints") or []:
        if taint.get("effect") not in ("NoSchedule", "NoExecute"):
            continue
        if not any(toleration_tolerates(t, taint) for t in tolerations):
            found: Mapping[str, Any] = taint
            return found
    return None
