"""Spot eviction notices on Azure: the ``PreemptionScheduled`` Node condition's messages, the
watch that turns them into interruption events, and the offering marked unavailable."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from typing import Any

import pytest

from activities.azure.eviction import (
    ADVISORY,
    SCHEDULED,
    STARTED,
    PreemptionWatch,
    mark_evicted_offering,
    notice_message,
    parse_notice,
)
from activities.azure.provider import provider_id, vm_id
from activities.cloud.interruption import (
    REBALANCE_RECOMMENDATION,
    SPOT_INTERRUPTION,
    InterruptionEvent,
)

VM = (
    "/subscriptions/sub/resourceGroups/MC_rg/providers/Microsoft.Compute/virtualMachines/"
    "aks-default-abc12"
)


def _node(name: str, message: str | None, *, status: str = "True", at: str = "t1") -> Any:
    conditions = [{"type": "Ready", "status": "True"}]
    if message is not None:
        conditions.append(
            {
                "type": "PreemptionScheduled",
                "status": status,
                "reason": "SpotEvictionIncoming",
                "message": message,
                "lastTransitionTime": at,
            }
        )
    return {
        "metadata": {"name": name},
        "spec": {"providerID": provider_id(VM.replace("aks-default-abc12", name))},
        "status": {"conditions": conditions},
    }


def test_scheduled_notice_carries_its_deadline() -> None:
    notice = parse_notice("Preempt Scheduled: Sat, 28 Nov 2026 13:00:30 GMT. Evicting the VM.")
    assert notice is not None
    assert notice.kind == SCHEDULED and notice.drains
    assert notice.not_before == datetime(2026, 11, 28, 13, 0, 30, tzinfo=UTC)


def test_message_written_for_a_deadline_reads_back_to_it() -> None:
    deadline = datetime(2027, 1, 2, 3, 4, 5, tzinfo=UTC)
    notice = parse_notice(notice_message(deadline, "ev-1"))
    assert notice is not None and notice.not_before == deadline


@pytest.mark.parametrize(
    ("message", "kind", "drains"),
    [
        ("Preempt Started. The VM is being evicted.", STARTED, True),
        ("Preempt Started", STARTED, True),
        ("SpotRebalanceRecommendation Advisory. Capacity may be reclaimed.", ADVISORY, False),
        # a date that is not UTC or not a date: still an eviction, drained at once
        ("Preempt Scheduled: Sat, 28 Nov 2026 13:00:30 PST. x", SCHEDULED, True),
        ("Preempt Scheduled: soon. x", SCHEDULED, True),
    ],
)
def test_other_notices(message: str, kind: str, drains: bool) -> None:
    notice = parse_notice(message)
    assert notice is not None
    assert (notice.kind, notice.drains) == (kind, drains)
    assert notice.not_before is None


@pytest.mark.parametrize(
    "message", ["", "Freeze Scheduled: Sat, 28 Nov 2026 13:00:30 GMT.", "Preempt Scheduledx"]
)
def test_unknown_messages_are_not_notices(message: str) -> None:
    assert parse_notice(message) is None


class Recorder:
    def __init__(self, known: set[str]) -> None:
        self.known = known
        self.events: list[InterruptionEvent] = []

    def __call__(self, event: InterruptionEvent) -> bool:
        self.events.append(event)
        return all(vm_id_ in self.known for vm_id_ in event.instance_ids)


def test_watch_hands_each_notice_once_with_the_vm_id() -> None:
    nodes = [
        _node("a", notice_message(datetime(2026, 11, 28, 13, 0, 30, tzinfo=UTC))),
        _node("b", None),
        _node("c", "SpotRebalanceRecommendation Advisory."),
        _node("d", "Preempt Started.", status="False"),
    ]
    vm_a = VM.replace("aks-default-abc12", "a")
    vm_c = VM.replace("aks-default-abc12", "c")
    handler = Recorder({vm_a, vm_c})
    watch = PreemptionWatch(lambda: nodes, vm_id)
    assert watch.poll_once(handler) == 2
    kinds = {e.instance_ids: e.kind for e in handler.events}
    assert kinds == {(vm_a,): SPOT_INTERRUPTION, (vm_c,): REBALANCE_RECOMMENDATION}
    assert "2026-11-28T13:00:30Z" in handler.events[0].detail
    # the condition stays on the Node (re-asserted), but the notice was handled
    assert watch.poll_once(handler) == 0
    assert len(handler.events) == 2


def test_notice_for_an_unknown_claim_is_offered_again() -> None:
    nodes = [_node("a", "Preempt Started.")]
    vm_a = VM.replace("aks-default-abc12", "a")
    handler = Recorder(set())
    watch = PreemptionWatch(lambda: nodes, vm_id)
    assert watch.poll_once(handler) == 0
    handler.known.add(vm_a)  # the watchers have listed the claim now
    assert watch.poll_once(handler) == 1
    assert [e.instance_ids for e in handler.events] == [(vm_a,), (vm_a,)]


def test_a_new_notice_on_the_same_node_is_handled_again() -> None:
    nodes = [_node("a", "Preempt Started.", at="t1")]
    handler = Recorder({VM.replace("aks-default-abc12", "a")})
    watch = PreemptionWatch(lambda: nodes, vm_id)
    assert watch.poll_once(handler) == 1
    nodes[0] = _node("a", "Preempt Started.", at="t2")
    assert watch.poll_once(handler) == 1


def test_nodes_not_of_azure_vms_are_ignored() -> None:
    node = _node("a", "Preempt Started.")
    node["spec"]["providerID"] = "aws:///us-east-1a/i-0abc"
    handler = Recorder(set())
    assert PreemptionWatch(lambda: [node], vm_id).poll_once(handler) == 0
    assert handler.events == []


def test_run_survives_a_failing_read_and_stops() -> None:
    calls: list[int] = []
    stop = threading.Event()

    def flaky() -> list[Any]:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("API server down")
        stop.set()
        return [_node("a", "Preempt Started.")]

    handler = Recorder({VM.replace("aks-default-abc12", "a")})
    thread = threading.Thread(
        target=PreemptionWatch(flaky, vm_id, poll_seconds=0.01).run, args=(handler, stop)
    )
    thread.start()
    thread.join(timeout=5)
    assert not thread.is_alive()
    assert len(calls) == 2 and len(handler.events) == 1


def test_only_an_eviction_marks_its_spot_offering() -> None:
    marked: list[tuple[str, str, str]] = []

    def mark(capacity_type: str, size: str, zone: str) -> None:
        marked.append((capacity_type, size, zone))

    evicted = InterruptionEvent(SPOT_INTERRUPTION, (VM,))
    advisory = InterruptionEvent(REBALANCE_RECOMMENDATION, (VM,))
    assert mark_evicted_offering(mark, evicted, "Standard_D2s_v3", "eastus-1")
    assert not mark_evicted_offering(mark, advisory, "Standard_D2s_v3", "eastus-1")
    assert not mark_evicted_offering(mark, evicted, "", "eastus-1")
    assert marked == [("spot", "Standard_D2s_v3", "eastus-1")]


def test_a_scheduled_notice_stamps_its_deadline_before_the_claim_is_told() -> None:
    deadline = datetime(2026, 11, 28, 13, 0, 30, tzinfo=UTC)
    nodes = [_node("a", notice_message(deadline)), _node("b", "Preempt Started.")]
    order: list[str] = []

    def stamp(provider: str, not_before: datetime) -> None:
        order.append(f"stamp {vm_id(provider).rsplit('/', 1)[1]} {not_before.isoformat()}")

    def handle(event: InterruptionEvent) -> bool:
        order.append(f"handle {event.instance_ids[0].rsplit('/', 1)[1]}")
        return True

    PreemptionWatch(lambda: nodes, vm_id, stamp_deadline=stamp).poll_once(handle)
    # a started eviction has no deadline to stamp: the claim's own grace period applies
    assert order == [f"stamp a {deadline.isoformat()}", "handle a", "handle b"]


def test_a_failing_stamp_does_not_keep_the_claim_from_being_told() -> None:
    def stamp(provider: str, not_before: datetime) -> None:
        raise RuntimeError("API server down")

    nodes = [_node("a", notice_message(datetime(2026, 11, 28, 13, 0, 30, tzinfo=UTC)))]
    handler = Recorder({VM.replace("aks-default-abc12", "a")})
    assert PreemptionWatch(lambda: nodes, vm_id, stamp_deadline=stamp).poll_once(handler) == 1


def test_the_provider_reads_notices_once_it_has_the_cluster() -> None:
    from activities.azure.eviction import PreemptionWatch
    from activities.azure.provider import AzureProvider
    from activities.cloud.unavailable_offerings import UnavailableOfferings

    provider = AzureProvider("eastus", compute=None, pricing=None)  # type: ignore[arg-type]
    assert provider.interruption_source() is None  # no cluster to read Nodes from yet
    provider.share_unavailable_offerings(object())
    assert isinstance(provider.interruption_source(), PreemptionWatch)
    evicted = InterruptionEvent(SPOT_INTERRUPTION, (VM,))
    # with no VMs (plan-type use), an eviction marks nothing
    assert provider.offering_interrupted(evicted, "Standard_D2s_v3", "eastus-1") is False

    class Machines:
        unavailable = UnavailableOfferings()

    provider.machines = Machines()  # type: ignore[assignment]
    assert provider.offering_interrupted(evicted, "Standard_D2s_v3", "eastus-1") is True
    advisory = InterruptionEvent(REBALANCE_RECOMMENDATION, (VM,))
    assert provider.offering_interrupted(advisory, "Standard_D2s_v3", "eastus-2") is False
    unavailable = Machines.unavailable
    assert unavailable.is_unavailable("spot", "Standard_D2s_v3", "eastus-1")
    assert not unavailable.is_unavailable("spot", "Standard_D2s_v3", "eastus-2")
    assert not unavailable.is_unavailable("on-demand", "Standard_D2s_v3", "eastus-1")


def test_an_unknown_message_is_told_once(caplog: pytest.LogCaptureFixture) -> None:
    nodes = [_node("a", "Freeze Scheduled: Sat, 28 Nov 2026 13:00:30 GMT.")]
    handler = Recorder(set())
    watch = PreemptionWatch(lambda: nodes, vm_id)
    with caplog.at_level("WARNING", logger="activities.azure.eviction"):
        assert watch.poll_once(handler) == 0
        assert watch.poll_once(handler) == 0
    assert handler.events == []
    assert len([r for r in caplog.records if "unknown message" in r.getMessage()]) == 1
