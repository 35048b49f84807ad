"""The garbage-collection workflow's input (carried across continue-as-new) and query answer."""

from __future__ import annotations

from dataclasses import dataclass, field

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from activities.garbage.types import GRACE_SECONDS

# Karpenter's garbage collectors run every 2 minutes once settled; so does a round here.
PERIOD_SECONDS = 120.0
# An activity is tried this many times in a round; past that the step waits for the next one.
ATTEMPTS = 3


@dataclass
class GarbageCollectionInput:
    cluster: str
    period_seconds: float = PERIOD_SECONDS
    grace_seconds: float = GRACE_SECONDS
    rounds: int = 0
    removed: dict[str, int] = field(default_factory=dict)  # step -> total removed
    last_summary: str = ""
    history_limit: int = 2_000


@dataclass
class GarbageCollectionStatus:
    cluster: str
    rounds: int
    removed: dict[str, int]
    last_summary: str
    failed: dict[str, str] = field(default_factory=dict)  # step -> why, in the last round
