"""Karpenter's settings reach the catalog through the worker's own path (flags and
environment -> Settings -> the EC2 provider ``joinery worker`` builds)."""

from __future__ import annotations

from typing import Any

import pytest

from activities.ec2.provider import EC2Provider
from models.resources import render
from tests.component.ec2.conftest import REGION, SessionCatalog
from worker.cli import worker_command
from worker.cli.command import build_parser
from worker.running import app
from worker.running import karpenter_settings as K
from worker.running.settings import Settings


def worker_settings(endpoint: str, *argv: str) -> Settings:
    args = build_parser(["worker"]).parse_args(
        ["worker", "--region", REGION, "--aws-endpoint-url", endpoint, *argv]
    )
    return worker_command.settings_from(args)


def clean(monkeypatch: pytest.MonkeyPatch) -> None:
    """No Karpenter or JOINERY_ setting from the environment running the tests."""
    for setting in K.SETTINGS:
        for var in (setting.env, setting.joinery_env):
            if var:
                monkeypatch.delenv(var, raising=False)


def m5_large(settings: Settings, session_catalog: SessionCatalog) -> Any:
    provider = EC2Provider.from_options(app.provider_options(settings))
    provider.catalog.use_raw(session_catalog.raw)
    provider.pricing.load(session_catalog.on_demand, session_catalog.spot, session_catalog.source)
    return next(t for t in provider.instance_types() if t.name == "m5.large")


def test_reserved_enis_and_vm_overhead_change_the_workers_catalog(
    env: Any, session_catalog: SessionCatalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    clean(monkeypatch)
    endpoint = env.server.endpoint_url
    plain = m5_large(worker_settings(endpoint), session_catalog)
    # m5.large: 3 ENIs x (10 IPs - 1) + 2 = 29 pods; 8192 MiB less 7.5% = 7577 MiB
    assert render(plain.capacity)["pods"] == "29"
    assert render(plain.capacity)["memory"] == "7577Mi"

    monkeypatch.setenv("RESERVED_ENIS", "1")
    monkeypatch.setenv("VM_MEMORY_OVERHEAD_PERCENT", "0.1")
    tuned = m5_large(worker_settings(endpoint), session_catalog)
    # one ENI reserved: 2 x 9 + 2 = 20 pods; 8192 - ceil(819.2) = 7372 MiB
    assert render(tuned.capacity)["pods"] == "20"
    assert render(tuned.capacity)["memory"] == "7372Mi"
    # kube-reserved memory follows the pods: 11 x 20 + 255 = 475Mi, + 100Mi eviction
    assert render(tuned.overhead)["memory"] == "575Mi"


def test_isolated_vpc_never_asks_the_pricing_api(monkeypatch: pytest.MonkeyPatch) -> None:
    """Against AWS itself (no emulator endpoint) the worker asks the Pricing API, unless
    ISOLATED_VPC: then on-demand prices come from the offline table. Nothing is called here:
    the provider is only built."""

    def pricing_client(isolated: str) -> Any:
        monkeypatch.setenv("ISOLATED_VPC", isolated)
        args = build_parser(["worker"]).parse_args(["worker", "--region", REGION])
        settings = worker_command.settings_from(args)
        return EC2Provider.from_options(app.provider_options(settings)).pricing._pricing

    assert pricing_client("false") is not None
    assert pricing_client("true") is None


def test_the_shorter_refresh_interval_is_how_long_a_resolved_nodeclass_serves(
    env: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """AMI_REFRESH_INTERVAL and SUBNET_REFRESH_INTERVAL reach the provider's cache of resolved
    EC2NodeClasses (whose expiry test_ec2_nodeclass_cache.py shows) as the shorter of the two."""
    clean(monkeypatch)

    def ttl() -> float:
        provider = EC2Provider.from_options(
            app.provider_options(worker_settings(env.server.endpoint_url))
        )
        return float(provider.nodeclasses._ttl)

    assert ttl() == 60.0  # Karpenter's 1m
    monkeypatch.setenv("AMI_REFRESH_INTERVAL", "10m")
    monkeypatch.setenv("SUBNET_REFRESH_INTERVAL", "3m")
    assert ttl() == 180.0
    monkeypatch.setenv("SUBNET_REFRESH_INTERVAL", "1h")
    assert ttl() == 600.0


def test_interruption_handling_follows_the_interruption_queue_setting(
    env: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No INTERRUPTION_QUEUE: the worker's provider has no queue to poll. Given one, the queue
    it polls is that SQS queue, found by name."""
    clean(monkeypatch)
    endpoint = env.server.endpoint_url

    def queue() -> Any:
        provider = EC2Provider.from_options(app.provider_options(worker_settings(endpoint)))
        return provider.interruption_queue()

    assert queue() is None
    url = env.clients.sqs.create_queue(QueueName="prod-east")["QueueUrl"]
    monkeypatch.setenv("INTERRUPTION_QUEUE", "prod-east")
    polled = queue()
    assert polled is not None and polled.url == url
