"""Prices: on-demand from the Pricing API or the bundled public table, spot from EC2.

The Pricing API is optional (isolated VPCs, emulators and some partitions lack it), so a
failure falls back to ``data/ec2-on-demand-prices.json`` and is reported in ``problems``
rather than raised: a catalog with known prices beats no catalog. As Karpenter's, the table
stands in for a region it lacks with us-east-1's prices, and fills in the types an answer
of the API left out: an on-demand offering is never dropped for want of a price.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from typing import Any

from activities.ec2.errors import aws_errors
from activities.ec2.partitions import currency

log = logging.getLogger(__name__)

PRICING_API = "pricing-api"
OFFLINE = "offline-table"
# the table has no entry for the region: us-east-1's prices stand in, as Karpenter does
OFFLINE_FALLBACK = "offline-table-us-east-1"
NONE = "none"
FALLBACK_REGION = "us-east-1"


@cache
def offline_table() -> dict[str, dict[str, float]]:
    """region → instance type → USD/hour, from the package data (public AWS price list)."""
    text = resources.files("activities.ec2").joinpath("data/ec2-on-demand-prices.json").read_text()
    raw = json.loads(text)
    return {
        region: {k: float(v) for k, v in body.get("on_demand_usd_per_hour", {}).items()}
        for region, body in raw.get("regions", {}).items()
    }


def _parse_price_list_item(item: str, currency: str = "USD") -> tuple[str, float] | None:
    """One GetProducts PriceList entry (a JSON string) → (instance type, price per hour in
    ``currency``: the Pricing API quotes China's regions in CNY only)."""
    doc = json.loads(item)
    name = doc.get("product", {}).get("attributes", {}).get("instanceType")
    for term in doc.get("terms", {}).get("OnDemand", {}).values():
        for dim in term.get("priceDimensions", {}).values():
            price = dim.get("pricePerUnit", {}).get(currency)
            if name and price is not None and float(price) > 0:
                return str(name), float(price)
    return None


class PricingProvider:
    """Holds the latest prices; ``refresh_*`` fetch, lookups never call AWS."""

    def __init__(
        self,
        region: str,
        ec2: Any,
        pricing: Any | None,
        offline: Mapping[str, Mapping[str, float]] | None = None,
    ) -> None:
        self.region = region
        self._ec2 = ec2
        self._pricing = pricing
        self._offline = offline if offline is not None else offline_table()
        self._lock = threading.Lock()
        self._on_demand: dict[str, float] = {}
        self._spot: dict[tuple[str, str], float] = {}
        self.on_demand_source = NONE
        self.problems: list[str] = []

    def on_demand_price(self, instance_type: str) -> float | None:
        return self._on_demand.get(instance_type)

    def spot_price(self, instance_type: str, zone: str) -> float | None:
        return self._spot.get((instance_type, zone))

    def snapshot(self) -> tuple[dict[str, float], dict[tuple[str, str], float], str]:
        with self._lock:
            return dict(self._on_demand), dict(self._spot), self.on_demand_source

    def load(
        self,
        on_demand: Mapping[str, float],
        spot: Mapping[tuple[str, str], float],
        source: str,
    ) -> None:
        """Adopt prices fetched elsewhere (another provider of the same region)."""
        with self._lock:
            self._on_demand, self._spot = dict(on_demand), dict(spot)
            self.on_demand_source = source

    def refresh(self) -> None:
        self.problems = []
        self.refresh_on_demand()
        self.refresh_spot()

    def refresh_on_demand(self) -> None:
        prices: dict[str, float] = {}
        api_error = ""
        if self._pricing is not None:
            try:
                prices = self._fetch_on_demand()
            except Exception as exc:  # any failure: the offline table is the designed fallback
                api_error = str(exc).splitlines()[0][:200]
        table, table_source = self._offline_for_region()
        if prices:
            source = PRICING_API
            prices = {**table, **prices}  # a type the answer left out keeps the table's price
        else:
            prices = table
            source = table_source if table else NONE
            if source == NONE:
                why = f" ({api_error})" if api_error else ""
                self.problems.append(
                    f"no on-demand prices for region {self.region}: the Pricing API gave none"
                    f"{why} and the offline table has no entry for this region"
                )
            elif api_error:
                log.info("Pricing API unavailable (%s); using the offline table", api_error)
            if source == OFFLINE_FALLBACK:
                log.info(
                    "the offline price table has no %s: %s prices stand in",
                    self.region,
                    FALLBACK_REGION,
                )
        with self._lock:
            self._on_demand = prices
            self.on_demand_source = source

    def _offline_for_region(self) -> tuple[dict[str, float], str]:
        """The table's prices for this region, or us-east-1's when it has none."""
        own = self._offline.get(self.region)
        if own:
            return dict(own), OFFLINE
        return dict(self._offline.get(FALLBACK_REGION, {})), OFFLINE_FALLBACK

    def _fetch_on_demand(self) -> dict[str, float]:
        if self._pricing is None:
            return {}
        filters = [
            {"Type": "TERM_MATCH", "Field": field, "Value": value}
            for field, value in (
                ("regionCode", self.region),
                ("operatingSystem", "Linux"),
                ("tenancy", "Shared"),
                ("preInstalledSw", "NA"),
                ("capacitystatus", "Used"),
                ("marketoption", "OnDemand"),
            )
        ]
        out: dict[str, float] = {}
        quoted_in = currency(self.region)
        paginator = self._pricing.get_paginator("get_products")
        with aws_errors("GetProducts"):
            for page in paginator.paginate(ServiceCode="AmazonEC2", Filters=filters):
                for item in page.get("PriceList", []):
                    parsed = _parse_price_list_item(item, quoted_in)
                    if parsed:
                        out[parsed[0]] = parsed[1]
        return out

    def refresh_spot(self) -> None:
        """Latest spot price per (type, zone); a failure keeps the previous prices."""
        latest: dict[tuple[str, str], tuple[datetime, float]] = {}
        paginator = self._ec2.get_paginator("describe_spot_price_history")
        try:
            with aws_errors("DescribeSpotPriceHistory"):
                for page in paginator.paginate(
                    ProductDescriptions=["Linux/UNIX", "Linux/UNIX (Amazon VPC)"],
                    StartTime=datetime.now(UTC),
                ):
                    for rec in page.get("SpotPriceHistory", []):
                        key = (rec["InstanceType"], rec["AvailabilityZone"])
                        ts = rec.get("Timestamp") or datetime.min.replace(tzinfo=UTC)
                        if key not in latest or ts > latest[key][0]:
                            latest[key] = (ts, float(rec["SpotPrice"]))
        except Exception as exc:
            self.problems.append(f"spot prices unavailable: {exc}")
            return
        with self._lock:
            self._spot = {k: v for k, (_, v) in latest.items()}
