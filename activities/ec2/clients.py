"""boto3 clients for one region, built in one place so retries and endpoints agree."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import boto3
from botocore.config import Config

# The Pricing API lives in a few regions only; us-east-1 serves every commercial region.
PRICING_REGION = "us-east-1"
IAM_REGION = "us-east-1"

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
        default = config or _DEFAULT_CONFIG

        def client(service: str, region_name: str = region, config: Config = default) -> Any:
            return sess.client(
                service, region_name=region_name, endpoint_url=endpoint_url, config=config
            )

        return AWSClients(
            ec2=client("ec2"),
            ssm=client("ssm"),
            pricing=client("pricing", PRICING_REGION, _PRICING_CONFIG),
            sqs=client("sqs"),
            region=region,
            eks=client("eks"),
            # IAM is global: one endpoint whatever the region (us-east-1 signs for it).
            iam=client("iam", IAM_REGION),
        )
