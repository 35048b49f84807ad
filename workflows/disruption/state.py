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
# The default of ``DisruptionInput.validation_delay_seconds`` (a worker setting: the
# integration tests shorten it, as they shorten garbage collection's period).
VALIDATION_DELAY_SECONDS = 15.0
VALIDATION_DELAY = timedelta(seconds=VALIDATION_DELAY_SECONDS)
# A round runs this long after the last cluster change (changes come in bursts) ...
DEBOUNCE = timedelta(seconds=5)
# ... but no later than this after the first one.
DEBOUNCE_MAX = timedelta(seconds=30)
# With no change at all, a round still runs this often (drift, expiring budgets, time-based
# consolidateAfter): Karpenter polls every 10 s; a durable round is dearer, so 2 minutes.
SLOW_TIMER = timedelta(minutes=2)
# A node held back only by time (consolidateAfter, a do-not-disrupt duration, a budget
# window) makes a round due when the hold ends, sooner than the slow timer; but never sooner
# than this after the last round, Karpenter's polling period, so a hold that keeps moving
# (a pod event every second) cannot make the rounds a busy loop.
DUE_FLOOR = timedelta(seconds=10)


# What the last round did with a node (``NodeOutcome.outcome``).
DISRUPTED = "disrupted"  # its command ran to the end: replacements up, its NodeClaim deleted
UNDONE = "undone"  # its command failed and was undone
IN_FLIGHT = "in flight"  # its command is being carried out now
INVALIDATED = "invalidated"  # proposed, but no longer valid after the validation delay
HELD = "held"  # its command was held by ``joinery pause``
BLOCKED = "blocked"  # may not be disrupted now
KEPT = "kept"  # disrupting it would gain nothing


@dataclass
class NodeOutcome:
    """The last round's decision about one node, in one line (``joinery explain``)."""

    node: str
    outcome: str
    reason: str
    round: int = 0  # the round that decided it


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
    # The last round's decision per node (bounded by the Decision's MAX_VERDICTS) and when
    # it was taken (RFC 3339, workflow time); carried across continue-as-new.
    last_round_at: str = ""
    last_outcomes: list[NodeOutcome] = field(default_factory=list)
    # Validation delays waited so far: a round's wall time minus these is Joinery's own time
    # (the sandbox's consolidation benchmark subtracts them).
    validations: int = 0
    # How long a decision must hold before its commands run (set when the worker starts the
    # workflow; carried across continue-as-new, so a restarted worker does not change it).
    validation_delay_seconds: float = VALIDATION_DELAY_SECONDS
    # The last round's ``Decision.due`` (RFC 3339, "" none): when the next round is due with
    # no change, carried across continue-as-new. A run started before this field existed
    # reads "" and keeps the slow timer, as its history recorded.
    due: str = ""
    # The NodeClaims the last commands deleted whose Nodes no signal has yet named gone;
    # once none is left the next round skips the debounce (``trigger``). Carried across
    # continue-as-new; a run started before this field existed reads [] (no skip).
    awaiting: list[str] = field(default_factory=list)

    @property
    def validation_delay(self) -> timedelta:
        return timedelta(seconds=self.validation_delay_seconds)


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
    last_round_at: str = ""
    last_outcomes: list[NodeOutcome] = field(default_factory=list)
    validations: int = 0
