"""Interruption queue: every EventBridge message kind, plus garbage that must not stop the loop."""

from __future__ import annotations

import json
from typing import Any

from activities.ec2.interruption import (
    NOOP,
    REBALANCE_RECOMMENDATION,
    SCHEDULED_CHANGE,
    SPOT_INTERRUPTION,
    STATE_CHANGE,
    InterruptionEvent,
    InterruptionQueue,
)
from tests.support.ec2_launches import event

MESSAGES = [
    event(
        "aws.ec2",
        "EC2 Spot Instance Interruption Warning",
        {"instance-id": "i-spot", "instance-action": "terminate"},
    ),
    event("aws.ec2", "EC2 Instance Rebalance Recommendation", {"instance-id": "i-rebal"}),
    event(
        "aws.health",
        "AWS Health Event",
        {
            "service": "EC2",
            "eventTypeCategory": "scheduledChange",
            "eventTypeCode": "AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED",
            "affectedEntities": [{"entityValue": "i-sched1"}, {"entityValue": "i-sched2"}],
        },
    ),
    event(
        "aws.ec2",
        "EC2 Instance State-change Notification",
        {"instance-id": "i-stop", "state": "stopping"},
    ),
    event(
        "aws.ec2",
        "EC2 Instance State-change Notification",
        {"instance-id": "i-run", "state": "running"},
    ),
    "this is not json",
    json.dumps(
        {"source": "aws.ec2", "detail-type": "EC2 Spot Instance Interruption Warning", "detail": {}}
    ),
    json.dumps(["a", "list"]),
]


def test_each_kind_parsed_and_garbage_deleted(env: Any) -> None:
    sqs = env.clients.sqs
    url = sqs.create_queue(QueueName="interruptions")["QueueUrl"]
    for body in MESSAGES:
        sqs.send_message(QueueUrl=url, MessageBody=body)
    queue = InterruptionQueue(sqs, "interruptions", wait_seconds=0)
    seen: list[InterruptionEvent] = []
    handled = 0
    for _ in range(3):
        handled += queue.poll_once(seen.append)
    kinds = {(e.kind, e.instance_ids) for e in seen}
    assert kinds == {
        (SPOT_INTERRUPTION, ("i-spot",)),
        (REBALANCE_RECOMMENDATION, ("i-rebal",)),
        (SCHEDULED_CHANGE, ("i-sched1", "i-sched2")),
        (STATE_CHANGE, ("i-stop",)),
    }
    assert handled == 5  # four actionable + the "running" no-op; garbage was deleted on receipt
    attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert attrs["ApproximateNumberOfMessages"] == "0"


def test_handler_failure_keeps_the_message(env: Any) -> None:
    sqs = env.clients.sqs
    url = sqs.create_queue(QueueName="q2", Attributes={"VisibilityTimeout": "0"})["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody=MESSAGES[0])
    queue = InterruptionQueue(sqs, url, wait_seconds=0)

    def boom(_: InterruptionEvent) -> None:
        raise RuntimeError("handler bug")

    assert queue.poll_once(boom) == 0
    seen: list[InterruptionEvent] = []
    assert queue.poll_once(seen.append) == 1
    assert seen[0].kind == SPOT_INTERRUPTION and seen[0].actionable
    assert InterruptionEvent(NOOP, ()).actionable is False


def test_message_for_an_instance_not_known_yet_is_kept_then_handled(env: Any) -> None:
    """Just after a restart the worker knows no claims: the warning must wait, not vanish."""
    sqs = env.clients.sqs
    url = sqs.create_queue(QueueName="q3", Attributes={"VisibilityTimeout": "300"})["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody=MESSAGES[0])
    queue = InterruptionQueue(sqs, url, wait_seconds=0, retry_seconds=0, max_receives=3)
    known: set[str] = set()
    handled: list[str] = []

    def handle(e: InterruptionEvent) -> bool:
        if not known.issuperset(e.instance_ids):
            return False
        handled.extend(e.instance_ids)
        return True

    assert queue.poll_once(handle) == 0  # kept, and visible again at once (retry_seconds=0)
    attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert attrs["ApproximateNumberOfMessages"] == "1"
    known.add("i-spot")  # the watchers have listed the claims
    assert queue.poll_once(handle) == 1 and handled == ["i-spot"]


def test_message_never_matched_is_dropped_after_max_receives(env: Any) -> None:
    sqs = env.clients.sqs
    url = sqs.create_queue(QueueName="q4")["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody=MESSAGES[0])
    queue = InterruptionQueue(sqs, url, wait_seconds=0, retry_seconds=0, max_receives=2)
    assert queue.poll_once(lambda e: False) == 0
    assert queue.poll_once(lambda e: False) == 1  # second delivery: given up, deleted
    assert queue.poll_once(lambda e: False) == 0
