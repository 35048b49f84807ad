"""The pod watcher keeps at most one ``pods_pending`` signal in flight to the provisioner.

A burst of 1,000 unschedulable pods used to send 1,000 signals, each a workflow task of the
provisioner queued behind the lifecycles'. Now a burst is one signal plus one follow-up for
whatever arrived while it was sent, and no pending pod goes unannounced.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from activities.kubernetes import raw
from activities.kubernetes.object_cache import WatchedObjects
from models import contract
from worker.running.watchers import PODS_PENDING_SPACING, Watchers


def pending_pod(name: str) -> dict[str, Any]:
    return {
        "metadata": {"namespace": "ns", "name": name},
        "spec": {},
        "status": {
            "phase": "Pending",
            "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}],
        },
    }


class Provisioner:
    """Takes the watcher's signals; each waits at the gate until the test opens it."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []
        self.gate = asyncio.Event()
        self.fail_next = False

    def get_workflow_handle(self, workflow_id: str) -> Provisioner.Handle:
        return Provisioner.Handle(self, workflow_id)

    class Handle:
        def __init__(self, owner: Provisioner, workflow_id: str) -> None:
            self.owner, self.workflow_id = owner, workflow_id

        async def signal(self, name: str, *args: Any) -> None:
            self.owner.sent.append((self.workflow_id, name))
            if self.owner.fail_next:
                self.owner.fail_next = False
                raise RuntimeError("connection lost")
            await self.owner.gate.wait()


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    running = asyncio.new_event_loop()
    thread = threading.Thread(target=running.run_forever, daemon=True)
    thread.start()
    yield running
    running.call_soon_threadsafe(running.stop)
    thread.join(5)
    running.close()


def settled(count: Callable[[], int], expected: int) -> int:
    """``count()`` once it reached ``expected`` (or 5 s passed) and then stayed for 0.3 s."""
    deadline = time.monotonic() + 5
    while count() < expected and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.3)
    return count()


def watchers_for(provisioner: Provisioner, loop: asyncio.AbstractEventLoop) -> Watchers:
    return Watchers(
        kube=None,  # type: ignore[arg-type]  # signalling reads nothing from the cluster
        client=provisioner,  # type: ignore[arg-type]
        loop=loop,
        cluster="c",
        task_queue="q",
    )


def test_a_burst_of_pending_pods_is_one_signal_and_one_follow_up(
    loop: asyncio.AbstractEventLoop,
) -> None:
    provisioner = Provisioner()
    watchers = watchers_for(provisioner, loop)
    watchers.on_pod("ADDED", pending_pod("web-0"))
    assert settled(lambda: len(provisioner.sent), 1) == 1
    assert provisioner.sent[0] == (contract.provisioner_id("c"), contract.SIGNAL_PODS_PENDING)
    # The rest arrive while that signal is in flight (held at the gate), so they wait for it.
    # (Pods seen before the signal went out need no follow-up: the round lists them.)
    for n in range(1, 1_000):
        watchers.on_pod("ADDED", pending_pod(f"web-{n}"))
    time.sleep(0.3)
    assert len(provisioner.sent) == 1

    loop.call_soon_threadsafe(provisioner.gate.set)
    # pods seen while the first was in flight are announced once more, then nothing
    assert settled(lambda: len(provisioner.sent), 2) == 2

    watchers.on_pod("ADDED", pending_pod("late"))  # nothing in flight: sent at once
    assert settled(lambda: len(provisioner.sent), 3) == 3


def test_pods_arriving_one_by_one_are_a_few_signals_a_second(
    loop: asyncio.AbstractEventLoop,
) -> None:
    """A signal's round trip is milliseconds, so in-flight alone still sent one per pod."""
    provisioner = Provisioner()
    loop.call_soon_threadsafe(provisioner.gate.set)
    watchers = watchers_for(provisioner, loop)
    began = time.monotonic()
    for n in range(40):  # a pod every 50 ms for 2 s, as a ReplicaSet creates them
        watchers.on_pod("ADDED", pending_pod(f"web-{n}"))
        time.sleep(0.05)
    seconds = time.monotonic() - began
    at_most = int(seconds / PODS_PENDING_SPACING) + 2
    sent = settled(lambda: len(provisioner.sent), 2)
    time.sleep(PODS_PENDING_SPACING)  # the last pod's follow-up
    sent = len(provisioner.sent)
    assert 2 <= sent <= at_most, (sent, at_most)


def test_a_failed_signal_does_not_block_the_next(loop: asyncio.AbstractEventLoop) -> None:
    provisioner = Provisioner()
    loop.call_soon_threadsafe(provisioner.gate.set)
    provisioner.fail_next = True
    watchers = watchers_for(provisioner, loop)
    watchers.on_pod("ADDED", pending_pod("web-0"))
    assert settled(lambda: len(provisioner.sent), 1) == 1
    assert watchers._pending_on_list  # the resync announces the pods again
    watchers.on_pod("ADDED", pending_pod("web-1"))
    assert settled(lambda: len(provisioner.sent), 2) == 2


def test_listed_pods_wait_for_the_resync(loop: asyncio.AbstractEventLoop) -> None:
    provisioner = Provisioner()
    watchers = watchers_for(provisioner, loop)
    watchers.on_pod("LISTED", pending_pod("web-0"))
    assert settled(lambda: len(provisioner.sent), 0) == 0
    assert watchers._pending_on_list


def test_the_resync_reads_the_pod_watch_not_the_api_server(
    loop: asyncio.AbstractEventLoop,
) -> None:
    """A pod still unschedulable is announced again by the resync, found in the pod watch's
    cache: this watcher has no API client, so a list call would fail and send nothing."""
    provisioner = Provisioner()
    loop.call_soon_threadsafe(provisioner.gate.set)
    watchers = watchers_for(provisioner, loop)
    watchers.watched = WatchedObjects()
    watchers.resync_seconds = 0.05
    watchers.synced.add("pods")
    watchers.watched.pods.observe(raw.LISTED, pending_pod("web-0"))
    watchers.watched.pods.set_synced(True)
    resync = threading.Thread(target=watchers._resync, daemon=True)
    resync.start()
    try:
        assert settled(lambda: len(provisioner.sent), 1) >= 1
    finally:
        watchers.close()
        resync.join(5)
