"""The production tier: the same worker against ``temporal-server`` on PostgreSQL.

One server per session (``sandbox.temporal_server``), shared by the tests here as the dev
server is shared by the workflow tests: each test runs its own worker on its own task queue,
with its own cluster name and NodePool, against the control plane and emulated EC2 of
``tests/workflows/conftest.py``. These tests carry the ``production`` marker
(``pytest -m production``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio
from temporalio.client import Client

from activities.kubernetes.client import Kube
from sandbox.nodes import NodeSimulator
from sandbox.temporal_server import ProductionTemporal
from tests.support.cloud import Cloud
from tests.support.kube_objects import ensure_nodeclass
from tests.support.prod_worker import RunningWorker, joinery_worker


@pytest.fixture(scope="session")
def production_temporal() -> Iterator[ProductionTemporal]:
    with ProductionTemporal.start() as temporal:
        yield temporal


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def prod_client(production_temporal: ProductionTemporal) -> Client:
    return await Client.connect(
        production_temporal.address, namespace=production_temporal.namespace
    )


@pytest_asyncio.fixture(loop_scope="session")
async def prod_worker(
    prod_client: Client, kube: Kube, admin: Kube, cloud: Cloud
) -> AsyncIterator[RunningWorker]:
    ensure_nodeclass(admin)
    with NodeSimulator(admin, interval=0.2):
        async with joinery_worker(prod_client, kube, cloud) as running:
            yield running
