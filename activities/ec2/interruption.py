"""The interruption queue: EventBridge messages about our instances, read from SQS.

Each message becomes a typed event. A message we cannot parse is logged and deleted (leaving it
would make it come back forever); a handler failure leaves the message for redelivery. A
message the handler could not match to a NodeClaim yet (the handler returns False: just after
a restart the worker has not listed its claims, or a launch has not recorded its instance) is
kept and comes back after ``retry_seconds``, up to ``max_receives`` deliveries, so an
interruption is never lost to a restart. Nothing a message contains can stop the loop.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from activities.cloud.interruption import (
    NOOP,
    REBALANCE_RECOMMENDATION,
    SCHEDULED_CHANGE,
    SPOT_INTERRUPTION,
    STATE_CHANGE,
    Handler,
    InterruptionEvent,
)
from activities.ec2.capacity_cache import UnavailableOfferings
from activities.ec2.errors import aws_errors

log = logging.getLogger(__name__)

# Instance states that mean the node is going away.
STOPPING_STATES = frozenset({"stopping", "stopped", "shutting-down", "terminated"})


def _ignore(kind: str) -> None:
    return None


def _nothing() -> None:
    return None


class UnparseableMessage(ValueError):
    """The body is not an EventBridge event we understand."""


@dataclass(frozen=True)
class QueueMessage:
    event: InterruptionEvent
    receipt_handle: str
    message_id: str
    receives: int = 1


def parse_event(body: str) -> InterruptionEvent:
    """EventBridge JSON → event; raises UnparseableMessage for anything else."""
    try:
        doc = json.loads(body)
    except (TypeError, ValueError) as exc:
        raise UnparseableMessage(f"not JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise UnparseableMessage("not a JSON object")
    source, kind = doc.get("source"), doc.get("detail-type")
    detail = doc.get("detail")
    if not isinstance(detail, dict):
        raise UnparseableMessage(f"no detail object (source={source!r}, detail-type={kind!r})")
    common = {"event_id": str(doc.get("id", "")), "time": str(doc.get("time", ""))}
    if source == "aws.ec2" and kind == "EC2 Spot Instance Interruption Warning":
        return InterruptionEvent(
            SPOT_INTERRUPTION,
            (_instance(detail),),
            detail=str(detail.get("instance-action", "")),
            **common,
        )
    if source == "aws.ec2" and kind == "EC2 Instance Rebalance Recommendation":
        return InterruptionEvent(REBALANCE_RECOMMENDATION, (_instance(detail),), **common)
    if source == "aws.ec2" and kind == "EC2 Instance State-change Notification":
        state = str(detail.get("state", ""))
        return InterruptionEvent(
            STATE_CHANGE if state in STOPPING_STATES else NOOP,
            (_instance(detail),),
            detail=state,
            **common,
        )
    if source == "aws.health" and kind == "AWS Health Event":
        entities = detail.get("affectedEntities") or []
        ids = tuple(
            str(e["entityValue"]) for e in entities if isinstance(e, dict) and e.get("entityValue")
        )
        if detail.get("service") == "EC2" and detail.get("eventTypeCategory") == "scheduledChange":
            if not ids:
                raise UnparseableMessage("scheduled change without affected instances")
            return InterruptionEvent(
                SCHEDULED_CHANGE, ids, detail=str(detail.get("eventTypeCode", "")), **common
            )
        return InterruptionEvent(
            NOOP, ids, detail=str(detail.get("eventTypeCategory", "")), **common
        )
    raise UnparseableMessage(f"unknown event source={source!r} detail-type={kind!r}")


def _instance(detail: dict[str, Any]) -> str:
    value = detail.get("instance-id")
    if not isinstance(value, str) or not value:
        raise UnparseableMessage("detail has no instance-id")
    return value


class InterruptionQueue:
    def __init__(
        self,
        sqs: Any,
        queue: str,
        wait_seconds: int = 20,
        batch: int = 10,
        retry_seconds: int = 10,
        max_receives: int = 30,
        owned: Callable[[Sequence[str]], bool] | None = None,
    ) -> None:
        self._owned = owned
        self._retry = retry_seconds
        self._max_receives = max_receives
        self._sqs = sqs
        self._queue = queue
        self._url: str | None = queue if queue.startswith(("http://", "https://")) else None
        self._wait = wait_seconds
        self._batch = batch

    @property
    def url(self) -> str:
        if self._url is None:
            with aws_errors("GetQueueUrl"):
                self._url = str(self._sqs.get_queue_url(QueueName=self._queue)["QueueUrl"])
        return self._url

    def receive(self) -> list[QueueMessage]:
        """One long poll; malformed messages are logged, deleted and not returned."""
        with aws_errors("ReceiveMessage"):
            resp = self._sqs.receive_message(
                QueueUrl=self.url,
                MaxNumberOfMessages=self._batch,
                WaitTimeSeconds=self._wait,
                AttributeNames=["ApproximateReceiveCount"],
            )
        out: list[QueueMessage] = []
        for msg in resp.get("Messages", []):
            try:
                event = parse_event(msg.get("Body", ""))
            except UnparseableMessage as exc:
                log.warning(
                    "dropping unparseable interruption message %s: %s", msg.get("MessageId"), exc
                )
                self.delete(msg["ReceiptHandle"])
                continue
            receives = int((msg.get("Attributes") or {}).get("ApproximateReceiveCount", 1))
            out.append(
                QueueMessage(event, msg["ReceiptHandle"], msg.get("MessageId", ""), receives)
            )
        return out

    def delete(self, receipt_handle: str) -> None:
        with aws_errors("DeleteMessage"):
            self._sqs.delete_message(QueueUrl=self.url, ReceiptHandle=receipt_handle)

    def retry_later(self, msg: QueueMessage) -> None:
        """Make a kept message visible again after ``retry_seconds`` (not the queue's own,
        possibly long, visibility timeout)."""
        with aws_errors("ChangeMessageVisibility"):
            self._sqs.change_message_visibility(
                QueueUrl=self.url, ReceiptHandle=msg.receipt_handle, VisibilityTimeout=self._retry
            )

    def poll_once(
        self,
        handle: Handler,
        received: Callable[[str], None] = _ignore,
        deleted: Callable[[], None] = _nothing,
    ) -> int:
        """Receive, hand each actionable event to ``handle``, delete what was handled.

        Returns how many messages were deleted. Handler errors are logged and the message
        is kept (SQS redelivers it after the visibility timeout). A handler that returns
        False has not found the instance's NodeClaim: if the instance is this cluster's (a
        claim the watchers have not listed yet, say just after a restart) the message is kept
        and retried soon; if it is any other instance of the account, it is deleted at once,
        as Karpenter does, so a busy account's events never crowd out real spot warnings.
        ``received`` hears each message's kind and ``deleted`` each deletion (metrics).
        """
        done = 0
        for msg in self.receive():
            received(msg.event.kind)
            if msg.event.actionable:
                try:
                    handled = handle(msg.event)
                except Exception:
                    log.exception("interruption handler failed for %s", msg.message_id)
                    continue
                if handled is False and self._owned is not None:
                    handled = not self._owned(msg.event.instance_ids)
                if handled is False:
                    if msg.receives < self._max_receives:
                        self.retry_later(msg)
                        continue
                    log.warning(
                        "interruption %s for %s: no NodeClaim after %d deliveries, dropped",
                        msg.event.kind,
                        ", ".join(msg.event.instance_ids),
                        msg.receives,
                    )
            self.delete(msg.receipt_handle)
            deleted()
            done += 1
        return done

    def run(
        self,
        handle: Handler,
        stop: threading.Event,
        received: Callable[[str], None] = _ignore,
        deleted: Callable[[], None] = _nothing,
    ) -> None:
        """Poll until ``stop`` is set; AWS errors are logged and retried after a pause."""
        while not stop.is_set():
            try:
                self.poll_once(handle, received, deleted)
            except Exception:
                log.exception("interruption queue poll failed")
                stop.wait(5)


def mark_interrupted_offering(
    unavailable: UnavailableOfferings, event: InterruptionEvent, instance_type: str, zone: str
) -> bool:
    """A spot interruption says EC2 wants that spot pool's capacity back: as Karpenter does,
    its offering (instance type, zone, spot) is marked unavailable like an
    insufficient-capacity answer, for the same time, so the replacement and the next launches
    go elsewhere. Only a spot interruption, and only for a claim whose type and zone are
    known (its labels); returns whether it marked one."""
    if event.kind != SPOT_INTERRUPTION or not instance_type or not zone:
        return False
    unavailable.mark_unavailable("spot", instance_type, zone)
    return True
