"""The plan as DESIGN.md's `joinery plan -o json` contract describes it, and as a table."""

from __future__ import annotations

from typing import Any

from models.resources import render
from scheduling.solver import Plan, PlannedClaim


def claim_to_dict(c: PlannedClaim) -> dict[str, Any]:
    """One NodeClaim of the contract's ``nodeClaims[]`` (also a disruption replacement)."""
    out = {
        "nodePool": c.nodepool,
        "instanceTypes": [it.name for it in c.instance_types],
        "capacityTypes": c.capacity_types,
        "zones": c.zones,
        "price": round(c.price, 6),
        "requests": render(c.requests),
        "requirements": c.requirements.to_list(),
        "pods": [p.key for p in c.pods],
    }
    if c.min_values_relaxed:  # MIN_VALUES_POLICY=BestEffort lowered its pool's minValues
        out["minValuesRelaxed"] = True
    return out


def plan_to_dict(plan: Plan, lower_bound: float) -> dict[str, Any]:
    claims = [claim_to_dict(c) for c in plan.claims]
    per_hour = round(sum(c.price for c in plan.claims), 6)
    return {
        "nodeClaims": claims,
        "existingNodes": [
            {"name": name, "pods": [p.key for p in pods]} for name, pods in plan.existing.items()
        ],
        "unschedulable": [
            {"pod": key, "reason": reason} for key, reason in sorted(plan.unschedulable.items())
        ],
        "cost": {"perHour": per_hour, "lowerBound": min(round(lower_bound, 6), per_hour)},
    }


def plan_to_table(doc: dict[str, Any]) -> str:
    lines = []
    claims = doc["nodeClaims"]
    lines.append(
        f"{len(claims)} new NodeClaim(s), ${doc['cost']['perHour']:.4f}/h "
        f"(lower bound ${doc['cost']['lowerBound']:.4f}/h)"
    )
    if claims:
        lines.append("")
        header = f"{'#':>3}  {'NODEPOOL':<16} {'CHEAPEST TYPE':<18} {'TYPES':>5}  {'$/H':>8}  "
        header += f"{'ZONES':<28} {'CAPACITY':<18} {'CPU':>8} {'MEMORY':>9} {'PODS':>5}"
        lines.append(header)
        for i, c in enumerate(claims, 1):
            req = c["requests"]
            lines.append(
                f"{i:>3}  {c['nodePool']:<16} {(c['instanceTypes'] or ['-'])[0]:<18} "
                f"{len(c['instanceTypes']):>5}  {c['price']:>8.4f}  {','.join(c['zones']):<28} "
                f"{','.join(c['capacityTypes']):<18} {req.get('cpu', '0'):>8} "
                f"{req.get('memory', '0'):>9} {len(c['pods']):>5}"
            )
    if doc["existingNodes"]:
        lines.append("")
        lines.append("Existing capacity used:")
        for n in doc["existingNodes"]:
            lines.append(f"  {n['name']}: {len(n['pods'])} pod(s)")
    if doc["unschedulable"]:
        lines.append("")
        lines.append(f"{len(doc['unschedulable'])} unschedulable pod(s):")
        for u in doc["unschedulable"]:
            lines.append(f"  {u['pod']}: {u['reason']}")
    return "\n".join(lines)
