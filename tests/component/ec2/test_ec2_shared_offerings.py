"""Two worker replicas share the insufficient-capacity record through a real API server.

Replica A hits InsufficientInstanceCapacity (moto + emulation) and records the pools; replica B,
with its own process-local cache, launches next and never sends a request to those pools.
The ConfigMap is written with Joinery's own service-account token (deploy/rbac).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from activities.ec2.clients import AWSClients
from activities.ec2.errors import Pool
from activities.ec2.provider import EC2Provider
from activities.ec2.shared_offerings import CONFIGMAP, ConfigMapRecord, key_pool, pool_key
from activities.kubernetes.client import Kube, from_kubeconfig
from sandbox.cluster import Cluster

REGION = "us-east-1"
NAMESPACE = "joinery"  # the worker's namespace in deploy/rbac


@pytest.fixture(scope="module")
def kube(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kube]:
    workdir: Path = tmp_path_factory.mktemp("k8s-offerings")
    with Cluster.start(workdir) as cluster:
        client = from_kubeconfig(cluster.kubeconfig_path)
        yield client
        client.close()


def replica(env: Any, catalog: Any, kube: Kube, name: str) -> EC2Provider:
    clients = AWSClients.create(REGION, env.server.endpoint_url, env.server.session())
    provider = EC2Provider.create(env.settings, clients, clock=env.clock)
    provider.catalog.use_raw(catalog.raw)
    provider.pricing.load(catalog.on_demand, catalog.spot, catalog.source)
    provider.unavailable.share(ConfigMapRecord(kube.core, NAMESPACE, name))
    return provider


def test_pool_keys_round_trip() -> None:
    for pool in (Pool("spot", "m5.large", "us-east-1a"), Pool("spot", "*", "*")):
        assert key_pool(pool_key(pool)) == pool


def test_a_replica_never_retries_a_pool_another_found_exhausted(
    env: Any, session_catalog: Any, make_nodeclass: Any, make_request: Any, kube: Kube
) -> None:
    name = f"{CONFIGMAP}-{env.clock.now:.0f}"
    a = replica(env, session_catalog, kube, name)
    b = replica(env, session_catalog, kube, name)
    nc = make_nodeclass.build()
    zones = sorted(env.seeded.network.subnets)
    for zone in zones[:-1]:  # m5.large on-demand is left in the last zone only
        env.emulation.inject_insufficient_capacity("on-demand", "m5.large", zone)
    first = a.launch(make_request.build("claim-a"), nc)
    assert first.zone == zones[-1]
    refused = env.emulation.fleet_calls[-1]["errors"]
    assert refused >= 2  # A learnt the hard way, pool by pool
    record = kube.core.read_namespaced_config_map(name, NAMESPACE).data
    assert {key_pool(k) for k in record} == set(a.unavailable.entries())
    assert len(record) == refused
    second = b.launch(make_request.build("claim-b"), nc)
    assert second.zone == zones[-1]
    assert env.emulation.fleet_calls[-1]["errors"] == 0  # B asked for the good pool only
    assert b.unavailable.is_unavailable("on-demand", "m5.large", zones[0])


def test_a_burst_of_launches_reads_the_record_once_a_second(
    env: Any, session_catalog: Any, make_nodeclass: Any, make_request: Any, kube: Kube
) -> None:
    env.emulation.clear_insufficient_capacity()  # what an earlier test left
    name = f"{CONFIGMAP}-burst-{env.clock.now:.0f}"
    a = replica(env, session_catalog, kube, name)
    b = replica(env, session_catalog, kube, name)
    reads: list[str] = []
    real_read = kube.core.read_namespaced_config_map

    def counted(cm: str, namespace: str, **kw: Any) -> Any:
        if cm == name:
            reads.append(cm)
            time.sleep(0.05)  # a slow API server: the other launches arrive meanwhile
        return real_read(cm, namespace, **kw)

    b.unavailable.share(ConfigMapRecord(_Counted(kube.core, counted), NAMESPACE, name))
    nc = make_nodeclass.build()
    with ThreadPoolExecutor(8) as pool:
        launched = list(
            pool.map(lambda i: b.launch(make_request.build(f"burst-{i}"), nc), range(8))
        )
    assert len({r.instance_id for r in launched}) == 8
    assert len(reads) == 1  # eight launches, one read of the record (single flight)

    # A refuses a pool and publishes it; within the second B has not read it yet ...
    zones = sorted(env.seeded.network.subnets)
    for zone in zones[:-1]:
        env.emulation.inject_insufficient_capacity("on-demand", "m5.large", zone)
    a.launch(make_request.build("burst-a"), nc)
    assert not b.unavailable.is_unavailable("on-demand", "m5.large", zones[0])
    # ... and CreateFleet's own refusals still steer B's launch to the pool that has room
    late = b.launch(make_request.build("burst-late"), nc)
    assert late.zone == zones[-1]
    refused = env.emulation.fleet_calls[-1]["errors"]
    assert refused >= 1  # B met the refusals itself ...
    assert len(reads) == 1 + refused  # ... and published each (a publish prunes: one read)
    # a second later the next launch reads the record again
    env.clock.advance(1.0)
    b.launch(make_request.build("burst-next"), nc)
    assert len(reads) == 2 + refused
    env.emulation.clear_insufficient_capacity()


class _Counted:
    """A CoreV1Api whose ConfigMap reads go through ``read``; everything else is the real one."""

    def __init__(self, core: Any, read: Any) -> None:
        self._core = core
        self.read_namespaced_config_map = read

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._core, attr)
