"""Selector terms → EC2 Describe* filters (tags ANDed within a term; terms ORed by the caller)."""

from __future__ import annotations

from typing import Any

from models.ec2nodeclass import SelectorTerm


def tag_filters(tags: dict[str, str] | None) -> list[dict[str, Any]]:
    """``"*"`` means "the key exists, any value", as in Karpenter."""
    out: list[dict[str, Any]] = []
    for key, value in (tags or {}).items():
        if value == "*":
            out.append({"Name": "tag-key", "Values": [key]})
        else:
            out.append({"Name": f"tag:{key}", "Values": [value]})
    return out


def term_filters(
    term: SelectorTerm, id_filter: str, name_filter: str | None
) -> list[dict[str, Any]]:
    if term.id:
        return [{"Name": id_filter, "Values": [term.id]}]
    filters = tag_filters(term.tags)
    if term.name and name_filter:
        filters.append({"Name": name_filter, "Values": [term.name]})
    return filters


def describe_term(term: Any) -> str:
    """A short human form of a term for status messages."""
    parts = [f"{k}={v}" for k, v in (term.to_wire() or {}).items()]
    return "{" + ", ".join(parts) + "}"
