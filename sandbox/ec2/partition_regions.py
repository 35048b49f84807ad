"""China and GovCloud regions as the EC2 emulator serves them: what moto leaves out there.

moto answers a ``cn-north-1`` or ``us-gov-west-1`` client with ARNs in that region's
partition (``arn:aws-cn:``, ``arn:aws-us-gov:``) and keeps each partition's IAM apart, as AWS
does, but its bundled data offers **no instance type** in any zone of those regions: every
DescribeInstanceTypeOfferings there answers an empty list, so nothing could ever launch. Real
EC2 sells most current types there. Emulated here, explicitly:

* the types AWS's public price list prices in such a region (the offline table the package
  ships, ``activities/ec2/data``) are offered in every zone of the region moto knows
  (by zone name and by zone id, and per region), through moto's own filter code;
* moto's commercial regions are left exactly as moto has them.

What the Pricing API answers per partition is emulated in :mod:`sandbox.ec2.pricing_api`.
"""

from __future__ import annotations

from typing import Any

from moto.core import DEFAULT_ACCOUNT_ID
from moto.ec2.models import ec2_backends
from moto.ec2.models.instance_types import INSTANCE_TYPE_OFFERINGS

from activities.ec2.partitions import COMMERCIAL, partition
from activities.ec2.pricing import offline_table

# location type -> the regions whose offerings this module added (to take them out again)
_added: dict[str, list[str]] = {}


def emulated_regions() -> list[str]:
    """The regions outside the commercial partition that the price table lists and moto has
    no offerings for: the ones whose offerings come from here."""
    known = INSTANCE_TYPE_OFFERINGS.get("availability-zone", {})
    return sorted(
        region
        for region in offline_table()
        if partition(region) != COMMERCIAL
        and (region in _added.get("region", []) or not known.get(region))
    )


def offerings(region: str) -> dict[str, list[dict[str, Any]]]:
    """Location type → the offerings of ``region``: each priced type in each of its zones."""
    zones = ec2_backends[DEFAULT_ACCOUNT_ID][region].describe_availability_zones()
    types = sorted(offline_table().get(region, {}))
    return {
        "region": [
            {"InstanceType": t, "Location": region, "LocationType": "region"} for t in types
        ],
        "availability-zone": [
            {"InstanceType": t, "Location": z.name, "LocationType": "availability-zone"}
            for z in zones
            for t in types
        ],
        "availability-zone-id": [
            {"InstanceType": t, "Location": z.zone_id, "LocationType": "availability-zone-id"}
            for z in zones
            for t in types
        ],
    }


def install() -> None:
    """Add the offerings of every emulated region to moto's data (idempotent)."""
    for region in emulated_regions():
        for location_type, entries in offerings(region).items():
            INSTANCE_TYPE_OFFERINGS.setdefault(location_type, {})[region] = entries
            if region not in _added.setdefault(location_type, []):
                _added[location_type].append(region)


def uninstall() -> None:
    """Take the added offerings out again: moto's own data is as it shipped."""
    for location_type, regions in _added.items():
        for region in regions:
            INSTANCE_TYPE_OFFERINGS.get(location_type, {}).pop(region, None)
    _added.clear()


def is_emulated(region: str) -> bool:
    """Whether ``region``'s offerings are this module's (not moto's bundled data)."""
    return region in _added.get("availability-zone", [])
