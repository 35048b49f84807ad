"""Joinery against a Temporal that requires mutual TLS (as Temporal Cloud with mTLS and most
self-hosted clusters do): the worker's own connection settings (``--tls-cert``,
``--tls-key``, ``--tls-ca``) reach it and a NodeClaim lives and ends through it; without a
client certificate the worker refuses to start with one clear line."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from activities.kubernetes import nodeclaims, raw
from activities.kubernetes.client import Kube
from models import contract
from sandbox.nodes import NodeSimulator
from sandbox.temporal_server import ProductionTemporal
from tests.support.cloud import Cloud
from tests.support.kube_objects import condition, create_claim, ensure_nodeclass, ensure_nodepool
from tests.support.prod_worker import joinery_worker
from tests.support.waiting import until
from worker.running import connection
from worker.running.settings import TemporalSettings
from worker.usage import UsageError

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.production]


@pytest.fixture(scope="module")
def tls_temporal() -> Iterator[ProductionTemporal]:
    with ProductionTemporal.start(tls=True) as temporal:
        yield temporal


def settings(temporal: ProductionTemporal, *, client_cert: bool = True) -> TemporalSettings:
    certs = temporal.certs
    assert certs is not None
    return TemporalSettings(
        address=temporal.address,
        namespace=temporal.namespace,
        tls=True,
        tls_cert=str(certs.client_cert) if client_cert else "",
        tls_key=str(certs.client_key) if client_cert else "",
        tls_ca=str(certs.ca),
    )


async def test_a_lifecycle_through_mutual_tls(
    tls_temporal: ProductionTemporal, kube: Kube, admin: Kube, cloud: Cloud
) -> None:
    client = await connection.connect(settings(tls_temporal))
    ensure_nodeclass(admin)
    pool = f"tls-{uuid.uuid4().hex[:6]}"
    ensure_nodepool(admin, pool)
    name = f"{pool}-0"
    with NodeSimulator(admin, interval=0.2):
        async with joinery_worker(client, kube, cloud) as running:
            create_claim(admin, name, pool)

            def ready() -> bool:
                c = condition(nodeclaims.get(admin, name), "Ready")
                return bool(c and c["status"] == "True")

            await until(ready, timeout=120, what="claim Ready through mTLS")
            assert len(cloud.instances_of(name)) == 1
            assert running.readyz() == 200
            raw.call(
                admin.custom.delete_cluster_custom_object, "karpenter.sh", "v1", "nodeclaims", name
            )
            handle = client.get_workflow_handle(contract.nodeclaim_id(running.cluster, name))
            assert await handle.result() == "Terminated"
            assert cloud.instances_of(name) == []


async def test_without_a_client_certificate_the_worker_says_so(
    tls_temporal: ProductionTemporal,
) -> None:
    with pytest.raises(UsageError, match=f"cannot reach Temporal at {tls_temporal.address}"):
        await connection.connect(settings(tls_temporal, client_cert=False))
