"""What the garbage-collection activities take and return: names, never objects."""

from __future__ import annotations

from dataclasses import dataclass, field

# Karpenter's (AWS provider) grace: an instance younger than this may be a launch whose
# NodeClaim has not recorded it yet, so it is never collected.
GRACE_SECONDS = 30.0


@dataclass
class CollectInput:
    grace_seconds: float = GRACE_SECONDS


@dataclass
class Collected:
    """One step's outcome: what it removed and what it saw but left for a later round."""

    removed: list[str] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)  # within the grace period, or still alive
