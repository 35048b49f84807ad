"""Catalog load for one region once the API calls have returned (target: under 2 s).

Runs against the in-process emulator (moto's copy of us-east-1: ~1,330 types x 6 zones), times
the API calls separately, then the build alone: cold (every type computed) and warm (per-type
parts memoised, only offerings rebuilt, as after a price or capacity change).

    .venv/bin/python benchmarks/catalog.py
"""

from __future__ import annotations

import os
import time

os.environ.setdefault("MOTO_EC2_LOAD_DEFAULT_AMIS", "false")

from activities.ec2.capacity_cache import UnavailableOfferings
from activities.ec2.catalog import (
    CatalogOptions,
    StaticParts,
    build_catalog,
    fetch_raw_catalog,
)
from activities.ec2.clients import AWSClients
from activities.ec2.pricing import PricingProvider
from activities.ec2.settings import ProviderSettings
from sandbox.ec2.emulation import install
from sandbox.ec2.server import start_server

REGION = "us-east-1"
TARGET_SECONDS = 2.0


def main() -> int:
    server = start_server()
    install()
    try:
        clients = AWSClients.create(REGION, server.endpoint_url, server.session())
        t0 = time.perf_counter()
        raw = fetch_raw_catalog(clients.ec2)
        pricing = PricingProvider(REGION, clients.ec2, None)
        pricing.refresh()
        api = time.perf_counter() - t0
        opts = CatalogOptions.for_nodeclass(ProviderSettings(region=REGION), None)
        unavailable = UnavailableOfferings()
        statics: dict[str, StaticParts] = {}
        t1 = time.perf_counter()
        types = build_catalog(raw, pricing, unavailable, opts, statics)
        cold = time.perf_counter() - t1
        t2 = time.perf_counter()
        build_catalog(raw, pricing, unavailable, opts, statics)
        warm = time.perf_counter() - t2
    finally:
        server.stop()
    offerings = sum(len(t.offerings) for t in types)
    zones = len(raw.region_zones)
    print(f"region {REGION}: {len(types)} instance types, {zones} zones, {offerings} offerings")
    print(f"API calls (emulator):      {api:6.2f} s")
    print(f"catalog build, cold:       {cold:6.3f} s  (target < {TARGET_SECONDS:.0f} s)")
    print(f"catalog build, warm:       {warm:6.3f} s")
    return 0 if cold < TARGET_SECONDS else 1


if __name__ == "__main__":
    raise SystemExit(main())
