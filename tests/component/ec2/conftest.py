"""One moto server per session; fresh, seeded state per test (reset is milliseconds).

DescribeInstanceTypes and the spot price history are large and never change inside moto, so
they are fetched once per session and handed to each test's provider.
"""

from __future__ import annotations

import os

os.environ.setdefault("MOTO_EC2_LOAD_DEFAULT_AMIS", "false")
# The CLI builds its own boto3 session; moto accepts any credentials but boto3 needs some.
os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from botocore.config import Config

from activities.ec2.catalog import RawCatalog, fetch_raw_catalog
from activities.ec2.clients import AWSClients
from activities.ec2.launch_types import LaunchRequest
from activities.ec2.pricing import PricingProvider
from activities.ec2.provider import EC2Provider
from activities.ec2.settings import ClusterInfo, ProviderSettings
from models.ec2nodeclass import EC2NodeClass
from sandbox.ec2.emulation import Emulation, install, uninstall
from sandbox.ec2.seed import SeededRegion, seed_region
from sandbox.ec2.server import MotoServer, start_server

REGION = "us-east-1"
CLUSTER = "test-cluster"


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture(scope="session")
def moto_server() -> Iterator[MotoServer]:
    server = start_server()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def emulation(moto_server: MotoServer) -> Iterator[Emulation]:
    emu = install(Emulation())
    yield emu
    uninstall()


@dataclass
class SessionCatalog:
    raw: RawCatalog
    on_demand: dict[str, float]
    spot: dict[tuple[str, str], float]
    source: str


@pytest.fixture(scope="session")
def session_catalog(moto_server: MotoServer, emulation: Emulation) -> SessionCatalog:
    # moto builds the whole DescribeInstanceTypes answer per page in pure Python: on a loaded
    # machine one page took longer than the provider's 30 s read timeout, and every EC2 test
    # of the session failed in this fixture. The catalog is the tests' input, not under test.
    patient = Config(retries={"max_attempts": 5, "mode": "standard"}, read_timeout=300)
    clients = AWSClients.create(REGION, moto_server.endpoint_url, moto_server.session(), patient)
    raw = fetch_raw_catalog(clients.ec2)
    pricing = PricingProvider(REGION, clients.ec2, clients.pricing)
    pricing.refresh()
    od, spot, source = pricing.snapshot()
    return SessionCatalog(raw, od, spot, source)


@dataclass
class Env:
    server: MotoServer
    emulation: Emulation
    clients: AWSClients
    seeded: SeededRegion
    provider: EC2Provider
    clock: FakeClock
    settings: ProviderSettings


def make_settings() -> ProviderSettings:
    return ProviderSettings(
        region=REGION,
        cluster=ClusterInfo(CLUSTER, "https://k8s.example", "Q0E=", "10.100.0.0/16"),
    )


@pytest.fixture
def env(moto_server: MotoServer, emulation: Emulation, session_catalog: SessionCatalog) -> Env:
    moto_server.reset()
    emulation.reset()
    clients = AWSClients.create(REGION, moto_server.endpoint_url, moto_server.session())
    seeded = seed_region(clients.ec2, REGION, CLUSTER)
    clock = FakeClock()
    settings = make_settings()
    provider = EC2Provider.create(settings, clients, clock=clock)
    provider.catalog.use_raw(session_catalog.raw)
    provider.pricing.load(session_catalog.on_demand, session_catalog.spot, session_catalog.source)
    return Env(moto_server, emulation, clients, seeded, provider, clock, settings)


def nodeclass(name: str = "default", **spec: object) -> EC2NodeClass:
    body: dict[str, object] = {
        "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": CLUSTER}}],
        "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": CLUSTER}}],
        "amiSelectorTerms": [{"alias": "al2023@latest"}],
        "role": "KarpenterNodeRole",
    }
    body.update(spec)
    return EC2NodeClass.model_validate(
        {
            "apiVersion": "karpenter.k8s.aws/v1",
            "kind": "EC2NodeClass",
            "metadata": {"name": name},
            "spec": body,
        }
    )


@pytest.fixture
def make_nodeclass() -> type[NodeClassFactory]:
    return NodeClassFactory


class NodeClassFactory:
    """``make_nodeclass.build(name, **spec)``: a discovery-tag NodeClass with overrides."""

    @staticmethod
    def build(name: str = "default", **spec: object) -> EC2NodeClass:
        return nodeclass(name, **spec)


M5_LARGE_ON_DEMAND = (
    {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large"]},
    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
)


class RequestFactory:
    """``make_request.build(name, **fields)``: a LaunchRequest for one on-demand m5.large."""

    @staticmethod
    def build(name: str, **fields: Any) -> LaunchRequest:
        body: dict[str, Any] = {
            "nodeclaim_name": name,
            "nodeclaim_uid": f"uid-{name}",
            "nodepool_name": "default",
            "nodeclass_name": "default",
            "requirements": list(M5_LARGE_ON_DEMAND),
            "resources": {"cpu": "1"},
        }
        body.update(fields)
        return LaunchRequest(**body)


@pytest.fixture
def make_request() -> type[RequestFactory]:
    return RequestFactory
