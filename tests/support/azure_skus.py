"""The emulator's seeded Resource SKUs read straight from the data file (not through the
emulator or the catalog code), and the provider's rules restated by hand: the tests' oracle
for which SKUs an Azure catalog lists and with what."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

SEED_FILE = Path(__file__).resolve().parents[2] / "sandbox/azure/data/azure-resource-skus.json"

# AKS's and Karpenter's refused sizes, and AKS's GPU sizes among the seed's (from the
# provider's lists, written out here so the tests do not read the code's table).
REFUSED = {"Standard_A0", "Standard_A1", "Standard_B1s", "Standard_B1ms", "Standard_F1"}
AKS_GPU_SIZES = {"Standard_NC6s_v3", "Standard_NC16as_T4_v3", "Standard_NC24ads_A100_v4"}


@cache
def _items() -> tuple[dict[str, Any], ...]:
    return tuple(json.loads(SEED_FILE.read_text())["value"])


def seed_items() -> list[dict[str, Any]]:
    return list(_items())


def caps(item: dict[str, Any]) -> dict[str, str]:
    return {c["name"]: c["value"] for c in item["capabilities"]}


def seed_item(region: str, name: str) -> dict[str, Any]:
    (item,) = [s for s in _items() if s["name"] == name and region in s["locations"]]
    return item


def expected_names(region: str) -> set[str]:
    """The provider's rules, restated: a usable VM of at least 2 vCPUs and 3.5 GiB, not
    region-restricted, refused, confidential (DC/EC), vCPU-constrained (a dash) or an
    unsupported GPU size."""
    out = set()
    for item in _items():
        if region not in item["locations"] or item["resourceType"] != "virtualMachines":
            continue
        c = caps(item)
        if int(c["vCPUs"]) < 2 or float(c["MemoryGB"]) < 3.5:
            continue
        if any(r["type"] == "Location" for r in item["restrictions"]):
            continue
        size = item["size"]
        if item["name"] in REFUSED or size.startswith(("DC", "EC")) or "-" in size:
            continue
        if int(c.get("GPUs", "0")) > 0 and item["name"] not in AKS_GPU_SIZES:
            continue
        out.add(item["name"])
    return out
