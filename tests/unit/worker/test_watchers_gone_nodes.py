"""The ``cluster_changed`` signal names the NodeClaims whose Nodes went away (or whose
instances began terminating) within its coalescing window (the disruption workflow starts
its next round at once when the nodes its commands deleted are all named), and names nothing
when no Node went."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from activities.kubernetes import raw
from models import contract
from worker.running import watchers as w


class _Handle:
    def __init__(self, sent: list[tuple[Any, ...]]) -> None:
        self.sent = sent

    async def signal(self, name: str, *args: Any) -> None:
        self.sent.append((name, *args))


class _Client:
    def __init__(self) -> None:
        self.sent: list[tuple[Any, ...]] = []

    def get_workflow_handle(self, workflow_id: str) -> _Handle:
        assert workflow_id == contract.disruption_id("c")
        return _Handle(self.sent)


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield loop
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
    loop.close()


def _node(name: str, claim: str) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "ownerReferences": [{"kind": "NodeClaim", "name": claim}],
        },
        "spec": {"providerID": f"aws:///us-east-1a/i-{name}"},
    }


def _sent(client: _Client, n: int) -> list[tuple[Any, ...]]:
    deadline = time.monotonic() + 5
    while len(client.sent) < n and time.monotonic() < deadline:
        time.sleep(0.01)
    return client.sent


def test_nodes_deleted_within_one_window_are_named_in_its_signal(
    loop: asyncio.AbstractEventLoop, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(w, "DISRUPTION_COALESCE", 0.2)
    client = _Client()
    watchers = w.Watchers(
        kube=None,  # type: ignore[arg-type]
        client=client,  # type: ignore[arg-type]
        loop=loop,
        cluster="c",
        task_queue="q",
    )
    watchers.on_node(raw.DELETED, _node("n1", "claim-1"))
    watchers.on_node(raw.DELETED, _node("n2", "claim-2"))
    assert _sent(client, 1) == [(contract.SIGNAL_CLUSTER_CHANGED, ["claim-1", "claim-2"])]
    # a change that is no Node going away: a signal naming nothing, as before
    watchers.trigger_disruption()
    assert _sent(client, 2)[1:] == [(contract.SIGNAL_CLUSTER_CHANGED,)]
    # a claim whose instance began terminating is named once, however often it changes
    claim: dict[str, Any] = {
        "metadata": {"name": "claim-3"},
        "status": {"conditions": [{"type": "InstanceTerminating", "status": "True"}]},
    }
    watchers.on_nodeclaim(raw.MODIFIED, claim)
    watchers.on_nodeclaim(raw.MODIFIED, claim)
    assert _sent(client, 3)[2:] == [(contract.SIGNAL_CLUSTER_CHANGED, ["claim-3"])]
    time.sleep(0.4)
    assert len(client.sent) == 3
