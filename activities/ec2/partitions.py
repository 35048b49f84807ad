"""AWS partitions: which one a region is in, its ARNs, and where its Pricing API answers.

A region outside the commercial partition (``aws-cn``, ``aws-us-gov``) has its own IAM
endpoint, its own ARN prefix and, for the Pricing API, another region or none at all: a
client or an ARN built for ``aws`` fails there on every call. The partition comes from
botocore's endpoint data, the one AWS's own SDKs read, so a new region needs no change here.
"""

from __future__ import annotations

from functools import cache

import botocore.session

COMMERCIAL = "aws"
CHINA = "aws-cn"
GOVCLOUD = "aws-us-gov"


@cache
def partition(region: str) -> str:
    """``eu-west-1`` → ``aws``; ``cn-north-1`` → ``aws-cn``; ``us-gov-west-1`` → ``aws-us-gov``.

    An unknown name falls to the partition whose region pattern matches it (botocore's rule),
    and to ``aws`` when none does."""
    name = botocore.session.get_session().get_partition_for_region(region)
    return str(name or COMMERCIAL)


def arn(region: str, service: str, account: str, resource: str, *, regional: bool = True) -> str:
    """An ARN in the region's partition; IAM's are global (no region field)."""
    return f"arn:{partition(region)}:{service}:{region if regional else ''}:{account}:{resource}"


def pricing_region(region: str) -> str | None:
    """The region whose Pricing API serves ``region``'s prices, or None where there is none.

    As Karpenter chooses it: Asia Pacific from ap-south-1, Europe from eu-central-1, China
    from cn-northwest-1, the rest of the commercial partition from us-east-1. GovCloud and
    the isolated partitions have no Pricing API: the offline table serves them."""
    part = partition(region)
    if part == CHINA:
        return "cn-northwest-1"
    if part != COMMERCIAL:
        return None
    if region.startswith("ap-"):
        return "ap-south-1"
    if region.startswith("eu-"):
        return "eu-central-1"
    return "us-east-1"


def currency(region: str) -> str:
    """The currency the Pricing API quotes the region's prices in (CNY in China)."""
    return "CNY" if partition(region) == CHINA else "USD"
