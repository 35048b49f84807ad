"""Shared Temporal environments for the workflow tests.

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


# -- real parts for activity and integration tests (started only when a test asks) ----------

import os  # noqa: E402

os.environ.setdefault("MOTO_EC2_LOAD_DEFAULT_AMIS", "false")
os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")

from collections.abc import Iterator  # noqa: E402

from workflow_realparts import CLUSTER, REGION, Cloud  # noqa: E402

from activities.ec2.catalog import fetch_raw_catalog  # noqa: E402
from activities.ec2.clients import AWSClients  # noqa: E402
from activities.ec2.pricing import PricingProvider  # noqa: E402
from activities.kubernetes.client import Kube, from_kubeconfig  # noqa: E402
from sandbox.cluster import Cluster  # noqa: E402
from sandbox.ec2.emulation import Emulation, install, uninstall  # noqa: E402
from sandbox.ec2.seed import seed_region  # noqa: E402
from sandbox.ec2.server import start_server  # noqa: E402


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with Cluster.start(tmp_path_factory.mktemp("k8s")) as running:
        yield running


@pytest.fixture(scope="session")
def kube(cluster: Cluster) -> Iterator[Kube]:
    """Joinery's own identity (deploy/rbac), as the worker runs."""
    client = from_kubeconfig(cluster.kubeconfig_path)
    yield client
    client.close()


@pytest.fixture(scope="session")
def admin(cluster: Cluster) -> Iterator[Kube]:
    client = from_kubeconfig(cluster.admin_kubeconfig_path)
    yield client
    client.close()


@pytest.fixture(scope="session")
def cloud() -> Iterator[Cloud]:
    server = start_server()
    emulation = install(Emulation())
    clients = AWSClients.create(REGION, server.endpoint_url, server.session())
    seed_region(clients.ec2, REGION, CLUSTER)
    raw = fetch_raw_catalog(clients.ec2)
    pricing = PricingProvider(REGION, clients.ec2, clients.pricing)
    pricing.refresh()
    prices = pricing.snapshot()
    made = Cloud(server, emulation, clients, None, raw, prices)  # type: ignore[arg-type]
    made.provider = made.fresh_provider()
    yield made
    uninstall()
    server.stop()
