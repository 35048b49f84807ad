"""The watch plumbing: list + watch threads, and the hand-offs out of them.

What an event means (which workflow to start or signal) is ``worker.running.watchers``; this
module only keeps the streams going and carries their consequences where they run:

- ``Streams``: one thread per watched resource doing list + watch, re-listing when the
  watch expires or fails, handing each event to its handler in order and never dying;
- ``LoopCalls``: workflow starts and signals from those threads, run on the asyncio loop
  that owns the Temporal client;
- ``StatusWriter``: NodeClaim status writes on one writer thread, so a slow write never
  holds a watch.

All three stop acting once the watchers' ``stop`` event is set.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from temporalio.service import RPCError

from activities.kubernetes import raw
from activities.kubernetes.errors import Expired, translate
from activities.kubernetes.node_index import NodeIndex
from activities.kubernetes.object_cache import ObjectCache

log = logging.getLogger(__name__)
Obj = dict[str, Any]


@dataclass
class WatchTarget:
    name: str
    list_call: Callable[..., Any]
    args: tuple[Any, ...] = ()
    # Told True once a list has been handed over whole, False when the watch breaks.
    on_sync: Callable[[bool], None] | None = None


def synced_to(*caches: ObjectCache | NodeIndex | None) -> Callable[[bool], None] | None:
    """An ``on_sync`` telling each of ``caches`` (those not None)."""
    told = [c for c in caches if c is not None]
    if not told:
        return None

    def on_sync(synced: bool) -> None:
        for cache in told:
            cache.set_synced(synced)

    return on_sync


class Streams:
    """The watch threads, and which resources have been listed whole at least once."""

    def __init__(self, stop: threading.Event) -> None:
        self.stop = stop
        self.synced: set[str] = set()
        self.threads: list[threading.Thread] = []

    def stream(self, target: WatchTarget) -> Iterator[tuple[str, Obj]]:
        """LISTED for everything listed, then watch events; re-lists when the watch expires."""
        while not self.stop.is_set():
            try:
                listing = raw.call(target.list_call, *target.args)
                for item in listing.get("items") or []:
                    yield raw.LISTED, item
                self.synced.add(target.name)
                if target.on_sync is not None:
                    target.on_sync(True)
                version = str((listing.get("metadata") or {}).get("resourceVersion") or "")
                while not self.stop.is_set():
                    stream = raw.watch(target.list_call, *target.args, resource_version=version)
                    for kind, obj in stream:
                        if kind == "ERROR":
                            raise Expired(str(obj.get("message") or "watch error"))
                        version = str((obj.get("metadata") or {}).get("resourceVersion") or version)
                        if kind != "BOOKMARK":
                            yield kind, obj
                        if self.stop.is_set():
                            return
            except Exception as exc:  # re-list after any failure; never die
                if target.on_sync is not None:
                    target.on_sync(False)
                error = translate(exc)
                if not isinstance(error, Expired):
                    log.warning("%s watch failed: %s", target.name, error)
                self.stop.wait(1.0)

    def run(self, target: WatchTarget, handle: Callable[[str, Obj], None]) -> None:
        for kind, obj in self.stream(target):
            if self.stop.is_set():
                return
            try:
                handle(kind, obj)
            except Exception:
                log.exception("%s watcher failed on an event", target.name)

    def watch(self, target: WatchTarget, handle: Callable[[str, Obj], None]) -> None:
        """Start the thread that hands ``target``'s events to ``handle``."""
        self.spawn(self.run, target, handle, name=f"watch-{target.name}")

    def spawn(
        self, fn: Callable[..., Any], *args: Any, name: str | None = None, **kwargs: Any
    ) -> None:
        """Start a daemon thread running ``fn`` beside the watches."""
        t = threading.Thread(target=fn, args=args, kwargs=kwargs, name=name, daemon=True)
        t.start()
        self.threads.append(t)


class LoopCalls:
    """Coroutines handed from the watch threads to the loop that owns the Temporal client."""

    def __init__(self, loop: asyncio.AbstractEventLoop, stop: threading.Event) -> None:
        self.loop = loop
        self.stop = stop

    def submit(self, coro: Coroutine[Any, Any, Any]) -> None:
        if self.stop.is_set():  # a closed watcher must not act (its task queue may be gone)
            coro.close()
            return
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        future.add_done_callback(_log_failure)


async def ignore_missing(coro: Coroutine[Any, Any, Any]) -> None:
    """Await a signal, ignoring a workflow that is not there (gone, or completed)."""
    try:
        await coro
    except RPCError as exc:
        if "not found" not in str(exc).lower() and "completed" not in str(exc).lower():
            raise


def _log_failure(future: Any) -> None:
    # A call cancelled with the loop (Ctrl-C, shutdown) failed nothing; and exception() on a
    # cancelled future raises CancelledError, a traceback at every Ctrl-C.
    if future.cancelled():
        return
    exc = future.exception()
    if exc is not None:
        log.warning("workflow call from a watcher failed: %s", exc)


class StatusWriter:
    """Status writes on one thread of their own; a failure is logged, never fatal."""

    def __init__(self, stop: threading.Event) -> None:
        self.stop = stop
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="claim-status")

    def write(self, what: str, fn: Callable[[], Any]) -> None:
        def run() -> None:
            try:
                fn()
            except Exception as exc:  # a gone claim, a conflict: the next event retries
                log.debug("%s: %s", what, exc)

        if not self.stop.is_set():
            self._pool.submit(run)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
