"""The emulator's China and GovCloud regions behave as AWS's do (sandbox/ec2/partition_*.py).

Facts checked against AWS's documentation, not against the emulation's own tables: the
Pricing API's endpoints (us-east-1, eu-central-1, ap-south-1; cn-northwest-1 for China, in
CNY; none in GovCloud), the partition of each region's ARNs, and that an ARN of another
partition names nothing there.
"""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError, EndpointConnectionError

from sandbox.ec2 import partition_guard
from sandbox.ec2.pricing_api import PricingApi
from sandbox.ec2.seed import SPOT_SERVICE_ROLE, seed_region
from sandbox.ec2.server import FAKE_CREDENTIALS, MotoServer
from tests.component.ec2.conftest import CLUSTER

PARTITIONS = [("cn-north-1", "aws-cn"), ("us-gov-west-1", "aws-us-gov")]


@pytest.fixture
def fresh(moto_server: MotoServer, emulation: Any) -> MotoServer:
    moto_server.reset()
    emulation.reset()
    partition_guard.refused.clear()
    return moto_server


@pytest.mark.parametrize(("region", "part"), PARTITIONS)
def test_every_zone_offers_instance_types(fresh: MotoServer, region: str, part: str) -> None:
    ec2 = fresh.client("ec2", region)
    zones = {z["ZoneName"] for z in ec2.describe_availability_zones()["AvailabilityZones"]}
    offered: dict[str, set[str]] = {}
    for page in ec2.get_paginator("describe_instance_type_offerings").paginate(
        LocationType="availability-zone"
    ):
        for o in page["InstanceTypeOfferings"]:
            offered.setdefault(o["Location"], set()).add(o["InstanceType"])
    assert set(offered) == zones
    assert all({"m5.large", "c5.large"} <= types for types in offered.values())
    one = ec2.describe_instance_type_offerings(
        LocationType="availability-zone",
        Filters=[{"Name": "instance-type", "Values": ["m5.large"]}],
    )["InstanceTypeOfferings"]
    assert {o["Location"] for o in one} == zones


@pytest.mark.parametrize(("region", "part"), PARTITIONS)
def test_arns_are_in_the_regions_partition_and_another_partitions_are_refused(
    fresh: MotoServer, region: str, part: str
) -> None:
    iam = fresh.client("iam", region)
    role = iam.create_role(RoleName="node", AssumeRolePolicyDocument="{}")["Role"]
    assert role["Arn"].startswith(f"arn:{part}:iam::")
    profile = iam.create_instance_profile(InstanceProfileName="p")["InstanceProfile"]
    assert profile["Arn"].startswith(f"arn:{part}:iam::")
    ec2 = fresh.client("ec2", region)
    foreign = profile["Arn"].replace(f"arn:{part}:", "arn:aws:")
    with pytest.raises(ClientError) as refused:
        ec2.create_launch_template(
            LaunchTemplateName="lt", LaunchTemplateData={"IamInstanceProfile": {"Arn": foreign}}
        )
    assert refused.value.response["Error"]["Code"] == "InvalidParameterValue"
    with pytest.raises(ClientError) as refused_iam:
        iam.attach_role_policy(
            RoleName="node", PolicyArn="arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy"
        )
    assert refused_iam.value.response["Error"]["Code"] == "InvalidInput"
    assert [(s, a) for s, a, _ in partition_guard.refused] == [
        ("ec2", "CreateLaunchTemplate"),
        ("iam", "AttachRolePolicy"),
    ]
    # the same template with the partition's own ARN is accepted
    ec2.create_launch_template(
        LaunchTemplateName="lt", LaunchTemplateData={"IamInstanceProfile": {"Arn": profile["Arn"]}}
    )
    # a commercial region is left alone: its own ARNs pass
    fresh.client("ec2", "us-east-1").create_launch_template(
        LaunchTemplateName="lt", LaunchTemplateData={"IamInstanceProfile": {"Arn": foreign}}
    )


@pytest.mark.parametrize(("region", "part"), PARTITIONS)
def test_the_seeded_roles_are_in_the_clusters_partition(
    fresh: MotoServer, region: str, part: str
) -> None:
    seed_region(fresh.client("ec2", region), region, CLUSTER)
    arns = {r["RoleName"]: r["Arn"] for r in fresh.client("iam", region).list_roles()["Roles"]}
    assert arns[f"KarpenterNodeRole-{CLUSTER}"].startswith(f"arn:{part}:iam::")
    assert arns[SPOT_SERVICE_ROLE].startswith(f"arn:{part}:iam::")


def _pricing(region: str) -> Any:
    client = boto3.session.Session(**FAKE_CREDENTIALS).client(
        "pricing", region_name=region, endpoint_url="http://127.0.0.1:9"
    )
    return client, PricingApi().attach(client)


def _prices(client: Any, region: str) -> list[dict[str, Any]]:
    answer = client.get_products(
        ServiceCode="AmazonEC2",
        Filters=[
            {"Type": "TERM_MATCH", "Field": "regionCode", "Value": region},
            {"Type": "TERM_MATCH", "Field": "instanceType", "Value": "m5.large"},
        ],
    )
    return [json.loads(item) for item in answer["PriceList"]]


def _units(item: dict[str, Any]) -> set[str]:
    return {
        unit
        for term in item["terms"]["OnDemand"].values()
        for dim in term["priceDimensions"].values()
        for unit in dim["pricePerUnit"]
    }


def test_chinas_prices_come_from_cn_northwest_1_in_cny_only() -> None:
    china, _ = _pricing("cn-northwest-1")
    items = _prices(china, "cn-north-1")
    assert len(items) == 1 and _units(items[0]) == {"CNY"}
    assert _prices(china, "us-east-1") == []  # another partition's region: nothing
    commercial, _ = _pricing("us-east-1")
    assert _prices(commercial, "cn-north-1") == []
    assert _units(_prices(commercial, "us-east-1")[0]) == {"USD"}


@pytest.mark.parametrize("region", ["us-gov-west-1", "cn-north-1", "eu-west-1"])
def test_a_region_without_a_pricing_endpoint_cannot_reach_one(region: str) -> None:
    client, api = _pricing(region)
    with pytest.raises(EndpointConnectionError):
        _prices(client, region)
    assert api.answered == 0
