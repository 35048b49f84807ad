"""The disruption workflow's input (carried across continue-as-new) and query answer."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

# Phases the workflow shows (details, the Phase search attribute).
IDLE = "Idle"
COMPUTING = "Computing"
VALIDATING = "Validating"
EXECUTING = "Executing"

# Karpenter's validation delay: a decision must still hold this long after it was made.
VALIDATION_DELAY = timedelta(seconds=15)
# A round runs this long after the last cluster change (changes come in bursts) ...
DEBOUNCE = timedelta(seconds=5)
# ... but no later than this after the first one.
DEBOUNCE_MAX = timedelta(seconds=30)
# With no change at all, a round still runs this often (drift, expiring budgets, time-based
# consolidateAfter): Karpenter polls every 10 s; a durable round is dearer, so 2 minutes.
SLOW_TIMER = timedelta(minutes=2)


@dataclass
class DisruptionInput:
    cluster: str
    search_attributes: bool = False
    changed: bool = True  # run a round at once (a fresh start, or changes before continue)
    rounds: int = 0
    commands_done: int = 0
    commands_failed: int = 0
    last_summary: str = ""
    last_action: str = ""  # the summary of the last round that carried out commands
    history_limit: int = 10_000
    # Validation delays waited so far: a round's wall time minus these is Joinery's own time
    # (the sandbox's consolidation benchmark subtracts them).
    validations: int = 0


@dataclass
class CommandResult:
    summary: str
    done: bool
    why: str = ""


@dataclass
class DisruptionStatus:
    cluster: str
    phase: str
    rounds: int
    commands_done: int
    commands_failed: int
    last_summary: str
    last_action: str
    in_flight: list[str] = field(default_factory=list)
    validations: int = 0
