"""Shared Temporal environments for the workflow tests (the real parts, control plane and
emulated EC2, are tests/conftest.py's, started only when a test asks).

One time-skipping test server (timers) and one dev server (search attributes, queries,
listing) per session; tests use their own task queues and workflow ids so they can share them.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from temporalio.testing import WorkflowEnvironment

from workflows import search

BIN = Path(sys.executable).parent


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def time_env() -> AsyncIterator[WorkflowEnvironment]:
    env = await WorkflowEnvironment.start_time_skipping(
        test_server_existing_path=str(BIN / "temporal-test-server")
    )
    yield env
    await env.shutdown()


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def dev_env() -> AsyncIterator[WorkflowEnvironment]:
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=str(BIN / "temporal"),
        search_attributes=list(search.ALL),
        dev_server_log_level="error",
    )
    yield env
    await env.shutdown()


@pytest.fixture
def task_queue() -> str:
    return f"tq-{uuid.uuid4().hex[:8]}"
