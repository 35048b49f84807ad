"""A round's decision as DESIGN.md's ``joinery plan --disruption`` contract writes it, and as
a table for people: one line per command, then the blocked and kept nodes with reasons."""

from __future__ import annotations

from typing import Any

from scheduling.disruption.types import RoundDecision
from scheduling.report import claim_to_dict


def decision_to_dict(decision: RoundDecision) -> dict[str, Any]:
    return {
        "commands": [
            {
                "reason": c.reason,
                "nodes": list(c.nodes),
                "replacements": [claim_to_dict(r) for r in c.replacements],
                "pods": dict(sorted(c.pods.items())),
                "savingsPerHour": round(c.savings_per_hour, 6),
            }
            for c in decision.commands
        ],
        "blocked": [{"node": v.node, "reason": v.reason} for v in decision.blocked],
        "kept": [{"node": v.node, "reason": v.reason} for v in decision.kept],
        "costPerHour": {
            "before": round(decision.cost_before, 6),
            "after": round(decision.cost_after, 6),
        },
    }


def _replacement(claim: dict[str, Any]) -> str:
    types = claim["instanceTypes"]
    more = f" (+{len(types) - 1} types)" if len(types) > 1 else ""
    return f"{types[0] if types else '?'}{more} ${claim['price']:.4f}/h"


def decision_to_table(doc: dict[str, Any]) -> str:
    """``doc`` is ``decision_to_dict``'s output."""
    cost = doc["costPerHour"]
    lines = [
        f"Disruption: {len(doc['commands'])} command(s), "
        f"${cost['before']:.4f}/h -> ${cost['after']:.4f}/h"
    ]
    for i, c in enumerate(doc["commands"], 1):
        target = ", ".join(_replacement(r) for r in c["replacements"]) or "delete"
        lines.append(
            f"{i:>3}  {c['reason']:<13} {', '.join(c['nodes'])} -> {target}  "
            f"saves ${c['savingsPerHour']:.4f}/h, moves {len(c['pods'])} pod(s)"
        )
    if doc["blocked"]:
        lines.append("")
        lines.append(f"{len(doc['blocked'])} blocked node(s):")
        lines.extend(f"  {v['node']}: {v['reason']}" for v in doc["blocked"])
    if doc["kept"]:
        lines.append("")
        lines.append(f"{len(doc['kept'])} kept node(s):")
        lines.extend(f"  {v['node']}: {v['reason']}" for v in doc["kept"])
    return "\n".join(lines)
