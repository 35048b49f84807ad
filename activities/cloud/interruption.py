"""Interruption events, neutral: what a cloud tells us about instances going away (a spot
reclaim, a scheduled maintenance, a stop), and the source the worker reads them from.

Each provider turns its own messages (EC2: EventBridge events on SQS) into these events; the
worker's watchers match their instance ids to NodeClaims and signal the lifecycles.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

# Event kinds (also the ``message_type`` of Karpenter's interruption metrics).
SPOT_INTERRUPTION = "SpotInterruption"
REBALANCE_RECOMMENDATION = "RebalanceRecommendation"
SCHEDULED_CHANGE = "ScheduledChange"
STATE_CHANGE = "StateChange"
NOOP = "NoOp"
# The kinds that drain a node (a rebalance recommendation is news, not a reason to drain).
DRAINING_EVENTS = frozenset({SPOT_INTERRUPTION, SCHEDULED_CHANGE, STATE_CHANGE})


@dataclass(frozen=True)
class InterruptionEvent:
    kind: str
    instance_ids: tuple[str, ...]
    event_id: str = ""
    time: str = ""
    detail: str = ""  # the action, state or health event type, for logs and events

    @property
    def actionable(self) -> bool:
        return self.kind != NOOP


# Returns False when the event's instance is not known yet (keep the message), else None/True.
Handler = Callable[[InterruptionEvent], bool | None]


class InterruptionSource(Protocol):
    """Where a provider's interruption events come from; ``run`` polls until ``stop``."""

    def run(
        self,
        handle: Handler,
        stop: threading.Event,
        received: Callable[[str], None] = ...,
        deleted: Callable[[], None] = ...,
    ) -> None: ...
