"""Answers a real AWS account gives that moto never does, emulated in ``sandbox/ec2`` and met.

Each behaviour is shown twice: the emulation answers as EC2 does (so the gap is real here),
then the provider goes through it: eventual consistency right after a launch, an account
without the Spot service-linked role, the fleet quota, IMDS tags on by the account's default,
and interruption messages about instances of the account that are not the cluster's.
"""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from activities.ec2.errors import InsufficientCapacity, TransientError
from activities.ec2.instances import cluster_tag
from activities.ec2.interruption import InterruptionEvent, InterruptionQueue
from activities.ec2.pricing import (
    OFFLINE_FALLBACK,
    PRICING_API,
    PricingProvider,
    offline_table,
)
from sandbox.ec2.faults import SERVER_ERROR, FaultInjector
from sandbox.ec2.pricing_api import PricingApi
from tests.support.ec2_launches import M5_FAMILY, event, instances, lt_data, request

# EC2's answer to a spot launch in an account without the Spot service-linked role
SPOT_SERVICE_LINKED_ROLE_CODE = "AuthFailure.ServiceLinkedRoleCreationNotPermitted"
SPOT_OR_ON_DEMAND = {
    "key": "karpenter.sh/capacity-type",
    "operator": "In",
    "values": ["spot", "on-demand"],
}


def _no_pauses(env: Any, monkeypatch: pytest.MonkeyPatch) -> list[float]:
    pauses: list[float] = []
    monkeypatch.setattr(env.provider.instances, "_sleep", pauses.append, raising=False)
    return pauses


def _template_name(env: Any) -> str:
    return str(
        env.clients.ec2.describe_launch_templates()["LaunchTemplates"][0]["LaunchTemplateName"]
    )


# -- eventual consistency after a launch ------------------------------------------------------
def test_emulated_new_instance_is_unknown_to_create_tags_for_a_few_calls(
    env: Any, make_nodeclass: Any
) -> None:
    launched = env.provider.launch(request("claim-known"), make_nodeclass.build())
    env.emulation.delay_new_instances(2)
    env.emulation._launched([launched.instance_id])  # as if it had just been launched
    ec2 = env.clients.ec2
    tag = [{"Key": "k", "Value": "v"}]
    for _ in range(2):
        with pytest.raises(ClientError, match=r"InvalidInstanceID\.NotFound"):
            ec2.create_tags(Resources=[launched.instance_id], Tags=tag)
    ec2.create_tags(Resources=[launched.instance_id], Tags=tag)  # known now


def test_launch_waits_out_a_new_instance_unknown_to_create_tags(
    env: Any, make_nodeclass: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    pauses = _no_pauses(env, monkeypatch)
    env.emulation.delay_new_instances(3)
    result = env.provider.launch(request("claim-late"), make_nodeclass.build())
    assert pauses == [0.2, 0.4, 0.8]  # three refusals waited out, then tagged
    env.emulation.reveal(result.instance_id)  # EC2's reads have caught up
    assert env.provider.get(result.instance_id).nodeclaim == "claim-late"
    assert [i["InstanceId"] for i in instances(env)] == [result.instance_id]


def test_launch_unknown_for_long_is_retryable_and_never_launches_twice(
    env: Any, make_nodeclass: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _no_pauses(env, monkeypatch)
    nc = make_nodeclass.build()
    env.emulation.delay_new_instances(100)
    with pytest.raises(TransientError) as err:
        env.provider.launch(request("claim-slow"), nc)
    assert err.value.retryable  # the activity retries; it must not end the claim
    env.emulation.delay_new_instances(0)  # EC2 catches up
    env.emulation.untaggable.clear()
    env.emulation.hidden.clear()
    [first] = instances(env)
    again = env.provider.launch(request("claim-slow"), nc)  # the retry
    assert again.instance_id == first["InstanceId"]
    assert [i["InstanceId"] for i in instances(env)] == [first["InstanceId"]]
    assert env.provider.get(again.instance_id).nodeclaim == "claim-slow"


# -- the Spot service-linked role ------------------------------------------------------------
def test_account_without_spot_role_refuses_spot_and_spot_becomes_unavailable(
    env: Any, make_nodeclass: Any
) -> None:
    nc = make_nodeclass.build()
    env.emulation.refuse_fleets("spot", SPOT_SERVICE_LINKED_ROLE_CODE)
    with pytest.raises(InsufficientCapacity) as err:
        env.provider.launch(request("claim-spot", "spot"), nc)
    assert err.value.code == SPOT_SERVICE_LINKED_ROLE_CODE
    assert instances(env) == []
    # every spot offering is now unavailable, whatever type or zone
    assert env.provider.unavailable.is_unavailable("spot", "m5.large", "us-east-1a")
    assert env.provider.unavailable.is_unavailable("spot", "c5.xlarge", "us-east-1c")
    assert not env.provider.unavailable.is_unavailable("on-demand", "m5.large", "us-east-1a")
    # a claim that allows both gets on-demand, without trying spot again
    calls = len(env.emulation.fleet_calls)
    either = request("claim-either", requirements=[SPOT_OR_ON_DEMAND])
    either.requirements = [*M5_FAMILY, SPOT_OR_ON_DEMAND]
    assert env.provider.launch(either, nc).capacity_type == "on-demand"
    assert [c["capacity_type"] for c in env.emulation.fleet_calls[calls:]] == ["on-demand"]


# -- the fleet quota -------------------------------------------------------------------------
def test_fleet_quota_reached_is_insufficient_capacity_for_the_pools_tried(
    env: Any, make_nodeclass: Any
) -> None:
    env.emulation.refuse_fleets("on-demand", "MaxFleetCountExceeded")
    with pytest.raises(InsufficientCapacity) as err:
        env.provider.launch(request("claim-quota"), make_nodeclass.build())
    assert err.value.code == "MaxFleetCountExceeded" and not err.value.retryable
    assert err.value.pools  # each refused pool is in the unavailable-offerings cache
    pool = err.value.pools[0]
    assert env.provider.unavailable.is_unavailable(
        pool.capacity_type, pool.instance_type, pool.zone
    )


# -- IMDS instance tags on by the account's default ------------------------------------------
def test_account_exposing_tags_in_imds_refuses_templates_that_leave_it_unset(
    env: Any, make_nodeclass: Any
) -> None:
    env.emulation.metadata_tags_default = "enabled"
    result = env.provider.launch(request("claim-imds"), make_nodeclass.build())
    name = _template_name(env)
    assert lt_data(env, name)["MetadataOptions"]["InstanceMetadataTags"] == "disabled"
    assert env.provider.get(result.instance_id).nodeclaim == "claim-imds"
    # the emulated account refuses a template that does not say it, as EC2 would
    bare = env.clients.ec2.create_launch_template(
        LaunchTemplateName="bare",
        LaunchTemplateData={"ImageId": lt_data(env, name)["ImageId"]},
    )["LaunchTemplate"]["LaunchTemplateName"]
    with pytest.raises(ClientError, match="InvalidParameterValue"):
        env.clients.ec2.create_fleet(
            Type="instant",
            TargetCapacitySpecification={
                "TotalTargetCapacity": 1,
                "DefaultTargetCapacityType": "on-demand",
            },
            LaunchTemplateConfigs=[
                {
                    "LaunchTemplateSpecification": {
                        "LaunchTemplateName": bare,
                        "Version": "$Latest",
                    },
                    "Overrides": [
                        {
                            "InstanceType": "m5.large",
                            "SubnetId": env.seeded.network.subnets["us-east-1a"],
                        }
                    ],
                }
            ],
            TagSpecifications=[
                {"ResourceType": "instance", "Tags": [{"Key": "karpenter.sh/x", "Value": "y"}]}
            ],
        )


# -- interruption messages about other instances of the account -------------------------------
def _stop_event(instance_id: str) -> str:
    return event(
        "aws.ec2",
        "EC2 Instance State-change Notification",
        {"instance-id": instance_id, "state": "stopping"},
    )


def test_interruption_about_another_instance_of_the_account_is_deleted_at_once(
    env: Any, make_nodeclass: Any
) -> None:
    ec2, sqs = env.clients.ec2, env.clients.sqs
    image = env.seeded.amis.images[("al2023", "standard", "x86_64")]
    other = ec2.run_instances(ImageId=image, MinCount=1, MaxCount=1, InstanceType="t3.micro")
    other_id = other["Instances"][0]["InstanceId"]  # the account's, not the cluster's
    ours = env.provider.launch(request("claim-ours"), make_nodeclass.build()).instance_id
    assert env.provider.get(ours).tags[cluster_tag(env.settings.cluster.name)] == "owned"
    url = sqs.create_queue(QueueName="account-events")["QueueUrl"]
    for instance_id in (other_id, ours):
        sqs.send_message(QueueUrl=url, MessageBody=_stop_event(instance_id))
    queue = InterruptionQueue(
        sqs, url, wait_seconds=0, retry_seconds=0, owned=env.provider.instances.any_owned
    )
    seen: list[InterruptionEvent] = []

    def nobody_known(e: InterruptionEvent) -> bool:
        seen.append(e)
        return False  # the watchers know no claim for either yet

    deleted = 0
    for _ in range(3):  # SQS may hand the two messages over in separate receives
        deleted += queue.poll_once(nobody_known)
    assert deleted == 1  # the other instance's message, on its first delivery
    left = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert left["ApproximateNumberOfMessages"] == "1"  # ours: kept until its claim is known
    kept = json.loads(sqs.receive_message(QueueUrl=url)["Messages"][0]["Body"])
    assert kept["detail"]["instance-id"] == ours


# -- prices when the Pricing API cannot help -------------------------------------------------
def _pricing_client() -> Any:
    return boto3.client(
        "pricing",
        region_name="us-east-1",
        endpoint_url="http://127.0.0.1:9",  # never reached: faults or the emulated API answer
        aws_access_key_id="x",
        aws_secret_access_key="x",
        config=Config(retries={"max_attempts": 1}),
    )


@pytest.mark.parametrize("api", ["unreachable", "isolated-vpc"])
def test_region_the_table_lacks_gets_us_east_1_prices_when_the_api_cannot_answer(
    api: str,
) -> None:
    client = None
    if api == "unreachable":
        client = _pricing_client()
        faults = FaultInjector().attach(client)
        for _ in range(5):
            faults.inject("GetProducts", SERVER_ERROR)
    assert "eu-west-3" not in offline_table()
    pricing = PricingProvider("eu-west-3", ec2=None, pricing=client)
    pricing.refresh_on_demand()
    assert pricing.on_demand_source == OFFLINE_FALLBACK
    assert pricing.on_demand_price("m5.large") == offline_table()["us-east-1"]["m5.large"]


def test_a_type_the_api_answer_lacks_keeps_the_table_price() -> None:
    client = _pricing_client()
    PricingApi().attach(client)  # answers from the package's us-east-1 table
    table = {k: dict(v) for k, v in offline_table().items()}
    table["us-east-1"]["m9z.large"] = 0.5  # a type the API's answer does not hold
    pricing = PricingProvider("us-east-1", ec2=None, pricing=client, offline=table)
    pricing.refresh_on_demand()
    assert pricing.on_demand_source == PRICING_API
    assert pricing.on_demand_price("m9z.large") == 0.5
    assert pricing.on_demand_price("m5.large") == offline_table()["us-east-1"]["m5.large"]
