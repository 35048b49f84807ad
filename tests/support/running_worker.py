"""The whole worker against the shared real parts, for as long as a test needs it: the one
way the integration tests run it (each test file's fixture picks its settings)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from activities.kubernetes import nodeclaims
from activities.kubernetes.client import Kube
from sandbox.nodes import NodeSimulator
from tests.support.cloud import Cloud
from tests.support.kube_objects import condition, ensure_nodeclass
from worker.running.app import run_worker
from worker.running.settings import Settings, TemporalSettings


@asynccontextmanager
async def worker_running(
    env: WorkflowEnvironment,
    kube: Kube,
    admin: Kube,
    cloud: Cloud,
    cluster: str = "",
    client: Client | None = None,
    **settings: Any,
) -> AsyncIterator[tuple[Client, str, str]]:
    """Yields (client, cluster, task queue) while a worker runs for ``cluster`` (default: a
    fresh name), on ``client`` (default: the environment's; a second worker of one queue in
    this process needs its own connection)."""
    ensure_nodeclass(admin)
    cluster = cluster or f"it-{uuid.uuid4().hex[:6]}"
    queue = f"q-{cluster}"
    configured = Settings(
        TemporalSettings(task_queue=queue),
        cluster=cluster,
        # a round's decision holds 2 s, not Karpenter's 15: the tests wait out every round
        **{
            "health_port": 0,
            "search_attributes": True,
            "disruption_validation_delay": 2.0,
            **settings,
        },
    )
    stop = asyncio.Event()
    client = client or env.client
    task = asyncio.create_task(
        run_worker(configured, stop=stop, kube=kube, cloud=cloud.provider, client=client)
    )
    with NodeSimulator(admin, interval=0.2):
        try:
            yield client, cluster, queue
        finally:
            # Also when the test failed: a worker left running kept the session's teardown
            # waiting, so a failure showed as a hang, never as its report.
            stop.set()
            # Shutting down waits for the worker's running activities: a sync activity
            # notices the cancel only at its next heartbeat or call, and on a slow, loaded
            # machine one worker's shutdown once took past 30 s (a CI run, session 21). A
            # hang still fails.
            await asyncio.wait_for(task, 90)


def claim_ready(admin: Kube, name: str) -> bool:
    c = condition(nodeclaims.get(admin, name), "Ready")
    return bool(c and c["status"] == "True")
