"""Matching a ``metav1.LabelSelector`` (as a dict) against labels, as the API server does."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """True when ``labels`` satisfy every matchLabels entry and matchExpressions term.

    A null selector matches nothing and an empty one matches everything, the policy/v1
    PodDisruptionBudget rule.
    """
    if selector is None:
        return False
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for term in selector.get("matchExpressions") or []:
        key, operator = term["key"], term["operator"]
        values = term.get("values") or []
        if operator == "In" and labels.get(key) not in values:
            return False
        if operator == "NotIn" and key in labels and labels[key] in values:
            return False
        if operator == "Exists" and key not in labels:
            return False
        if operator == "DoesNotExist" and key in labels:
            return False
    return True
