"""A Joinery worker run in-process for the production tier (and its /readyz)."""

from __future__ import annotations

import asyncio
import contextlib
import urllib.error
import urllib.request
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

from temporalio.client import Client

from activities.kubernetes.client import Kube
from sandbox.processes import free_ports
from tests.support.cloud import Cloud
from worker.running.app import run_worker
from worker.running.settings import Settings, TemporalSettings


@dataclass
class RunningWorker:
    client: Client
    cluster: str
    queue: str
    health_port: int

    def readyz(self) -> int:
        url = f"http://127.0.0.1:{self.health_port}/readyz"
        try:
            with urllib.request.urlopen(url, timeout=3) as response:
                return int(response.status)
        except urllib.error.HTTPError as exc:
            return int(exc.code)
        except urllib.error.URLError:
            return 0  # not listening yet (the worker is still starting)


@contextlib.asynccontextmanager
async def joinery_worker(
    client: Client, kube: Kube, cloud: Cloud, *, cluster: str | None = None
) -> AsyncIterator[RunningWorker]:
    """The whole worker (workflows, activities, watchers, provisioner) on ``client``."""
    cluster = cluster or f"prod-{uuid.uuid4().hex[:6]}"
    queue = f"q-{cluster}"
    (port,) = free_ports(1)
    settings = Settings(
        TemporalSettings(task_queue=queue),
        cluster=cluster,
        health_port=port,
        health_host="127.0.0.1",
        search_attributes=True,
    )
    stop = asyncio.Event()
    task = asyncio.create_task(
        run_worker(settings, stop=stop, kube=kube, cloud=cloud.provider, client=client)
    )
    try:
        yield RunningWorker(client, cluster, queue, port)
    finally:
        stop.set()
        await asyncio.wait_for(task, 60)
