"""What the emulator starts with: Resource SKUs of three regions and the locations list
(facts from Karpenter Azure's recorded fixtures, ``data/``), and on-demand prices from the
provider's bundled table. A test adds or changes any of it through :class:`AzureSeed`."""

from __future__ import annotations

import copy
import json
import zlib
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from activities.azure.pricing import offline_table

SEEDED_REGIONS = ("eastus", "southcentralus", "westcentralus")


@cache
def _load(name: str) -> dict[str, Any]:
    text = resources.files("sandbox.azure").joinpath(f"data/{name}").read_text()
    data: dict[str, Any] = json.loads(text)
    return data


def seed_skus() -> list[dict[str, Any]]:
    """Resource SKU items (REST field names), each listing the one location it is for."""
    return copy.deepcopy(_load("azure-resource-skus.json")["value"])


def seed_locations() -> list[dict[str, Any]]:
    return copy.deepcopy(_load("azure-locations.json")["value"])


def retail_item(region: str, size: str, price: float, *, spot: bool = False) -> dict[str, Any]:
    """One Retail Prices API item for a Linux VM meter, in the API's field names."""
    short = size.removeprefix("Standard_").replace("_", " ")
    sku_name = f"{short} Spot" if spot else short
    return {
        "currencyCode": "USD",
        "tierMinimumUnits": 0.0,
        "retailPrice": price,
        "unitPrice": price,
        "armRegionName": region,
        "location": region,
        "effectiveStartDate": "2026-01-01T00:00:00Z",
        "meterId": f"meter-{region}-{sku_name.replace(' ', '-').lower()}",
        "meterName": sku_name,
        "productId": f"DZH318Z0{zlib.crc32(size.encode()) % 10**6:06d}",
        "skuId": f"DZH318Z0/{short.replace(' ', '')}",
        "productName": f"Virtual Machines {size.split('_')[1] if '_' in size else size} Series",
        "skuName": sku_name,
        "serviceName": "Virtual Machines",
        "serviceId": "DZH313Z7MMC8",
        "serviceFamily": "Compute",
        "unitOfMeasure": "1 Hour",
        "type": "Consumption",
        "isPrimaryMeterRegion": True,
        "armSkuName": size,
    }


@dataclass
class AzureSeed:
    """The emulator's state: SKU items, locations and Retail Prices items per region."""

    skus: list[dict[str, Any]] = field(default_factory=seed_skus)
    locations: list[dict[str, Any]] = field(default_factory=seed_locations)
    extra_prices: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def skus_in(self, region: str) -> list[dict[str, Any]]:
        return [s for s in self.skus if region in s.get("locations", [])]

    def prices_in(self, region: str) -> list[dict[str, Any]]:
        """On-demand meters of every size the bundled table prices, then injected items."""
        table = offline_table().get(region, {})
        items = [retail_item(region, size, price) for size, price in sorted(table.items())]
        return items + self.extra_prices.get(region, [])

    def add_price_items(self, region: str, items: list[dict[str, Any]]) -> None:
        self.extra_prices.setdefault(region, []).extend(items)
