"""A lifecycle's way to its launch, read from its history as the scale benchmark reads it."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from temporalio.api.common.v1 import Payload, Payloads
from temporalio.api.history.v1 import (
    HistoryEvent,
    WorkflowExecutionStartedEventAttributes,
    WorkflowTaskStartedEventAttributes,
)

from models.contract import NodeClaimActivity
from sandbox.scenarios.lifecycle_timeline import launch_path, summarize

T0 = 1_800_000_000.0


def event(at: float, **attrs: object) -> HistoryEvent:
    e = HistoryEvent()
    e.event_time.FromDatetime(datetime.fromtimestamp(T0 + at, UTC).replace(tzinfo=None))
    for name, value in attrs.items():
        getattr(e, name).CopyFrom(value)
    return e


def marker(at: float, activity_type: str, scheduled: float, completed: float) -> HistoryEvent:
    data = {
        "activity_type": activity_type,
        "activity_id": "launch-local-1",
        "original_schedule_time": {"seconds": int(T0 + scheduled), "nanos": 0},
        "complete_time": {"seconds": int(T0 + completed), "nanos": 500_000_000},
    }
    e = HistoryEvent()
    e.event_time.FromDatetime(datetime.fromtimestamp(T0 + at, UTC).replace(tzinfo=None))
    details = e.marker_recorded_event_attributes.details
    details["data"].CopyFrom(Payloads(payloads=[Payload(data=json.dumps(data).encode())]))
    e.marker_recorded_event_attributes.marker_name = "core_local_activity"
    return e


def test_the_stages_add_up_to_the_launchs_record() -> None:
    started = WorkflowExecutionStartedEventAttributes()
    events = [
        event(10, workflow_execution_started_event_attributes=started),
        event(14, workflow_task_started_event_attributes=WorkflowTaskStartedEventAttributes()),
        marker(25, "prepare", 14, 15),
        marker(25, NodeClaimActivity.LAUNCH, 16, 21),
    ]
    path = launch_path(events, claim_created=T0 + 4)
    assert path == {
        "claimToStart": 6.0,
        "startToTask": 4.0,
        "taskToLaunch": 2.0,
        "launch": 5.5,
        "launchToRecorded": 3.5,
    }
    assert launch_path(events[:3], claim_created=T0) is None  # not launched yet
    summary = summarize([path, {**path, "launch": 1.0}])
    assert summary["claims"] == 2
    assert summary["launch"] == {"p50": 1.0, "p99": 5.5, "max": 5.5}
