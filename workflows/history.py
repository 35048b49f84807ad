"""Keeping a long-running workflow's history short: continue-as-new once Temporal suggests it
or the history passes the workflow's own limit, after every signal and update handler has
finished (so none is lost across the new run)."""

from __future__ import annotations

from typing import Any

from temporalio import workflow


def too_long(limit: int) -> bool:
    info = workflow.info()
    return info.is_continue_as_new_suggested() or info.get_current_history_length() > limit


async def continue_if_long(limit: int, carried: Any) -> None:
    """Continue as new with ``carried`` as the input when the history is too long."""
    if too_long(limit):
        await workflow.wait_condition(workflow.all_handlers_finished)
        workflow.continue_as_new(carried)
