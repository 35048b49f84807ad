"""Workflow-task slots that launches do not use up (``worker.running.tuning``).

A local activity runs inside its workflow task: the task stays open, holding one of the
worker's workflow-task slots, until the activity ends. The slots are few on purpose
(``WORKFLOW_TASK_SLOTS``: workflow code shares one GIL, more tasks at once only take longer
each), which suits the lifecycle's short local calls, but a launch is a CreateFleet of one to
a few seconds that uses no Python CPU while it waits. With the launch a local activity, a
burst's launches would hold every slot and run 8 per replica at a time.

So the two slot suppliers here share one count: the local-activity supplier counts the
launches running (it learns each local activity's type when the SDK marks its slot used),
and the workflow-task supplier grants a slot while the slots held, less those launches, stay
under the budget, up to the budget plus an allowance of launches. A task waiting on its
launch holds a slot but no CPU, so it does not count against the tasks that run Python.

The SDK calls ``reserve_slot`` as a coroutine on the worker's event loop, and
``mark_slot_used``, ``release_slot`` and ``try_reserve_slot`` from its core's threads: the
counts sit behind a thread lock, never held across an ``await``, and a waiting reservation
is woken through its loop's ``call_soon_threadsafe``.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

from temporalio.worker import (
    CustomSlotSupplier,
    FixedSizeSlotSupplier,
    LocalActivitySlotInfo,
    SlotMarkUsedContext,
    SlotPermit,
    SlotReleaseContext,
    SlotReserveContext,
    WorkerTuner,
)


class _Waiters:
    """Reservations waiting for a count to change; woken from any thread."""

    def __init__(self) -> None:
        self._waiting: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []

    def add(self, loop: asyncio.AbstractEventLoop) -> asyncio.Future[None]:
        future: asyncio.Future[None] = loop.create_future()
        self._waiting.append((loop, future))
        return future

    def discard(self, future: asyncio.Future[None]) -> None:
        self._waiting = [(lp, f) for lp, f in self._waiting if f is not future]

    def wake_all(self) -> None:
        """Every waiter checks again (there are a few: one per poller)."""
        waiting, self._waiting = self._waiting, []
        for loop, future in waiting:
            if not loop.is_closed():
                loop.call_soon_threadsafe(_settle, future)


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class SlotBudget:
    """The counts both suppliers share: workflow-task slots held, launches running."""

    def __init__(self, workflow_slots: int, launch_allowance: int) -> None:
        self.workflow_slots = workflow_slots
        self.launch_allowance = launch_allowance
        self.lock = threading.Lock()
        self.held = 0
        self.launches = 0
        self.waiters = _Waiters()

    def workflow_slot_free(self) -> bool:
        """Called with the lock held."""
        return (
            self.held - self.launches < self.workflow_slots
            and self.held < self.workflow_slots + self.launch_allowance
        )

    def launch_started(self) -> None:
        with self.lock:
            self.launches += 1
            self.waiters.wake_all()  # its task's slot no longer counts

    def launch_ended(self) -> None:
        with self.lock:
            self.launches -= 1
            self.waiters.wake_all()


class _LaunchPermit(SlotPermit):
    """A local-activity slot, and whether a launch used it."""

    def __init__(self) -> None:
        self.launch = False


async def _reserve(
    lock: threading.Lock, waiters: _Waiters, take: Callable[[], SlotPermit | None]
) -> SlotPermit:
    """Wait until ``take`` (run under ``lock``) gives a permit."""
    loop = asyncio.get_running_loop()
    while True:
        with lock:
            permit = take()
            if permit is not None:
                return permit
            future = waiters.add(loop)
        try:
            await future
        finally:
            with lock:
                waiters.discard(future)


class WorkflowTaskSlots(CustomSlotSupplier):
    """``budget.workflow_slots`` tasks running Python, plus the tasks waiting on launches."""

    def __init__(self, budget: SlotBudget) -> None:
        self.budget = budget

    def _take(self) -> SlotPermit | None:
        if not self.budget.workflow_slot_free():
            return None
        self.budget.held += 1
        return SlotPermit()

    async def reserve_slot(self, ctx: SlotReserveContext) -> SlotPermit:
        return await _reserve(self.budget.lock, self.budget.waiters, self._take)

    def try_reserve_slot(self, ctx: SlotReserveContext) -> SlotPermit | None:
        with self.budget.lock:
            return self._take()

    def mark_slot_used(self, ctx: SlotMarkUsedContext) -> None:
        return None

    def release_slot(self, ctx: SlotReleaseContext) -> None:
        with self.budget.lock:
            self.budget.held -= 1
            self.budget.waiters.wake_all()


class LocalActivitySlots(CustomSlotSupplier):
    """``capacity`` local activities at once; tells the budget when a launch starts and ends."""

    def __init__(self, budget: SlotBudget, capacity: int, launch_type: str) -> None:
        self.budget = budget
        self.capacity = capacity
        self.launch_type = launch_type
        self._lock = threading.Lock()
        self._waiters = _Waiters()
        self.held = 0

    def _take(self) -> SlotPermit | None:
        if self.held >= self.capacity:
            return None
        self.held += 1
        return _LaunchPermit()

    async def reserve_slot(self, ctx: SlotReserveContext) -> SlotPermit:
        return await _reserve(self._lock, self._waiters, self._take)

    def try_reserve_slot(self, ctx: SlotReserveContext) -> SlotPermit | None:
        with self._lock:
            return self._take()

    def mark_slot_used(self, ctx: SlotMarkUsedContext) -> None:
        info = ctx.slot_info
        permit = ctx.permit
        if (
            isinstance(permit, _LaunchPermit)
            and not permit.launch
            and isinstance(info, LocalActivitySlotInfo)
            and info.activity_type == self.launch_type
        ):
            permit.launch = True
            self.budget.launch_started()

    def release_slot(self, ctx: SlotReleaseContext) -> None:
        permit = ctx.permit
        if isinstance(permit, _LaunchPermit) and permit.launch:
            permit.launch = False
            self.budget.launch_ended()
        with self._lock:
            self.held -= 1
            self._waiters.wake_all()


def tuner(
    *,
    workflow_slots: int,
    activity_slots: int,
    local_activity_slots: int,
    launch_allowance: int,
    launch_type: str,
) -> WorkerTuner:
    """A worker's slots: ``workflow_slots`` workflow tasks running Python and up to
    ``launch_allowance`` more waiting on their launch (a local activity of ``launch_type``);
    ``local_activity_slots`` local activities besides the launches; ``activity_slots``
    regular ones."""
    budget = SlotBudget(workflow_slots, launch_allowance)
    return WorkerTuner.create_composite(
        workflow_supplier=WorkflowTaskSlots(budget),
        activity_supplier=FixedSizeSlotSupplier(activity_slots),
        local_activity_supplier=LocalActivitySlots(
            budget, local_activity_slots + launch_allowance, launch_type
        ),
        nexus_supplier=FixedSizeSlotSupplier(1),
    )
