"""Shared Temporal environments for the workflow tests, and the real parts (control plane,
emulated EC2) that the activity and integration tests start only when a test asks.

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

from tests.support.activity_deps import deps, deps_pool
from tests.support.cloud import cloud
from tests.support.control_plane import admin, cluster, kube
from workflows import search

__all__ = ["admin", "cloud", "cluster", "deps", "deps_pool", "kube"]

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
