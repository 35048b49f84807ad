"""Prices: the public Azure Retail Prices API when it answers, else the bundled table.

As Karpenter Azure does, Linux pay-as-you-go meters give on-demand prices and ``... Spot``
meters spot prices; Windows and Low Priority meters are left out. The bundled table
(``data/azure-vm-prices.json``) has on-demand prices only, so until the API answers a spot
offering is priced like on-demand: the planner then prefers spot only where it is cheaper
for another reason (availability), never on a guessed discount.
"""

from __future__ import annotations

import json
import logging
import ssl
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

log = logging.getLogger(__name__)

RETAIL_PRICES_URL = "https://prices.azure.com/api/retail/prices"
# The price of a size no table knows: high enough that it is only picked when nothing else fits.
MISSING_PRICE = 999.0
FALLBACK_REGION = "eastus"
MAX_PAGES = 200  # a region has ~40 pages of 1000 items; a loop beyond this is a bad NextPageLink

RETAIL_API = "retail-prices-api"
OFFLINE = "offline-table"


@cache
def offline_table() -> dict[str, dict[str, float]]:
    """region → VM size → USD/hour (Linux pay-as-you-go), from the package data."""
    text = resources.files("activities.azure").joinpath("data/azure-vm-prices.json").read_text()
    raw = json.loads(text)
    return {r: {k: float(v) for k, v in t.items()} for r, t in raw["regions"].items()}


def offline_prices(region: str) -> dict[str, float]:
    """The bundled prices of ``region``, or of eastus for a region the table lacks."""
    table = offline_table()
    return dict(table.get(region) or table[FALLBACK_REGION])


def retail_filter(region: str) -> str:
    """The OData filter the provider sends: consumption VM meters of one region, in USD."""
    return (
        "priceType eq 'Consumption' and currencyCode eq 'USD' and serviceFamily eq 'Compute' "
        f"and serviceName eq 'Virtual Machines' and armRegionName eq '{region}'"
    )


def split_meters(items: Iterable[Mapping[str, Any]]) -> tuple[dict[str, float], dict[str, float]]:
    """(on-demand, spot) by ARM size name, from Retail Prices items."""
    on_demand: dict[str, float] = {}
    spot: dict[str, float] = {}
    for item in items:
        if str(item.get("productName", "")).endswith(" Windows"):
            continue
        if str(item.get("meterName", "")).endswith(" Low Priority"):
            continue
        name = item.get("armSkuName")
        price = item.get("retailPrice")
        if not name or not isinstance(price, int | float):
            continue
        target = spot if str(item.get("skuName", "")).endswith(" Spot") else on_demand
        target[str(name)] = float(price)
    return on_demand, spot


Fetch = Callable[[str], Mapping[str, Any]]


def url_fetcher(ca_file: str | None = None, timeout: float = 30.0) -> Fetch:
    """GET a URL and decode its JSON; ``ca_file`` trusts a private CA (the emulator's)."""
    context = ssl.create_default_context(cafile=ca_file) if ca_file else None

    def fetch(url: str) -> Mapping[str, Any]:
        req = urllib.request.Request(url, headers={"Accept": "application/json"})
        with urllib.request.urlopen(req, timeout=timeout, context=context) as resp:
            body: Mapping[str, Any] = json.loads(resp.read())
            return body

    return fetch


def fetch_retail_prices(
    region: str, fetch: Fetch, endpoint: str = RETAIL_PRICES_URL
) -> tuple[dict[str, float], dict[str, float]]:
    """Every page of the region's VM meters, following ``NextPageLink``."""
    query = urllib.parse.urlencode({"$filter": retail_filter(region)}, quote_via=urllib.parse.quote)
    url: str | None = f"{endpoint}?{query}"
    items: list[Mapping[str, Any]] = []
    for _ in range(MAX_PAGES):
        if not url:
            break
        page = fetch(url)
        items.extend(page.get("Items") or [])
        url = page.get("NextPageLink") or None
    else:
        raise RuntimeError(f"Retail Prices API: more than {MAX_PAGES} pages")
    return split_meters(items)


@dataclass
class AzurePricing:
    """The prices of one region: lookups never call out; ``refresh`` does."""

    region: str
    fetch: Fetch | None = None
    endpoint: str = RETAIL_PRICES_URL
    source: str = OFFLINE
    problems: list[str] = field(default_factory=list)
    _on_demand: dict[str, float] = field(default_factory=dict, init=False)
    _spot: dict[str, float] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        self._on_demand = offline_prices(self.region)
        self._spot = dict(self._on_demand)  # no spot table ships: on-demand until the API answers

    def refresh(self) -> str:
        """Ask the Retail Prices API; on failure keep what we have and say why in ``problems``."""
        if self.fetch is None:
            return self.source
        try:
            on_demand, spot = fetch_retail_prices(self.region, self.fetch, self.endpoint)
        except Exception as exc:  # the API is optional: a catalog with known prices beats none
            self.problems.append(f"Retail Prices API: {exc}")
            log.warning("Azure Retail Prices API failed, using the bundled table: %s", exc)
            return self.source
        if on_demand:
            self._on_demand = on_demand
            self.source = RETAIL_API
        if spot:
            self._spot = spot
        return self.source

    def on_demand(self, size: str) -> float:
        return self._on_demand.get(size, MISSING_PRICE)

    def spot(self, size: str) -> float:
        return self._spot.get(size, MISSING_PRICE)
