"""China and GovCloud: clients, prices and ARNs in the region's own partition.

Real AWS answers a call made for the wrong partition with an error (an IAM client signed for
us-east-1 cannot see a role in cn-north-1); moto answers every region alike, so these tests
check what the clients are built for and what the ARNs say, against AWS's published facts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from activities.ec2.clients import AWSClients
from activities.ec2.partitions import currency, partition, pricing_region
from activities.ec2.permissions import policy
from activities.ec2.pricing import OFFLINE, PRICING_API, PricingProvider
from worker.cli.doctor_command import principal_arn

ROOT = Path(__file__).resolve().parents[3]

# AWS's published partitions and the Pricing API's endpoints (docs.aws.amazon.com, "AWS
# Price List Query API endpoints"; Karpenter's AWS provider chooses the same).
REGIONS = [
    # region, partition, pricing region (None: no Pricing API), currency
    ("us-east-1", "aws", "us-east-1", "USD"),
    ("us-west-2", "aws", "us-east-1", "USD"),
    ("ca-central-1", "aws", "us-east-1", "USD"),
    ("sa-east-1", "aws", "us-east-1", "USD"),
    ("eu-west-1", "aws", "eu-central-1", "USD"),
    ("eu-north-1", "aws", "eu-central-1", "USD"),
    ("ap-northeast-1", "aws", "ap-south-1", "USD"),
    ("ap-southeast-2", "aws", "ap-south-1", "USD"),
    ("cn-north-1", "aws-cn", "cn-northwest-1", "CNY"),
    ("cn-northwest-1", "aws-cn", "cn-northwest-1", "CNY"),
    ("us-gov-west-1", "aws-us-gov", None, "USD"),
    ("us-gov-east-1", "aws-us-gov", None, "USD"),
]


@pytest.mark.parametrize(("region", "part", "prices_from", "money"), REGIONS)
def test_partition_pricing_region_and_currency(
    region: str, part: str, prices_from: str | None, money: str
) -> None:
    assert partition(region) == part
    assert pricing_region(region) == prices_from
    assert currency(region) == money


@pytest.mark.parametrize(
    ("region", "iam_host", "pricing_host"),
    [
        ("eu-west-1", "iam.amazonaws.com", "api.pricing.eu-central-1.amazonaws.com"),
        ("cn-north-1", "iam.cn-north-1.amazonaws.com.cn", "api.pricing.cn-northwest-1"),
        ("us-gov-west-1", "iam.us-gov.amazonaws.com", None),
    ],
)
def test_clients_are_built_for_the_regions_partition(
    region: str, iam_host: str, pricing_host: str | None
) -> None:
    clients = AWSClients.create(region)
    assert iam_host in clients.iam.meta.endpoint_url
    assert clients.ec2.meta.region_name == region
    if pricing_host is None:
        assert clients.pricing is None  # GovCloud: the offline table serves the prices
    else:
        assert pricing_host in clients.pricing.meta.endpoint_url


def _price_item(instance_type: str, unit: str, price: str) -> str:
    return json.dumps(
        {
            "product": {"attributes": {"instanceType": instance_type}},
            "terms": {
                "OnDemand": {"t": {"priceDimensions": {"d": {"pricePerUnit": {unit: price}}}}}
            },
        }
    )


class _Pages:
    def __init__(self, items: list[str]) -> None:
        self.items = items

    def paginate(self, **_: Any) -> Iterator[dict[str, Any]]:
        yield {"PriceList": self.items}


class _PricingClient:
    """A GetProducts answer as the Pricing API gives it (one page)."""

    def __init__(self, items: list[str]) -> None:
        self.items = items

    def get_paginator(self, name: str) -> _Pages:
        assert name == "get_products"
        return _Pages(self.items)


def test_china_prices_are_read_in_cny() -> None:
    answer = _PricingClient(
        [_price_item("m5.large", "CNY", "0.915"), _price_item("c5.large", "USD", "0.1")]
    )
    prices = PricingProvider("cn-north-1", ec2=None, pricing=answer, offline={})
    prices.refresh_on_demand()
    assert prices.on_demand_source == PRICING_API
    assert prices.on_demand_price("m5.large") == pytest.approx(0.915)
    assert prices.on_demand_price("c5.large") is None  # a USD-only entry is not China's price


def test_govcloud_uses_the_offline_table_without_a_pricing_client() -> None:
    clients = AWSClients.create("us-gov-west-1")
    prices = PricingProvider("us-gov-west-1", ec2=None, pricing=clients.pricing)
    prices.refresh_on_demand()
    assert prices.on_demand_source == OFFLINE
    assert prices.on_demand_price("m5.large")


@pytest.mark.parametrize("part", ["aws", "aws-cn", "aws-us-gov"])
def test_policy_arns_carry_the_partition(part: str) -> None:
    listed = [s["Resource"] for s in policy(part)["Statement"]]
    every = [r for r in listed if isinstance(r, str)] + [
        r for rs in listed if isinstance(rs, list) for r in rs
    ]
    resources = [r for r in every if r != "*"]
    assert resources
    assert all(r.startswith(f"arn:{part}:") for r in resources), resources


def test_doctor_keeps_the_callers_partition() -> None:
    caller = "arn:aws-us-gov:sts::111122223333:assumed-role/JoineryController/botocore-session-1"
    assert principal_arn(caller) == "arn:aws-us-gov:iam::111122223333:role/JoineryController"


# Where an ARN could be written: the code, the chart and the docs. A sample of a command's
# output (a concrete account id) may show the commercial partition; a template may not.
_SAMPLE_ACCOUNT = "111122223333"
_HARD_CODED = re.compile(r"arn:aws:")


def _places() -> Iterator[Path]:
    for top in ("activities", "models", "scheduling", "workflows", "worker", "sandbox", "deploy"):
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix in (".py", ".yaml", ".yml", ".tpl", ".json", ".md") and path.is_file():
                yield path
    yield from sorted((ROOT / "docs").glob("*.md"))
    yield ROOT / "README.md"


def test_no_commercial_arn_is_hard_coded() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in _places()
        if "data" not in path.relative_to(ROOT).parts
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
        if _HARD_CODED.search(line) and _SAMPLE_ACCOUNT not in line
    ]
    assert found == []
