"""The worker takes few workflow tasks at once (``worker.tuning.WORKFLOW_TASK_SLOTS``).

The SDK builds a new run's sandbox on the worker's event loop, about 0.2 s of CPU each for a
NodeClaim run on this machine; with the SDK's default of 100 slots, a burst of 100 new
lifecycles held the loop long enough for the tasks behind it to pass the 10 s workflow task
timeout, and each timed-out task rebuilt its sandbox again. The behaviour is exercised by
``tests/workflows/production/test_prod_engine_faults.py`` (100 lifecycles and a server
SIGKILL); this pins the setting that bounds it.
"""

from __future__ import annotations

from unittest.mock import MagicMock

import pytest
from temporalio.testing import WorkflowEnvironment

from activities.lifecycle.common import Deps
from worker.app import build_worker
from worker.tuning import WORKFLOW_TASK_SLOTS

pytestmark = pytest.mark.asyncio(loop_scope="session")

# One slot's sandbox build (~0.2 s of CPU) times the slots must stay well inside the 10 s
# workflow task timeout even when the worker gets a fraction of a core.
SANDBOX_BUILD_SECONDS = 0.2
TASK_TIMEOUT_SECONDS = 10


async def test_the_worker_holds_few_workflow_tasks_at_once(
    dev_env: WorkflowEnvironment, task_queue: str
) -> None:
    worker = build_worker(dev_env.client, Deps(kube=MagicMock()), task_queue)
    assert worker.config()["max_concurrent_workflow_tasks"] == WORKFLOW_TASK_SLOTS
    # still inside the timeout with a quarter of a core
    assert WORKFLOW_TASK_SLOTS * SANDBOX_BUILD_SECONDS * 4 < TASK_TIMEOUT_SECONDS
