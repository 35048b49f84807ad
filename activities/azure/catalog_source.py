"""One region's SKUs and prices, read once, turned into a catalog per node class.

Karpenter Azure builds one catalog per distinct node-class setting over one SKU list; the CLI
(``joinery catalog|plan --provider azure``) does the same: the Resource SKUs and the Retail
Prices are read once, and each AKSNodeClass's view is built from them without another call.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from activities.azure.catalog import build_catalog, fetch_skus
from activities.azure.params import CatalogParams
from activities.azure.pricing import RETAIL_PRICES_URL, AzurePricing, url_fetcher
from activities.azure.skus import Sku
from models.instancetype import InstanceType

RETAIL_PATH = "/api/retail/prices"


def retail_prices_url(endpoint: str | None) -> str:
    """The Retail Prices API: the public one, or the same host as an emulated ARM endpoint
    (``sandbox/azure`` serves both)."""
    return f"{endpoint.rstrip('/')}{RETAIL_PATH}" if endpoint else RETAIL_PRICES_URL


@dataclass
class RegionCatalogs:
    """The SKUs and prices of ``region`` (read on first use) and the catalogs built on them."""

    compute: Any  # ComputeManagementClient
    region: str
    pricing: AzurePricing
    _skus: list[Sku] | None = field(default=None, init=False)
    _built: dict[CatalogParams, list[InstanceType]] = field(default_factory=dict, init=False)

    @staticmethod
    def create(
        compute: Any, region: str, *, endpoint: str | None = None, ca_file: str | None = None
    ) -> RegionCatalogs:
        pricing = AzurePricing(
            region, fetch=url_fetcher(ca_file), endpoint=retail_prices_url(endpoint)
        )
        return RegionCatalogs(compute, region, pricing)

    def skus(self) -> list[Sku]:
        """The region's VM SKUs, then its prices (the API, else the bundled table)."""
        if self._skus is None:
            self._skus = fetch_skus(self.compute, self.region)
            self.pricing.refresh()
        return self._skus

    def types(self, params: CatalogParams) -> list[InstanceType]:
        """The catalog for ``params``; equal parameters give the very same list."""
        got = self._built.get(params)
        if got is None:
            got = self._built[params] = build_catalog(
                self.skus(), self.region, self.pricing, params
            )
        return got
