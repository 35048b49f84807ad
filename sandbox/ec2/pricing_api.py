"""The one AWS API Joinery calls that moto lacks: the Price List Query API (``GetProducts``).

Emulated explicitly, here and nowhere else: a botocore ``before-send`` handler on the pricing
client answers ``GetProducts`` from the public on-demand price table the package ships
(activities/ec2/data), in the real API's wire format (JSON 1.1; each ``PriceList`` entry a
JSON *string* holding the product's attributes and its ``OnDemand`` terms), honouring the
``regionCode`` and ``instanceType`` TERM_MATCH filters and paginating with ``NextToken`` as the
real API does. Every other pricing operation still goes to moto (and fails there, as it lacks
them). Attach it *after* a :class:`sandbox.ec2.faults.FaultInjector`, so injected faults come
first and their retries reach this answer, like any call that reaches moto.

Partitions, as AWS has them (its "Price List Query API endpoints"): the API answers only in
us-east-1, eu-central-1 and ap-south-1 (the commercial partition's prices) and in
cn-northwest-1 (China's, quoted in CNY only); a client of any other region has no endpoint to
reach (a connection error, as the DNS name does not exist), and an endpoint asked for a region
of another partition answers an empty price list.
"""

from __future__ import annotations

import json
from typing import Any

from botocore.awsrequest import AWSPreparedRequest, AWSResponse
from botocore.exceptions import EndpointConnectionError

from activities.ec2.pricing import offline_table
from sandbox.ec2.faults import WireBody

PAGE_SIZE = 100  # the real API's default MaxResults
# endpoint region -> (partition it serves, the one currency it quotes in)
ENDPOINTS = {
    "us-east-1": ("aws", "USD"),
    "eu-central-1": ("aws", "USD"),
    "ap-south-1": ("aws", "USD"),
    "cn-northwest-1": ("aws-cn", "CNY"),
}


def _partition_of(region: str) -> str:
    """AWS's region naming: ``cn-`` regions are China's, ``us-gov-`` GovCloud's."""
    if region.startswith("cn-"):
        return "aws-cn"
    if region.startswith("us-gov-"):
        return "aws-us-gov"
    return "aws"


def price_list_item(region: str, instance_type: str, usd_per_hour: float, unit: str = "USD") -> str:
    """One ``PriceList`` entry as the real API returns it (trimmed to the fields it always has);
    ``unit`` is the currency the price is quoted in."""
    sku = f"{region}-{instance_type}".upper().replace(".", "")
    return json.dumps(
        {
            "product": {
                "productFamily": "Compute Instance",
                "attributes": {
                    "instanceType": instance_type,
                    "regionCode": region,
                    "operatingSystem": "Linux",
                    "tenancy": "Shared",
                    "preInstalledSw": "NA",
                    "capacitystatus": "Used",
                    "marketoption": "OnDemand",
                },
                "sku": sku,
            },
            "serviceCode": "AmazonEC2",
            "terms": {
                "OnDemand": {
                    f"{sku}.JRTCKXETXF": {
                        "priceDimensions": {
                            f"{sku}.JRTCKXETXF.6YS6EN2CT7": {
                                "unit": "Hrs",
                                "pricePerUnit": {unit: f"{usd_per_hour:.10f}"},
                            }
                        },
                        "sku": sku,
                    }
                }
            },
        }
    )


def get_products(body: dict[str, Any], endpoint: str = "us-east-1") -> dict[str, Any]:
    """The answer to one ``GetProducts`` request body sent to ``endpoint``'s Pricing API."""
    served, unit = ENDPOINTS[endpoint]
    wanted = {
        f.get("Field"): f.get("Value")
        for f in body.get("Filters") or []
        if f.get("Type") == "TERM_MATCH"
    }
    if body.get("ServiceCode") != "AmazonEC2":
        return {"FormatVersion": "aws_v1", "PriceList": []}
    region = str(wanted.get("regionCode") or "")
    prices = offline_table().get(region, {}) if _partition_of(region) == served else {}
    only = wanted.get("instanceType")
    names = sorted(n for n in prices if only is None or n == only)
    start = int(body.get("NextToken") or 0)
    size = int(body.get("MaxResults") or PAGE_SIZE)
    page = names[start : start + size]
    out: dict[str, Any] = {
        "FormatVersion": "aws_v1",
        "PriceList": [price_list_item(region, n, prices[n], unit) for n in page],
    }
    if start + size < len(names):
        out["NextToken"] = str(start + size)
    return out


class PricingApi:
    """Answers ``pricing:GetProducts`` for one pricing client; counts what it answered."""

    def __init__(self) -> None:
        self.answered = 0
        self.endpoint = "us-east-1"

    def attach(self, client: Any) -> PricingApi:
        self.endpoint = str(client.meta.region_name)
        client.meta.events.register("before-send.pricing.GetProducts", self._on_send)
        return self

    def _on_send(self, request: AWSPreparedRequest, **_: Any) -> AWSResponse:
        if self.endpoint not in ENDPOINTS:
            # api.pricing.<region>.amazonaws.com does not exist there
            raise EndpointConnectionError(endpoint_url=request.url)
        raw = request.body or b"{}"
        body = json.loads(raw.decode() if isinstance(raw, bytes) else str(raw))
        self.answered += 1
        data = json.dumps(get_products(body, self.endpoint)).encode()
        headers = {"Content-Type": "application/x-amz-json-1.1", "x-amzn-RequestId": "emulated"}
        return AWSResponse(request.url, 200, headers, WireBody(data))
