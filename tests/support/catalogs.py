"""A small instance-type catalog in DESIGN.md's format, and its prices.

Zone a is the cheapest, so "the cheapest offering" is always well defined; ``TYPES`` is the
table the catalog and the price helpers read, so tests can compute what a plan should cost.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from tests.support.labels import ARCH, FAMILY, GENERATION, GPU, SIZE

ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")
ZA, ZB, ZC = ZONES
# Zone a is the cheapest, then b, then c (by a tenth of a cent), so "the cheapest zone" is
# always well defined.
ZONE_EXTRA = {ZA: 0.0, ZB: 0.001, ZC: 0.002}

# name: (cpu, memory, pods, arch, size, family, generation, on-demand, spot, zones, extra capacity)
TYPES: dict[str, tuple[Any, ...]] = {
    "c5.large": ("2", "4Gi", "29", "amd64", "small", "c5", "5", 0.085, 0.030, ZONES, {}),
    "m5.large": ("2", "8Gi", "29", "amd64", "small", "m5", "5", 0.096, 0.036, ZONES, {}),
    "c6i.xlarge": ("4", "8Gi", "58", "amd64", "medium", "c6i", "6", 0.170, 0.060, ZONES, {}),
    "m5.xlarge": ("4", "16Gi", "58", "amd64", "medium", "m5", "5", 0.192, 0.070, ZONES, {}),
    "m5.2xlarge": ("8", "32Gi", "58", "amd64", "large", "m5", "5", 0.384, 0.140, ZONES, {}),
    "r5.2xlarge": ("8", "64Gi", "58", "amd64", "large", "r5", "5", 0.504, 0.180, ZONES, {}),
    "m7i.4xlarge": ("16", "64Gi", "110", "amd64", "xlarge", "m7i", "7", 0.806, 0.300, ZONES, {}),
    "m6g.large": ("2", "8Gi", "29", "arm64", "small", "m6g", "6", 0.077, 0.029, ZONES, {}),
    "m6g.xlarge": ("4", "16Gi", "58", "arm64", "medium", "m6g", "6", 0.154, 0.055, ZONES, {}),
    "g4dn.xlarge": (
        "4",
        "16Gi",
        "29",
        "amd64",
        "medium",
        "g4dn",
        "4",
        0.526,
        0.200,
        (ZA, ZB),
        {GPU: "1"},
    ),
}


def od_price(name: str, zone: str = ZA) -> float:
    return round(TYPES[name][7] + ZONE_EXTRA[zone], 6)


def spot_price(name: str, zone: str = ZA) -> float:
    return round(TYPES[name][8] + ZONE_EXTRA[zone], 6)


def catalog(
    names: Iterable[str] | None = None,
    unavailable: Iterable[tuple[str, str, str]] = (),
    overhead: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The test catalog in DESIGN.md's format (optionally a subset, with unavailable offerings
    given as (type, zone, capacityType) and one overhead for every type)."""
    off = set(unavailable)
    entries = []
    for name in names if names is not None else TYPES:
        cpu, mem, pods, arch, size, family, gen, od, spot, zones, extra = TYPES[name]
        offerings = []
        for z in zones:
            for ct, base in (("on-demand", od), ("spot", spot)):
                o: dict[str, Any] = {
                    "zone": z,
                    "capacityType": ct,
                    "price": round(base + ZONE_EXTRA[z], 6),
                }
                if (name, z, ct) in off:
                    o["available"] = False
                offerings.append(o)
        entry: dict[str, Any] = {
            "name": name,
            "capacity": {"cpu": cpu, "memory": mem, "pods": pods, **extra},
            "requirements": [
                {"key": ARCH, "operator": "In", "values": [arch]},
                {"key": SIZE, "operator": "In", "values": [size]},
                {"key": FAMILY, "operator": "In", "values": [family]},
                {"key": GENERATION, "operator": "In", "values": [gen]},
            ],
            "offerings": offerings,
        }
        if overhead:
            entry["overhead"] = dict(overhead)
        entries.append(entry)
    return {"instanceTypes": entries}


def types_with(**labels: str) -> list[str]:
    """Catalog type names whose custom labels match (arch=..., size=..., family=...)."""
    idx = {"arch": 3, "size": 4, "family": 5, "generation": 6}
    return [n for n, t in TYPES.items() if all(t[idx[k]] == v for k, v in labels.items())]


def sized_catalog(sizes: Mapping[str, tuple[str, str, float]]) -> dict[str, Any]:
    """A catalog of plain types, ``name: (cpu, memory, on-demand price)``, the same price in
    every zone: what a disruption test needs to make one merge cheaper than another."""
    return {
        "instanceTypes": [
            {
                "name": name,
                "capacity": {"cpu": cpu, "memory": mem, "pods": "50"},
                "offerings": [
                    {"zone": z, "capacityType": "on-demand", "price": price} for z in ZONES
                ],
            }
            for name, (cpu, mem, price) in sizes.items()
        ]
    }
