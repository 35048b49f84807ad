"""The instance-types file Karpenter's kwok provider reads (``INSTANCE_TYPES_FILE_PATH``),
written from the catalog Joinery plans with, so both sides choose from one set of types,
offerings and prices.

The kwok provider's format (``kwok/cloudprovider/helpers.go`` in the karpenter module): a JSON
list of ``{name, offerings: [{Price, Available, Requirements: [capacity-type, zone]}],
architecture, operatingSystems, resources}``. It subtracts a fixed kube-reserved (100m CPU,
10Mi memory) from ``resources``; we add that back onto Joinery's allocatable, so a pod fits a
type on one side exactly when it fits on the other.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from models import labels as L
from models.instancetype import InstanceType

# what kwok's provider takes off every type's resources (helpers.go, newInstanceType)
KWOK_RESERVED_CPU_MILLI = 100
KWOK_RESERVED_MEMORY_BYTES = 10 * 1024 * 1024
REGION = "us-east-1"


def _single(it: InstanceType, key: str, default: str) -> str:
    req = it.requirements.get(key)
    values = sorted(req.values) if req is not None else []
    return values[0] if len(values) == 1 else default


def kwok_entry(it: InstanceType) -> dict[str, Any]:
    """One instance type as kwok's provider reads it; only available offerings."""
    cpu_milli = it.allocatable.get("cpu", 0) + KWOK_RESERVED_CPU_MILLI
    memory_bytes = it.allocatable.get("memory", 0) // 1000 + KWOK_RESERVED_MEMORY_BYTES
    pods = it.allocatable.get("pods", 110_000) // 1000
    return {
        "name": it.name,
        "offerings": [
            {
                "Price": o.price,
                "Available": True,
                "Requirements": [
                    {"key": L.CAPACITY_TYPE, "operator": "In", "values": [o.capacity_type]},
                    {"key": L.ZONE, "operator": "In", "values": [o.zone]},
                ],
            }
            for o in it.offerings
            if o.available
        ],
        "architecture": _single(it, L.ARCH, "amd64"),
        "operatingSystems": ["linux"],
        "resources": {"cpu": f"{cpu_milli}m", "memory": str(memory_bytes), "pods": str(pods)},
    }


def kwok_instance_types(types: Iterable[InstanceType]) -> list[dict[str, Any]]:
    """The file's content: every type with at least one available offering, sorted by name."""
    entries = (kwok_entry(it) for it in sorted(types, key=lambda t: t.name))
    return [e for e in entries if e["offerings"]]


def write(path: Path, types: Iterable[InstanceType]) -> int:
    """Write the file; returns how many types it holds."""
    entries = kwok_instance_types(types)
    path.write_text(json.dumps(entries, indent=1))
    return len(entries)


def emulated_catalog(region: str = REGION) -> list[InstanceType]:
    """The catalog a ``joinery dev`` worker builds from the EC2 emulator (types, zones,
    on-demand and spot prices), built here the way ``benchmarks/catalog.py`` builds it."""
    os.environ.setdefault("MOTO_EC2_LOAD_DEFAULT_AMIS", "false")
    from activities.ec2.capacity_cache import UnavailableOfferings
    from activities.ec2.catalog import CatalogOptions, build_catalog, fetch_raw_catalog
    from activities.ec2.clients import AWSClients
    from activities.ec2.pricing import PricingProvider
    from activities.ec2.settings import ProviderSettings
    from sandbox.ec2.emulation import install
    from sandbox.ec2.server import start_server

    server = start_server()
    install()
    try:
        clients = AWSClients.create(region, server.endpoint_url, server.session())
        raw = fetch_raw_catalog(clients.ec2)
        pricing = PricingProvider(region, clients.ec2, None)
        pricing.refresh()
        opts = CatalogOptions.for_nodeclass(ProviderSettings(region=region), None)
        return list(build_catalog(raw, pricing, UnavailableOfferings(), opts, {}))
    finally:
        server.stop()
