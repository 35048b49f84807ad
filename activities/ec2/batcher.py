"""Calls that arrive together with the same key go out as one, as Karpenter batches EC2 calls.

A burst's launches run on many activity threads at once, each with one NodeClaim. Sent one by
one, a thousand claims are a thousand CreateFleet calls (and as many idempotency lookups),
each paid for in boto3's request building and parsing here and in the API's answer time.
Karpenter puts identical CreateFleet requests that come within a short window into one call
for all of them; :class:`Batcher` does the same for any call.

The first thread to bring an item for a key leads that batch: it waits until no item has
come for ``idle`` seconds, or ``max_wait`` has passed since the batch opened, or the batch
holds ``max_items``; then it closes the batch, makes the one call for every item, and hands
each waiting thread its own answer (a value, or the exception meant for it). No thread of
its own, no timer: the callers' threads do the work, so an idle worker costs nothing.

The callers are activity threads, which the Temporal SDK cancels (an activity's timeout, a
worker's shutdown) by raising an exception inside the thread, delivered only while it runs
Python code. So nobody waits without a timeout, and a leader stopped that way still answers
its batch: each other caller gets :class:`LeaderInterrupted` (its activity fails and is
retried) rather than waiting forever for a call nobody will make; a 1,000-claim burst once
stalled on that, 80 launches holding the worker's activity slots.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
I = TypeVar("I")  # noqa: E741 - the item type, as the other type variables are one letter
R = TypeVar("R")

# How often a waiting caller wakes, so that an exception raised in its thread is seen.
WAKE_EVERY = 0.5


class LeaderInterrupted(RuntimeError):
    """The thread that leads a batch was stopped (its activity cancelled) before the call
    was answered: the item was not sent, or its answer was lost; submit it again."""


@dataclass
class _Batch(Generic[I, R]):
    opened: float
    last: float
    limit: int
    items: list[I] = field(default_factory=list)
    answers: list[R | BaseException] = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)


class Batcher(Generic[K, I, R]):
    """Batches ``run(key, items)`` calls; see the module docstring.

    ``run`` must return one answer per item in order; an exception it raises is every
    item's answer.
    """

    def __init__(
        self,
        run: Callable[[K, list[I]], Sequence[R | BaseException]],
        *,
        idle: float,
        max_wait: float,
        max_items: int,
        clock: Callable[[], float] = time.monotonic,
        name: str = "",
    ) -> None:
        self.name = name
        # told (name, seconds the batch stayed open, items) as each batch is sent
        self.observe: Callable[[str, float, int], None] | None = None
        self._run = run
        self._idle = idle
        self._max_wait = max_wait
        self._max_items = max_items
        self._clock = clock
        self._open: dict[K, _Batch[I, R]] = {}
        self._arrived = threading.Condition()

    def submit(self, key: K, item: I, limit: int | None = None) -> R:
        """The answer for ``item``, after the batch it joined was sent. ``limit`` caps the
        batch it opens (at most ``max_items``); a batch already open keeps its own."""
        with self._arrived:
            batch = self._open.get(key)
            leader = batch is None
            if batch is None:
                now = self._clock()
                cap = self._max_items if limit is None else max(1, min(limit, self._max_items))
                batch = _Batch(opened=now, last=now, limit=cap)
                self._open[key] = batch
            index = len(batch.items)
            batch.items.append(item)
            batch.last = self._clock()
            if len(batch.items) >= batch.limit:
                self._open.pop(key, None)  # full: the next item opens another
            self._arrived.notify_all()
        if leader:
            self._lead(key, batch)
        else:
            while not batch.done.wait(WAKE_EVERY):
                pass
        answer = batch.answers[index]
        if isinstance(answer, BaseException):
            raise answer
        return answer

    def _lead(self, key: K, batch: _Batch[I, R]) -> None:
        try:
            self._gather(key, batch)
        except BaseException as stopped:  # this thread stopped while the batch was open
            self._close(key, batch)
            batch.answers = [_interrupted(stopped)] * len(batch.items)
            batch.answers[0] = stopped  # the leader's own item is the first
            batch.done.set()
            raise
        items = list(batch.items)
        if self.observe is not None:
            self.observe(self.name, self._clock() - batch.opened, len(items))
        try:
            answers = list(self._run(key, items))
            if len(answers) != len(items):
                raise RuntimeError(f"batch call answered {len(answers)} of {len(items)} items")
        except Exception as exc:  # every waiting thread must hear, whatever went wrong
            answers = [exc] * len(items)
        except BaseException as stopped:  # the leader stopped during the call: answer lost
            answers = [_interrupted(stopped)] * len(items)
            answers[0] = stopped
        batch.answers = answers
        batch.done.set()

    def _gather(self, key: K, batch: _Batch[I, R]) -> None:
        """Wait, holding the batch open, until it is full, quiet or late; then close it."""
        with self._arrived:
            while True:
                now = self._clock()
                full = len(batch.items) >= batch.limit
                quiet = now - batch.last >= self._idle
                late = now - batch.opened >= self._max_wait
                if full or quiet or late:
                    break
                wait = min(batch.last + self._idle, batch.opened + self._max_wait) - now
                self._arrived.wait(min(max(wait, 0.001), WAKE_EVERY))
            if self._open.get(key) is batch:
                del self._open[key]

    def _close(self, key: K, batch: _Batch[I, R]) -> None:
        """No item joins ``batch`` from now on (the next one opens another)."""
        with self._arrived:
            if self._open.get(key) is batch:
                del self._open[key]


def _interrupted(stopped: BaseException) -> LeaderInterrupted:
    return LeaderInterrupted(f"the batch's leading call was stopped ({type(stopped).__name__})")
