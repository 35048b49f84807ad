"""The provisioner's rounds as its history shows them: when each activity was scheduled,
how long it waited for a worker and ran, and how big its result was.

For ``scale``: it tells where a burst's seconds went between the pods going pending and the
last NodeClaim being made (rounds that waited for each other, a slow solve, slow creates).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

from models import contract


@dataclass
class ActivitySpan:
    name: str
    scheduled: float  # seconds from ``since``
    waited: float  # scheduled to started
    ran: float  # started to completed (0 when it did not complete)
    result_bytes: int
    attempt: int
    # from a planning round's result: claims created, pending pods it saw
    created: int | None = None
    pending: int | None = None
    onto_in_flight: int | None = None  # pending pods it placed on in-flight claims
    onto_nodes: int | None = None  # and on Nodes

    def to_json(self) -> dict[str, Any]:
        return {
            "activity": self.name.removeprefix("provisioning."),
            "at": round(self.scheduled, 1),
            "waited": round(self.waited, 1),
            "ran": round(self.ran, 1),
            "resultBytes": self.result_bytes,
            "attempt": self.attempt,
            **({} if self.created is None else {"created": self.created}),
            **({} if self.pending is None else {"pendingPods": self.pending}),
            **({} if self.onto_in_flight is None else {"ontoInFlight": self.onto_in_flight}),
            **({} if self.onto_nodes is None else {"ontoNodes": self.onto_nodes}),
        }


async def _spans(address: str, namespace: str, workflow_id: str, since: float) -> list[Any]:
    from temporalio.client import Client

    client = await Client.connect(address, namespace=namespace)
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    scheduled: dict[int, tuple[str, float]] = {}
    started: dict[int, tuple[float, int]] = {}
    spans: list[ActivitySpan] = []
    for event in history.events:
        at = event.event_time.ToDatetime().timestamp()
        if event.HasField("activity_task_scheduled_event_attributes"):
            attrs = event.activity_task_scheduled_event_attributes
            scheduled[event.event_id] = (attrs.activity_type.name, at)
        elif event.HasField("activity_task_started_event_attributes"):
            s = event.activity_task_started_event_attributes
            started[s.scheduled_event_id] = (at, s.attempt)
        elif event.HasField("activity_task_completed_event_attributes"):
            c = event.activity_task_completed_event_attributes
            name, when = scheduled.get(c.scheduled_event_id, ("?", at))
            began, attempt = started.get(c.scheduled_event_id, (at, 0))
            if when >= since:
                span = ActivitySpan(
                    name, when - since, began - when, at - began, c.result.ByteSize(), attempt
                )
                _outcome(span, c.result.payloads)
                spans.append(span)
    return [s.to_json() for s in spans]


def _outcome(span: ActivitySpan, payloads: Any) -> None:
    """A planning round's result (JSON with ``created`` names and ``pending_pods``)."""
    if not payloads:
        return
    try:
        result = json.loads(payloads[0].data)
    except ValueError:
        return
    if isinstance(result, dict) and "pending_pods" in result:
        span.created = len(result.get("created") or [])
        span.pending = int(result.get("pending_pods") or 0)
        span.onto_in_flight = int(result.get("onto_in_flight") or 0)
        span.onto_nodes = int(result.get("onto_nodes") or 0)


def provisioner_activities(
    address: str, namespace: str, cluster: str, since: float
) -> list[dict[str, Any]]:
    """The provisioner's completed activities scheduled after ``since`` (epoch seconds)."""
    return asyncio.run(_spans(address, namespace, contract.provisioner_id(cluster), since))
