"""Keeping a long-running workflow's history short: continue-as-new once Temporal suggests it
or the history passes the workflow's own limit, after every signal and update handler has
finished (so none is lost across the new run). The same step moves one of the cluster's own
workflows to another task queue when its worker asks (:class:`QueueMove`)."""

from __future__ import annotations

from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from models import contract


def too_long(limit: int) -> bool:
    info = workflow.info()
    return info.is_continue_as_new_suggested() or info.get_current_history_length() > limit


async def continue_if_long(limit: int, carried: Any, task_queue: str = "") -> None:
    """Continue as new with ``carried`` as the input when the history is too long, or on
    ``task_queue`` when one is given (a new run there keeps everything ``carried`` holds)."""
    if task_queue or too_long(limit):
        await workflow.wait_condition(workflow.all_handlers_finished)
        workflow.continue_as_new(carried, task_queue=task_queue or None)


class QueueMove:
    """A cluster workflow that its worker can move to another task queue.

    The provisioner, disruption and garbage-collection workflows run on a queue of their own
    (``contract.cluster_workflows_queue``); runs started before that lived on the lifecycles'
    queue, and a run keeps its queue across continue-as-new. The worker signals the queue it
    wants; the workflow continues as new there at the end of its current step, carrying its
    state (the provisioner's ``joinery pause`` state among it).
    """

    move_to: str = ""

    @workflow.signal(name=contract.SIGNAL_MOVE_TO_QUEUE)
    def move_to_queue(self, task_queue: str) -> None:
        if task_queue and task_queue != workflow.info().task_queue:
            self.move_to = task_queue
