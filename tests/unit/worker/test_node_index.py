"""The worker's Node index: providerID to Node name, fed and trusted only while its watch is.

Registration checks ask it instead of listing every Node of the pool on each poll (a list
per poll per claim grew with the square of a burst: docs/performance.md).
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

from activities.kubernetes.node_index import NodeIndex
from activities.kubernetes.raw import LISTED
from worker.running.watch import Streams, WatchTarget
from worker.running.watchers import Watchers


def node(name: str, provider_id: str = "") -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"providerID": provider_id} if provider_id else {}}


def test_the_index_follows_added_changed_and_deleted_nodes() -> None:
    index = NodeIndex()
    assert not index.synced
    index.observe(LISTED, node("a", "aws:///z/i-a"))
    index.observe("ADDED", node("b"))  # no providerID yet: nothing to find it by
    assert index.name_of("aws:///z/i-a") == "a"
    index.observe("MODIFIED", node("b", "aws:///z/i-b"))
    assert index.name_of("aws:///z/i-b") == "b"
    index.observe("MODIFIED", node("b", "aws:///z/i-c"))  # a providerID never moves, but
    assert index.name_of("aws:///z/i-b") is None  # if it did, the old one is forgotten
    assert index.name_of("aws:///z/i-c") == "b"
    index.observe("DELETED", node("a", "aws:///z/i-a"))
    assert index.name_of("aws:///z/i-a") is None
    # a Node recreated under another name for the same instance replaces the first
    index.observe("ADDED", node("b2", "aws:///z/i-c"))
    index.observe("DELETED", node("b", "aws:///z/i-c"))
    assert index.name_of("aws:///z/i-c") == "b2"


class Response:
    def __init__(self, body: dict[str, Any]) -> None:
        self.data = json.dumps(body).encode()

    def release_conn(self) -> None:
        pass


class FailingWatch:
    """Lists one Node, then every watch request fails."""

    def __init__(self, stop: threading.Event) -> None:
        self.stop = stop
        self.lists = 0

    def __call__(self, *args: Any, watch: bool = False, **kwargs: Any) -> Any:
        if watch:
            raise ConnectionError("watch broke")
        self.lists += 1
        if self.lists > 1:
            self.stop.set()
        listing = {"items": [node("n", "aws:///z/i-n")], "metadata": {"resourceVersion": "1"}}
        return Response(listing)


def test_the_node_watch_syncs_the_index_and_a_broken_watch_unsyncs_it() -> None:
    index = NodeIndex()
    streams = Streams(threading.Event())
    seen: list[bool] = []

    def on_sync(synced: bool) -> None:
        index.set_synced(synced)
        seen.append(synced)

    listing = FailingWatch(streams.stop)
    target = WatchTarget("nodes", listing, on_sync=on_sync)
    for kind, obj in streams.stream(target):
        index.observe(kind, obj)
    # listed (synced), the watch broke (not synced), listed again (synced)
    assert seen[:3] == [True, False, True]
    assert index.name_of("aws:///z/i-n") == "n"


class Client:
    """Takes (and drops) the disruption workflow's handle the Node handler asks for."""

    def get_workflow_handle(self, workflow_id: str) -> Client:
        return self

    async def signal(self, *args: Any) -> None:
        pass


def test_the_watcher_hands_node_events_to_the_index() -> None:
    index = NodeIndex()
    loop = asyncio.new_event_loop()
    watchers = Watchers(
        kube=None,  # type: ignore[arg-type]
        client=Client(),  # type: ignore[arg-type]
        loop=loop,
        cluster="c",
        task_queue="q",
        node_index=index,
    )
    watchers.stop.set()  # a stopped watcher acts on nothing, but still indexes
    watchers.on_node("ADDED", node("n", "aws:///z/i-n"))
    assert index.name_of("aws:///z/i-n") == "n"
    watchers.on_node("DELETED", node("n", "aws:///z/i-n"))
    assert index.name_of("aws:///z/i-n") is None
    loop.close()
