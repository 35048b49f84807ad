"""Shared Temporal environments for the workflow tests (the real parts, control plane and
emulated EC2, are tests/conftest.py's, started only when a test asks).

One time-skipping test server (timers) and one dev server (search attributes, queries,
listing) per session; tests use their own task queues and workflow ids so they can share them.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from temporalio.testing import WorkflowEnvironment

from tests.support.temporal_servers import start_dev_server, start_test_server


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def time_env() -> AsyncIterator[WorkflowEnvironment]:
    env = await start_test_server()
    yield env
    await env.shutdown()


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def dev_env() -> AsyncIterator[WorkflowEnvironment]:
    env = await start_dev_server()
    yield env
    await env.shutdown()


@pytest.fixture
def task_queue() -> str:
    return f"tq-{uuid.uuid4().hex[:8]}"
