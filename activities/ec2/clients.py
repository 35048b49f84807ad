"""boto3 clients for one region, built in one place so retries and endpoints agree."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import boto3
from botocore.config import Config
from botocore.utils import parse_timestamp as botocore_parse_timestamp

from activities.ec2.partitions import pricing_region

# Standard retry mode retries throttling, 5xx, timeouts and connection resets with exponential
# backoff and full jitter; we classify what is left (errors.py). Every call Joinery makes is
# safe to repeat: reads, idempotent writes, or CreateFleet with the NodeClaim UID as its token.
_DEFAULT_CONFIG = Config(
    retries={"max_attempts": 5, "mode": "standard"}, connect_timeout=5, read_timeout=30
)
# Pricing is optional (an offline table exists), so fail fast rather than stall a catalog load:
# one retry (botocore counts retries in max_attempts here: two attempts in all), short timeouts.
_PRICING_CONFIG = Config(
    retries={"max_attempts": 1, "mode": "standard"}, connect_timeout=2, read_timeout=10
)


def parse_timestamp(value: Any) -> Any:
    """An ISO 8601 timestamp with its zone (what EC2 and SSM answer) by the standard library;
    anything else as botocore parses it.

    botocore's own parser goes through dateutil for every timestamp of a response: parsing
    DescribeInstances' launch times that way was the largest part of the worker's own CPU in
    the EC2 calls of a burst (docs/performance.md). The answer is the same instant, as an
    aware ``datetime``; epoch numbers, RFC 822 dates and zoneless strings keep botocore's.
    """
    if isinstance(value, str) and not value.isdigit():
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            parsed = None
        if parsed is not None and parsed.tzinfo is not None:
            return parsed
    return botocore_parse_timestamp(value)


def use_fast_timestamps(session: boto3.session.Session) -> None:
    """Make the clients ``session`` creates from now on parse timestamps with
    :func:`parse_timestamp` (botocore's documented parser default, as the AWS CLI sets it)."""
    core = getattr(session, "_session", None)  # boto3 keeps its botocore session here
    if core is None:
        return
    core.get_component("response_parser_factory").set_parser_defaults(
        timestamp_parser=parse_timestamp
    )


@dataclass(frozen=True, slots=True)
class AWSClients:
    """The clients the provider uses; ``endpoint_url`` points all of them at one emulator."""

    ec2: Any
    ssm: Any
    pricing: Any
    sqs: Any
    region: str
    eks: Any = None
    iam: Any = None

    @staticmethod
    def create(
        region: str,
        endpoint_url: str | None = None,
        session: boto3.session.Session | None = None,
        config: Config | None = None,
    ) -> AWSClients:
        """``config`` replaces the default retry and timeout settings (tests shorten them)."""
        sess = session or boto3.session.Session()
        use_fast_timestamps(sess)
        default = config or _DEFAULT_CONFIG

        def client(service: str, region_name: str = region, config: Config = default) -> Any:
            return sess.client(
                service, region_name=region_name, endpoint_url=endpoint_url, config=config
            )

        # The Pricing API answers in a few regions of a partition, and in none of some
        # (activities/ec2/partitions.py); without one the offline table serves the prices.
        prices_from = pricing_region(region)
        return AWSClients(
            ec2=client("ec2"),
            ssm=client("ssm"),
            pricing=client("pricing", prices_from, _PRICING_CONFIG) if prices_from else None,
            sqs=client("sqs"),
            region=region,
            eks=client("eks"),
            # IAM is global within a partition: built with the cluster's region, botocore
            # picks that partition's endpoint (iam.amazonaws.com.cn in China, and so on).
            iam=client("iam"),
        )
