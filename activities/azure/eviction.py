"""Spot eviction on Azure, as Karpenter Azure learns of it: a Node condition, not a queue.

Azure announces a spot eviction as a Scheduled Event (``Preempt``) on the VM's own metadata
endpoint, which only the VM can read. On AKS the node-problem-detector turns it into the
Node condition ``PreemptionScheduled`` (reason ``SpotEvictionIncoming``) and re-asserts it
while the notice stands; its message names the event and, for a scheduled one, the
``NotBefore`` instant before which the VM is not taken:

- ``Preempt Scheduled: Mon, 2 Jan 2006 15:04:05 GMT. ...``: eviction announced;
- ``Preempt Started. ...``: eviction under way;
- ``SpotRebalanceRecommendation Advisory. ...``: news only, nothing to drain.

Karpenter Azure reads that condition (level-triggered, so a restart picks an outstanding
notice up again), stamps the deadline on the NodeClaim as its termination timestamp (so the
drain runs against Azure's clock, only ever moved earlier) and deletes the claim, which
cordons and drains it. Here
:class:`PreemptionWatch` reads it off the cluster's Nodes and hands the worker the neutral
:class:`~activities.cloud.interruption.InterruptionEvent` the EC2 queue's messages become,
so the same watcher signals the claim's lifecycle (after :func:`deadline_stamper` has
stamped the deadline), and the interrupted offering (its SKU,
zone, spot) is kept out of the next launches as an insufficient-capacity answer is
(:func:`mark_evicted_offering`). A VM evicted with no notice seen at all simply goes; the
garbage collector then finds its claim without a VM.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

from activities.cloud.interruption import (
    REBALANCE_RECOMMENDATION,
    SPOT_INTERRUPTION,
    Handler,
    InterruptionEvent,
)

log = logging.getLogger(__name__)

CONDITION = "PreemptionScheduled"
REASON = "SpotEvictionIncoming"
SCHEDULED = "Preempt Scheduled"
STARTED = "Preempt Started"
ADVISORY = "SpotRebalanceRecommendation Advisory"
# Karpenter's label on the Nodes it launched: the watch reads only those.
NODEPOOL_LABEL = "karpenter.sh/nodepool"
POLL_SECONDS = 2.0

Obj = dict[str, Any]
MarkUnavailable = Callable[[str, str, str], None]  # (capacity type, instance type, zone)
# (the Node's provider id, the eviction's deadline): record it where the drain reads it
StampDeadline = Callable[[str, datetime], None]


@dataclass(frozen=True)
class PreemptionNotice:
    """What a ``PreemptionScheduled`` condition's message says."""

    kind: str  # SCHEDULED, STARTED or ADVISORY
    not_before: datetime | None = None  # a scheduled notice's deadline, when it parses

    @property
    def drains(self) -> bool:
        return self.kind != ADVISORY


def _payload(message: str, header: str) -> str | None:
    """The text after ``header`` and its ``:`` (a date) or ``.`` (a description), or None
    when the message does not start with that header."""
    if not message.startswith(header):
        return None
    rest = message[len(header) :]
    if rest.startswith(":"):
        return rest[1:].strip()
    if rest == "" or rest == "." or rest.startswith(". "):
        return ""
    return None


def parse_notice(message: str) -> PreemptionNotice | None:
    """The notice a condition message carries, or None for a message it does not name.

    A scheduled notice whose date is missing or not UTC still drains (with no deadline):
    the VM is being reclaimed whatever its message's format, as Karpenter Azure fails closed.
    """
    text = " ".join(message.split())
    if _payload(text, ADVISORY) is not None:
        return PreemptionNotice(ADVISORY)
    if _payload(text, STARTED) is not None:
        return PreemptionNotice(STARTED)
    raw = _payload(text, SCHEDULED)
    if raw is None:
        return None
    stamp = raw.split(".", 1)[0].strip()
    if not stamp.endswith((" GMT", " UTC")):
        return PreemptionNotice(SCHEDULED)
    try:
        when = parsedate_to_datetime(stamp.removesuffix(" UTC") + " GMT")
    except (TypeError, ValueError):
        return PreemptionNotice(SCHEDULED)
    return PreemptionNotice(SCHEDULED, when.astimezone(UTC))


def notice_message(not_before: datetime, event_id: str = "") -> str:
    """A scheduled notice's condition message, as the node-problem-detector writes it (the
    sandbox's stand-in for it writes this)."""
    stamp = not_before.astimezone(UTC).strftime("%a, %d %b %Y %H:%M:%S GMT")
    suffix = f" EventID: {event_id}." if event_id else ""
    return f"{SCHEDULED}: {stamp}. The VM is being evicted.{suffix}"


def _condition(node: Obj) -> Obj | None:
    for c in (node.get("status") or {}).get("conditions") or []:
        if c.get("type") == CONDITION and c.get("status") == "True":
            return dict(c)
    return None


def event_for(node: Obj, instance_id: Callable[[str], str]) -> InterruptionEvent | None:
    """The interruption a Node's ``PreemptionScheduled`` condition announces, or None (no
    condition, an unknown message, or a Node with no VM of ours)."""
    condition = _condition(node)
    if condition is None:
        return None
    notice = parse_notice(str(condition.get("message") or ""))
    if notice is None:
        return None
    vm = instance_id(str((node.get("spec") or {}).get("providerID") or ""))
    if not vm:
        return None
    deadline = notice.not_before.strftime("%Y-%m-%dT%H:%M:%SZ") if notice.not_before else ""
    return InterruptionEvent(
        SPOT_INTERRUPTION if notice.drains else REBALANCE_RECOMMENDATION,
        (vm,),
        event_id=f"{node['metadata']['name']}@{condition.get('lastTransitionTime', '')}",
        time=str(condition.get("lastTransitionTime") or ""),
        detail=f"{notice.kind} (not before {deadline})" if deadline else notice.kind,
    )


class PreemptionWatch:
    """Reads the cluster's Karpenter Nodes every ``poll_seconds`` and hands each new notice
    to the worker's handler once; one the handler could not match to a claim yet (it
    returned False) is offered again at the next read, as the condition stays."""

    def __init__(
        self,
        list_nodes: Callable[[], Iterable[Obj]],
        instance_id: Callable[[str], str],
        poll_seconds: float = POLL_SECONDS,
        stamp_deadline: StampDeadline | None = None,
    ) -> None:
        self._list_nodes = list_nodes
        self._instance_id = instance_id
        self._poll = poll_seconds
        self._stamp = stamp_deadline
        self._handled: set[str] = set()
        self._unknown: set[str] = set()  # conditions whose message we could not read, told once

    def poll_once(
        self,
        handle: Handler,
        received: Callable[[str], None] | None = None,
        deleted: Callable[[], None] | None = None,
    ) -> int:
        """Offer every outstanding notice not handled yet; returns how many were handled."""
        seen: set[str] = set()
        done = 0
        for node in self._list_nodes():
            event = event_for(node, self._instance_id)
            if event is None:
                self._tell_unknown(node)
                continue
            seen.add(event.event_id)
            if event.event_id in self._handled:
                continue
            if received is not None:
                received(event.kind)
            self._stamp_deadline(node)
            try:
                handled = handle(event)
            except Exception:
                log.exception("spot eviction handler failed for %s", event.instance_ids[0])
                continue
            if handled is False:
                continue  # the claim is not known yet: the condition stays, so next read
            self._handled.add(event.event_id)
            if deleted is not None:
                deleted()
            done += 1
        self._handled &= seen  # a notice withdrawn (or its Node gone) is forgotten
        return done

    def _tell_unknown(self, node: Obj) -> None:
        """Log, once per condition, a ``PreemptionScheduled`` whose message names no notice
        we know (the detector re-asserts it every few seconds)."""
        condition = _condition(node)
        if condition is None or parse_notice(str(condition.get("message") or "")) is not None:
            return
        key = f"{node['metadata']['name']}@{condition.get('lastTransitionTime', '')}"
        if key not in self._unknown:
            self._unknown.add(key)
            log.warning(
                "node %s: %s condition with an unknown message, ignored: %r",
                node["metadata"]["name"],
                CONDITION,
                str(condition.get("message") or "")[:200],
            )

    def _stamp_deadline(self, node: Obj) -> None:
        """The notice's deadline on the node's claim, before the claim is told to go."""
        condition = _condition(node)
        notice = parse_notice(str((condition or {}).get("message") or ""))
        if self._stamp is None or notice is None or notice.not_before is None:
            return
        try:
            self._stamp(str(node["spec"]["providerID"]), notice.not_before)
        except Exception as exc:  # the drain still runs, on the claim's own grace period
            log.warning("node %s: eviction deadline not stamped: %s", node["metadata"]["name"], exc)

    def run(
        self,
        handle: Handler,
        stop: threading.Event,
        received: Callable[[str], None] | None = None,
        deleted: Callable[[], None] | None = None,
    ) -> None:
        """Poll until ``stop``; a failed read is logged and retried at the next poll."""
        while not stop.is_set():
            try:
                self.poll_once(handle, received, deleted)
            except Exception as exc:
                log.warning("reading nodes for spot eviction notices failed: %s", exc)
            stop.wait(self._poll)


def node_lister(core_api: Any) -> Callable[[], list[Obj]]:
    """The cluster's Karpenter Nodes, through a Kubernetes core API (what the worker holds)."""
    from activities.kubernetes import raw

    def list_nodes() -> list[Obj]:
        return raw.list_all(core_api.list_node, label_selector=NODEPOOL_LABEL)

    return list_nodes


def deadline_stamper(core_api: Any) -> StampDeadline:
    """Stamps an eviction's deadline as the termination timestamp of the NodeClaim whose
    Node has the provider id; an earlier timestamp already there stays."""
    from activities.kubernetes import nodeclaims
    from activities.kubernetes.client import Kube
    from models.labels import NODECLAIM_TERMINATION_TIMESTAMP as KEY

    def stamp(provider_id: str, not_before: datetime) -> None:
        kube = Kube(core_api.api_client)
        claims, _ = nodeclaims.list_(kube)
        for claim in claims:
            if (claim.get("status") or {}).get("providerID") != provider_id:
                continue
            existing = (claim["metadata"].get("annotations") or {}).get(KEY)
            if existing and _earlier_or_same(existing, not_before):
                return
            at = not_before.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            nodeclaims.patch_metadata(kube, claim["metadata"]["name"], annotations={KEY: at})
            return

    return stamp


def _earlier_or_same(stamp: str, when: datetime) -> bool:
    try:
        at = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return False  # unreadable: the drain cannot use it either
    return at <= when


def mark_evicted_offering(
    mark_unavailable: MarkUnavailable,
    event: InterruptionEvent,
    instance_type: str,
    zone: str,
) -> bool:
    """A spot eviction says Azure wants that SKU's spot capacity in that zone back: as after
    a spot-allocation failure, the offering is kept out of launches for a while so the
    replacement goes elsewhere. Only an eviction, and only for a known SKU and zone."""
    if event.kind != SPOT_INTERRUPTION or not instance_type or not zone:
        return False
    mark_unavailable("spot", instance_type, zone)
    return True
