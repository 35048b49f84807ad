"""Prices from the emulated Retail Prices API (paged), and the bundled table when the API
does not answer."""

from __future__ import annotations

import json
from importlib import resources

from activities.azure.pricing import (
    MISSING_PRICE,
    OFFLINE,
    RETAIL_API,
    AzurePricing,
    url_fetcher,
)
from sandbox.azure.seed import retail_item
from sandbox.azure.server import AzureServer


def _bundled(region: str) -> dict[str, float]:
    """The package's price table, read directly (not through the code under test)."""
    text = resources.files("activities.azure").joinpath("data/azure-vm-prices.json").read_text()
    return {k: float(v) for k, v in json.loads(text)["regions"][region].items()}


def test_prices_from_the_retail_api_across_pages(azure: AzureServer) -> None:
    emu = azure.emulator
    emu.price_page_size = 250
    emu.seed.add_price_items(
        "eastus",
        [
            retail_item("eastus", "Standard_D2_v5", 0.0123, spot=True),
            # Windows licence and Low Priority meters are not Linux pay-as-you-go prices.
            {**retail_item("eastus", "Standard_D2_v5", 5.0), "productName": "Dv5 Windows"},
            {**retail_item("eastus", "Standard_D2_v5", 0.01), "meterName": "D2 v5 Low Priority"},
        ],
    )
    before = len(emu.requests)
    pricing = AzurePricing(
        "eastus", fetch=url_fetcher(azure.ca_file), endpoint=azure.retail_prices_url
    )
    assert pricing.refresh() == RETAIL_API and not pricing.problems
    table = _bundled("eastus")
    pages = -(-(len(table) + 3) // 250)
    assert len(emu.requests) - before == pages > 1
    assert pricing.on_demand("Standard_D2_v5") == table["Standard_D2_v5"]
    assert pricing.spot("Standard_D2_v5") == 0.0123
    assert pricing.on_demand("Standard_D4s_v3") == table["Standard_D4s_v3"]
    # The filter sent is the provider's: consumption VM meters of the region, in USD.
    first = emu.requests[before][1]
    assert "armRegionName%20eq%20%27eastus%27" in first and "priceType%20eq" in first


def test_api_failure_keeps_the_bundled_table_and_says_why(azure: AzureServer) -> None:
    azure.emulator.faults.fail("/api/retail/prices", 500, "InternalServerError", "boom")
    pricing = AzurePricing(
        "westcentralus", fetch=url_fetcher(azure.ca_file), endpoint=azure.retail_prices_url
    )
    assert pricing.refresh() == OFFLINE
    assert len(pricing.problems) == 1 and "500" in pricing.problems[0]
    table = _bundled("westcentralus")
    assert pricing.on_demand("Standard_D2_v5") == table["Standard_D2_v5"]
    # No spot table ships: spot is priced as on-demand until the API answers.
    assert pricing.spot("Standard_D2_v5") == table["Standard_D2_v5"]


def test_offline_table_edges() -> None:
    assert (
        AzurePricing("mars-north").on_demand("Standard_D2_v5")
        == _bundled("eastus")["Standard_D2_v5"]
    )
    assert AzurePricing("eastus").on_demand("Standard_Nope_v9") == MISSING_PRICE
    assert AzurePricing("eastus").source == OFFLINE
