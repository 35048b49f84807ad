"""The static summary a NodeClaim workflow carries in the Temporal UI (≤ 200 bytes)."""

from __future__ import annotations

from typing import Any

from activities.planning.types import PlannedNodeClaim
from models import labels as L

SUMMARY_LIMIT = 200


def fit(text: str, limit: int = SUMMARY_LIMIT) -> str:
    """``text`` cut to ``limit`` UTF-8 bytes (the server rejects longer static summaries)."""
    data = text.encode()
    if len(data) <= limit:
        return text
    return data[: limit - 3].decode(errors="ignore") + "..."


def summary_for(p: PlannedNodeClaim) -> str:
    """e.g. ``m5.large (+12) spot/on-demand us-east-1a · pool default · 3 pods``."""
    types = p.instance_types
    head = types[0] if types else "any type"
    more = f" (+{len(types) - 1})" if len(types) > 1 else ""
    cts = "/".join(p.capacity_types) or "any capacity"
    zones = p.zones
    zs = (
        ",".join(zones) if 0 < len(zones) <= 2 else (f"{len(zones)} zones" if zones else "any zone")
    )
    return fit(f"{head}{more} {cts} {zs} · pool {p.nodepool} · {p.pods} pods")


def summary_of_claim(claim: dict[str, Any]) -> str:
    """The same summary, read back from a NodeClaim's requirements (claims made elsewhere)."""
    values: dict[str, list[str]] = {}
    for r in (claim.get("spec") or {}).get("requirements") or []:
        if r.get("operator") == "In":
            values[str(r.get("key"))] = [str(v) for v in r.get("values") or []]
    labels = (claim.get("metadata") or {}).get("labels") or {}
    return summary_for(
        PlannedNodeClaim(
            name=str((claim.get("metadata") or {}).get("name")),
            nodepool=str(labels.get(L.NODEPOOL, "?")),
            body={},
            instance_types=values.get(L.INSTANCE_TYPE, []),
            capacity_types=values.get(L.CAPACITY_TYPE, []),
            zones=values.get(L.ZONE, []),
            pods=0,
        )
    ).removesuffix(" · 0 pods")
