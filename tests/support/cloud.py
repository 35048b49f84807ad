"""The emulated cloud the activity and worker tests share: ``Cloud`` and its ``cloud``
fixture (moto in this process, the EC2 emulation installed, one region seeded once).

Register the fixture in one conftest only: moto's backends and the emulation's patches are
global to the process, so two instances of it would seed and patch the same state twice.
"""

from __future__ import annotations

import os

os.environ.setdefault("MOTO_EC2_LOAD_DEFAULT_AMIS", "false")
os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from activities.ec2.catalog import RawCatalog, fetch_raw_catalog
from activities.ec2.clients import AWSClients
from activities.ec2.pricing import PricingProvider
from activities.ec2.provider import EC2Provider
from activities.ec2.settings import ClusterInfo, ProviderSettings
from sandbox import fleet_checks
from sandbox.ec2.emulation import Emulation, install, uninstall
from sandbox.ec2.seed import seed_region
from sandbox.ec2.server import MotoServer, start_server

REGION = "us-east-1"
CLUSTER = "wf-cluster"


@dataclass
class Cloud:
    server: MotoServer
    emulation: Emulation
    clients: AWSClients
    provider: EC2Provider
    raw: RawCatalog
    prices: tuple[dict[str, float], dict[tuple[str, str], float], str]

    def fresh_provider(self) -> EC2Provider:
        """Another provider on the same emulated account (a restarted worker's view)."""
        provider = EC2Provider.create(
            ProviderSettings(REGION, ClusterInfo(CLUSTER, "https://k8s.example", "Q0E=")),
            AWSClients.create(REGION, self.server.endpoint_url, self.server.session()),
        )
        provider.catalog.use_raw(self.raw)
        provider.pricing.load(*self.prices)
        return provider

    def instances_of(self, nodeclaim: str) -> list[str]:
        """Ids of live instances tagged with ``nodeclaim``."""
        return [
            str(i["InstanceId"])
            for i in self.live_instances()
            if {"Key": "karpenter.sh/nodeclaim", "Value": nodeclaim} in i.get("Tags", [])
        ]

    def live_instances(self) -> list[dict[str, Any]]:
        return [
            i
            for i in fleet_checks.every_instance(self.clients.ec2)
            if i["State"]["Name"] not in fleet_checks.GONE
        ]


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
