"""A cluster's disruption rounds read back from their Temporal history.

The history is the record of what a round did, so it answers questions the cluster alone
cannot: which commands were carried out (their ``mark`` activity ran) and with which
replacements, and where a round's wall time went (activities, durable timers, and what is
left: the workflow machinery between them). The crash and two-worker tests check the first,
``benchmarks/round_overhead.py`` prints the second. Every run of the workflow is read
(continue-as-new makes several), oldest first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client
from temporalio.converter import DataConverter

from activities.disruption.types import Decision, MarkInput
from models import contract
from models.contract import DisruptionActivity
from workflows.disruption.execute import POLL
from workflows.disruption.state import VALIDATION_DELAY, DisruptionInput

_CLOSED = (
    EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED,
    EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED,
    EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT,
    EventType.EVENT_TYPE_ACTIVITY_TASK_CANCELED,
)


@dataclass
class ExecutedCommand:
    """A command a round carried out: its candidates' claims and the replacements launched
    for it (as the validation decision named them)."""

    claims: list[str]
    replacements: list[str]


@dataclass
class RoundTiming:
    """Seconds of one round that carried out commands, from its first activity scheduled to
    its last one closed. ``machinery`` is the wall time covered by no activity and no timer:
    what scheduling, dispatch and workflow tasks added."""

    wall: float
    activities: float
    validation: float  # the validation delay (15 s unless the worker was told otherwise)
    polls: float  # timers between readiness checks of the replacements
    machinery: float
    dispatch: float  # of ``machinery``: activities waiting to be picked up (schedule-to-start)
    commands: int

    @property
    def overhead(self) -> float:
        """``machinery`` as a fraction of the round's wall time without the validation delay."""
        own = self.wall - self.validation
        return self.machinery / own if own > 0 else 0.0


@dataclass
class Rounds:
    commands: list[ExecutedCommand] = field(default_factory=list)
    timings: list[RoundTiming] = field(default_factory=list)

    @property
    def rounds(self) -> int:
        """Rounds that carried out at least one command."""
        return len(self.timings)


def _time(event: HistoryEvent) -> datetime:
    return event.event_time.ToDatetime()


def _covered(spans: list[tuple[datetime, datetime]]) -> float:
    """Seconds covered by the union of ``spans``."""
    total, end = 0.0, None
    for a, b in sorted(spans):
        if end is None or a > end:
            total += (b - a).total_seconds()
            end = b
        elif b > end:
            total += (b - end).total_seconds()
            end = b
    return total


@dataclass
class _Round:
    start: datetime
    validation_delay: timedelta  # the run's (its input says; a worker setting)
    activities: list[tuple[datetime, datetime]] = field(default_factory=list)
    waits: list[tuple[datetime, datetime]] = field(default_factory=list)  # scheduled → started
    timers: dict[str, tuple[datetime, datetime | None, timedelta]] = field(default_factory=dict)
    commands: int = 0

    def timing(self) -> RoundTiming:
        end = max(b for _, b in self.activities)
        spans, validation, polls = list(self.activities), 0.0, 0.0
        for started, fired, length in self.timers.values():
            if fired is None or started > end:
                continue  # the wait for the next round's trigger
            fired = min(fired, end)
            spans.append((started, fired))
            seconds = (fired - started).total_seconds()
            if length == self.validation_delay:
                validation += seconds
            elif length == POLL:
                polls += seconds
        wall = (end - self.start).total_seconds()
        machinery = max(0.0, wall - _covered(spans))
        dispatch = min(machinery, _covered(self.waits))
        return RoundTiming(
            wall,
            _covered(self.activities),
            validation,
            polls,
            machinery,
            dispatch,
            self.commands,
        )


async def read_rounds(client: Client, cluster: str) -> Rounds:
    """The commands and timings of every round of ``cluster``'s disruption workflow."""
    wid = contract.disruption_id(cluster)
    runs = [wf.run_id async for wf in client.list_workflows(f"WorkflowId = '{wid}'")]
    out = Rounds()
    for run_id in reversed(runs):  # listed newest first
        history = await client.get_workflow_handle(wid, run_id=run_id).fetch_history()
        await read_run(history.events, client.data_converter, out)
    return out


async def read_run(
    events: Sequence[HistoryEvent], converter: DataConverter, out: Rounds | None = None
) -> Rounds:
    """The rounds of one run's history, added to ``out``."""
    out = out if out is not None else Rounds()
    decode = converter.decode
    started: dict[int, datetime] = {}
    scheduled: dict[int, datetime] = {}
    validation_timers: set[str] = set()
    delay = VALIDATION_DELAY
    after_validation = False
    validating: int | None = None  # the compute scheduled once the validation timer fired
    decision: Decision | None = None
    current: _Round | None = None

    def close() -> None:
        if current is not None and current.commands and current.activities:
            out.timings.append(current.timing())

    for event in events:
        kind = event.event_type
        if kind == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
            payloads = event.workflow_execution_started_event_attributes.input.payloads
            [inp] = await decode(list(payloads), [DisruptionInput])
            delay = inp.validation_delay
        elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            attrs = event.activity_task_scheduled_event_attributes
            name = attrs.activity_type.name
            scheduled[event.event_id] = _time(event)
            if name == DisruptionActivity.PAUSE_STATE and not after_validation:
                close()
                current = _Round(_time(event), delay)
            elif name == DisruptionActivity.COMPUTE:
                validating = event.event_id if after_validation else None
                after_validation = False
            elif name == DisruptionActivity.MARK and decision is not None:
                [mark] = await decode(list(attrs.input.payloads), [MarkInput])
                if current is not None:
                    current.commands += 1
                out.commands += [
                    ExecutedCommand(list(c.claims), [r.name for r in c.replacements])
                    for c in decision.commands
                    if sorted(c.nodes) == sorted(mark.nodes)
                ]
        elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            attrs_s = event.activity_task_started_event_attributes
            started[attrs_s.scheduled_event_id] = _time(event)
        elif kind in _CLOSED:
            sid = _scheduled_id(event)
            if current is not None and sid in scheduled:
                begun = started.get(sid, scheduled[sid])
                current.activities.append((begun, _time(event)))
                current.waits.append((scheduled[sid], begun))
            if kind == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED and sid == validating:
                result = event.activity_task_completed_event_attributes.result
                [decision] = await decode(list(result.payloads), [Decision])
        elif kind == EventType.EVENT_TYPE_TIMER_STARTED:
            attrs_t = event.timer_started_event_attributes
            length = attrs_t.start_to_fire_timeout.ToTimedelta()
            if length == delay:
                validation_timers.add(attrs_t.timer_id)
            if current is not None:
                current.timers[attrs_t.timer_id] = (_time(event), None, length)
        elif kind in (EventType.EVENT_TYPE_TIMER_FIRED, EventType.EVENT_TYPE_TIMER_CANCELED):
            timer_id = (
                event.timer_fired_event_attributes.timer_id
                if kind == EventType.EVENT_TYPE_TIMER_FIRED
                else event.timer_canceled_event_attributes.timer_id
            )
            if timer_id in validation_timers and kind == EventType.EVENT_TYPE_TIMER_FIRED:
                after_validation = True
            if current is not None and timer_id in current.timers:
                begun, _, length = current.timers[timer_id]
                current.timers[timer_id] = (begun, _time(event), length)
    close()
    return out


def _scheduled_id(event: HistoryEvent) -> int:
    for attrs in (
        event.activity_task_completed_event_attributes,
        event.activity_task_failed_event_attributes,
        event.activity_task_timed_out_event_attributes,
        event.activity_task_canceled_event_attributes,
    ):
        if attrs.scheduled_event_id:
            return int(attrs.scheduled_event_id)
    return 0
