"""Waiting for something a test started to come true: on the wall clock (``eventually``, from
plain code; ``until``, from a test's event loop) or on a time-skipping Temporal server's clock
(``until_skipped``).

Each fails the test with what it was waiting for and the last answer it got, instead of
hanging, so a slow or broken run says what never happened.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any, TypeVar

from temporalio.testing import WorkflowEnvironment

from activities.kubernetes.errors import NotFound

T = TypeVar("T")


def eventually(
    probe: Callable[[], T | None],
    *,
    timeout: float = 60,
    what: str = "",
    every: float = 0.2,
    tolerate: tuple[type[Exception], ...] = (NotFound,),
) -> T:
    """Call ``probe`` until it returns something truthy, and return that. An exception in
    ``tolerate`` (by default: the object is not there yet) counts as a falsy answer."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = probe()
        except tolerate as exc:
            last = exc
        if last and not isinstance(last, Exception):
            return last
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout}s waiting for {what or probe}: last={last!r}")


async def until(
    probe: Callable[[], Any] | Callable[[], Awaitable[Any]],
    *,
    timeout: float = 60,
    what: str = "",
    every: float = 0.25,
) -> Any:
    """Poll ``probe`` (a plain call, or a coroutine function) until it is truthy.

    A plain probe runs in a thread: the worker under test shares this event loop, and a
    probe's blocking call (a Kubernetes list, an HTTP probe) would hold up its workflow tasks
    all the while. Listing 100 NodeClaims every 0.25 s on a loaded machine kept the loop
    blocked most of the time, and workflow tasks overran their 10 s timeout over and over."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    last: Any = None
    while loop.time() < deadline:
        try:
            if inspect.iscoroutinefunction(probe):
                last = await probe()
            else:
                last = await asyncio.to_thread(probe)
                if asyncio.iscoroutine(last):
                    last = await last
        except NotFound:
            last = None
        if last:
            return last
        await asyncio.sleep(every)
    raise AssertionError(f"timed out waiting for {what or probe}: last={last!r}")


async def until_skipped(
    env: WorkflowEnvironment, check: Callable[[], bool], what: str, step: float = 1.0
) -> None:
    """Let the time-skipping server's clock run ``step`` seconds at a time (up to 400 steps)
    until ``check`` holds: the workflow under test moves only while the clock does."""
    for _ in range(400):
        if check():
            return
        await env.sleep(timedelta(seconds=step))
    raise AssertionError(f"never: {what}")
