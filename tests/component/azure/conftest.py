"""One Azure emulator per session, driven by the real SDK; each test starts with no faults,
the default page sizes and the seed's prices."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from azure.mgmt.compute import ComputeManagementClient

from activities.azure.clients import compute_client, network_client
from sandbox.azure.credential import FakeCredential
from sandbox.azure.server import AzureServer, start_server

SUBSCRIPTION = "00000000-0000-0000-0000-000000000000"


@pytest.fixture(scope="session")
def azure_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AzureServer]:
    server = start_server(certs_dir=Path(tmp_path_factory.mktemp("azure-certs")))
    yield server
    server.stop()


@pytest.fixture
def azure(azure_server: AzureServer) -> Iterator[AzureServer]:
    emu = azure_server.emulator
    emu.requests.clear()  # each test reads the requests it made, not another file's
    yield azure_server
    emu.faults.clear()
    emu.arm.clear()
    emu.vms.clear()
    emu.nics.table.clear()
    emu.seed.extra_prices.clear()
    emu.sku_page_size, emu.price_page_size = 10, 1000


def _client_settings(azure: AzureServer) -> dict[str, Any]:
    """SDK client settings for tests: the emulator's endpoint and CA, short polls; the SDK's
    retry policy honours Retry-After, and its own backoff is kept short."""
    return {
        "endpoint": azure.endpoint,
        "credential": FakeCredential(),
        "ca_file": azure.ca_file,
        "retry_backoff_factor": 0.1,
        "polling_interval": 0.05,
    }


@pytest.fixture
def compute(azure: AzureServer) -> ComputeManagementClient:
    return compute_client(SUBSCRIPTION, **_client_settings(azure))


@pytest.fixture
def network(azure: AzureServer) -> Any:
    return network_client(SUBSCRIPTION, **_client_settings(azure))
