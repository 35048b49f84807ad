"""The slot suppliers of ``worker/running/slots.py``: tasks waiting on a launch do not use up the
workflow-task slots, and a reservation waiting for a slot wakes when one frees, whichever
thread frees it."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass

import pytest
from temporalio.worker import SlotPermit

from worker.running.slots import LocalActivitySlots, SlotBudget, WorkflowTaskSlots

LAUNCH = "nodeclaim.launch"


@dataclass
class Reserve:
    slot_type: str = "workflow"
    task_queue: str = "q"
    worker_identity: str = "w"
    worker_build_id: str = ""
    worker_deployment_version: None = None
    is_sticky: bool = False


@dataclass
class LocalInfo:
    activity_type: str


@dataclass
class Used:
    slot_info: object
    permit: SlotPermit


@dataclass
class Released:
    slot_info: object
    permit: SlotPermit


def _suppliers(slots: int = 2, allowance: int = 3) -> tuple[WorkflowTaskSlots, LocalActivitySlots]:
    budget = SlotBudget(slots, allowance)
    return WorkflowTaskSlots(budget), LocalActivitySlots(budget, 10, LAUNCH)


def _launch(local: LocalActivitySlots, kind: str = LAUNCH) -> SlotPermit:
    permit = local.try_reserve_slot(Reserve("local-activity"))  # type: ignore[arg-type]
    assert permit is not None
    local.mark_slot_used(Used(LocalInfo(kind), permit))  # type: ignore[arg-type]
    return permit


def _end(local: LocalActivitySlots, permit: SlotPermit, kind: str = LAUNCH) -> None:
    local.release_slot(Released(LocalInfo(kind), permit))  # type: ignore[arg-type]


def test_launches_free_their_workflow_slots_up_to_the_allowance() -> None:
    wf, local = _suppliers(slots=2, allowance=3)
    held = [wf.try_reserve_slot(Reserve()) for _ in range(2)]  # type: ignore[arg-type]
    assert all(held)
    assert wf.try_reserve_slot(Reserve()) is None  # type: ignore[arg-type]
    launches = [_launch(local)]
    assert wf.try_reserve_slot(Reserve()) is not None  # type: ignore[arg-type]
    launches += [_launch(local), _launch(local)]
    assert wf.try_reserve_slot(Reserve()) is not None  # type: ignore[arg-type]
    assert wf.try_reserve_slot(Reserve()) is not None  # type: ignore[arg-type]
    # 5 held = 2 + the allowance of 3: a fourth launch frees nothing more
    launches.append(_launch(local))
    assert wf.budget.held == 5
    assert wf.try_reserve_slot(Reserve()) is None  # type: ignore[arg-type]
    for permit in launches:
        _end(local, permit)
    assert wf.budget.launches == 0


def test_other_local_activities_do_not_count_as_launches() -> None:
    wf, local = _suppliers(slots=1, allowance=3)
    assert wf.try_reserve_slot(Reserve()) is not None  # type: ignore[arg-type]
    read = _launch(local, "nodeclaim.prepare")
    assert wf.budget.launches == 0
    assert wf.try_reserve_slot(Reserve()) is None  # type: ignore[arg-type]
    _end(local, read, "nodeclaim.prepare")
    assert local.held == 0


def test_a_slot_never_used_releases_without_a_launch() -> None:
    wf, local = _suppliers()
    permit = local.try_reserve_slot(Reserve("local-activity"))  # type: ignore[arg-type]
    assert permit is not None
    local.release_slot(Released(None, permit))  # type: ignore[arg-type]
    assert (local.held, wf.budget.launches) == (0, 0)


def test_local_activity_slots_are_bounded() -> None:
    budget = SlotBudget(2, 1)
    local = LocalActivitySlots(budget, 2, LAUNCH)
    assert local.try_reserve_slot(Reserve()) is not None  # type: ignore[arg-type]
    assert local.try_reserve_slot(Reserve()) is not None  # type: ignore[arg-type]
    assert local.try_reserve_slot(Reserve()) is None  # type: ignore[arg-type]


def _on_another_thread(fn: object, *args: object) -> None:
    """As the SDK's core calls the suppliers: from a thread of its own."""
    thread = threading.Thread(target=fn, args=args)  # type: ignore[arg-type]
    thread.start()
    thread.join()


@pytest.mark.asyncio
async def test_a_waiting_reservation_wakes_when_another_thread_starts_or_ends_a_slot() -> None:
    wf, local = _suppliers(slots=1, allowance=2)
    first = wf.try_reserve_slot(Reserve())  # type: ignore[arg-type]
    assert first is not None
    waiting = asyncio.create_task(wf.reserve_slot(Reserve()))  # type: ignore[arg-type]
    await asyncio.sleep(0.05)
    assert not waiting.done()
    # the first task's launch starts: its slot no longer counts, the waiter gets one
    permit = local.try_reserve_slot(Reserve("local-activity"))  # type: ignore[arg-type]
    assert permit is not None
    _on_another_thread(local.mark_slot_used, Used(LocalInfo(LAUNCH), permit))
    second = await asyncio.wait_for(waiting, 5)
    waiting = asyncio.create_task(wf.reserve_slot(Reserve()))  # type: ignore[arg-type]
    await asyncio.sleep(0.05)
    assert not waiting.done()
    # the launch ends (2 held, none launching: full), then both tasks end
    _on_another_thread(_end, local, permit)
    await asyncio.sleep(0.05)
    assert not waiting.done()
    _on_another_thread(wf.release_slot, Released(None, first))
    _on_another_thread(wf.release_slot, Released(None, second))
    assert await asyncio.wait_for(waiting, 5) is not None
    assert (wf.budget.held, wf.budget.launches) == (1, 0)


@pytest.mark.asyncio
async def test_a_cancelled_reservation_leaves_no_waiter_and_no_slot() -> None:
    wf, _ = _suppliers(slots=1, allowance=0)
    first = wf.try_reserve_slot(Reserve())  # type: ignore[arg-type]
    assert first is not None
    waiting = asyncio.create_task(wf.reserve_slot(Reserve()))  # type: ignore[arg-type]
    await asyncio.sleep(0.05)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert wf.budget.waiters._waiting == []
    wf.release_slot(Released(None, first))  # type: ignore[arg-type]
    assert wf.budget.held == 0
