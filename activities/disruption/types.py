"""What the disruption activities take and return: names and small specs, never a cluster
snapshot (the workflow history records every one of them)."""

from __future__ import annotations

from dataclasses import dataclass, field

from activities.planning.types import PlannedNodeClaim


@dataclass
class CommandSpec:
    """One disruption: delete the NodeClaims of ``nodes`` once ``replacements`` initialized."""

    reason: str  # Empty, Underutilized or Drifted
    nodes: list[str]
    claims: list[str]  # the candidates' NodeClaim names, in the order of ``nodes``
    pools: list[str]  # the candidates' NodePools
    replacements: list[PlannedNodeClaim] = field(default_factory=list)
    savings_per_hour: float = 0.0
    summary: str = ""

    def key(self) -> tuple[str, tuple[str, ...]]:
        """What must still hold after the validation delay: the reason and the candidates."""
        return self.reason, tuple(sorted(self.nodes))


# Per-node verdicts ride in every decision so the workflow can say what its last round
# decided about a node (``joinery explain``); bounded, so a large cluster's history stays small.
MAX_VERDICTS = 1000
VERDICT_CHARS = 160


def clip(text: str) -> str:
    """``text`` on one line, at most VERDICT_CHARS long."""
    line = " ".join(text.split())
    return line if len(line) <= VERDICT_CHARS else line[: VERDICT_CHARS - 1] + "…"


@dataclass
class Decision:
    commands: list[CommandSpec] = field(default_factory=list)
    cost_before: float = 0.0
    cost_after: float = 0.0
    blocked: int = 0
    kept: int = 0
    held: list[str] = field(default_factory=list)  # commands dropped because of a pause
    # node name → one-line reason (``clip``), at most MAX_VERDICTS of them together
    blocked_nodes: dict[str, str] = field(default_factory=dict)
    kept_nodes: dict[str, str] = field(default_factory=dict)
    held_nodes: dict[str, str] = field(default_factory=dict)  # → the held command's line
    # When a node held back only by time (consolidateAfter, a pod's do-not-disrupt duration,
    # a budget window) may become a candidate: RFC 3339, "" when no clock changes anything.
    # The workflow runs its next round then (``workflows.disruption.trigger``).
    due: str = ""


@dataclass
class ComputeInput:
    paused_all: bool = False
    paused_pools: list[str] = field(default_factory=list)
    # The validation's second decision: the first's commands as [reason, *nodes], so the
    # activity can count those that failed validation.
    validating: list[list[str]] = field(default_factory=list)


@dataclass
class MarkInput:
    reason: str
    nodes: list[str]
    claims: list[str]
    message: str = ""
    replacements: int = 0  # how many the command launches (its decision: delete or replace)

    def decision(self) -> tuple[str, str]:
        """Karpenter's decision and consolidation type labels for this command."""
        decision = "replace" if self.replacements else "delete"
        if self.reason == "Empty":
            return decision, "empty"
        if self.reason == "Underutilized":
            return decision, "single" if len(self.nodes) == 1 else "multi"
        return decision, ""


@dataclass
class LaunchInput:
    replacements: list[PlannedNodeClaim]
    search_attributes: bool = False
    reason: str = ""  # the command's (Empty, Underutilized, Drifted), for events and metrics


@dataclass
class Readiness:
    """Where the replacements stand: ``failed`` ones are gone or could not launch."""

    initialized: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)  # name -> why
