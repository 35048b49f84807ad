"""A launch begun by the previous release (one CreateFleet a claim, client token = the claim's
UID, the claim's tags in the request) and retried by this one, against moto plus the
emulation: EC2 refuses the retry's token with other parameters, and the claim adopts the
earlier request's instance, or retries while EC2's reads do not list it yet. Never a failed
claim, never a second instance.

The emulation's two gaps this needs are tested here too: the token-parameter check and
eventually consistent DescribeInstances.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from activities.ec2.errors import LaunchFailed, TransientError
from activities.ec2.instances import TAG_NODECLAIM
from activities.ec2.launch_batches import MEMBER_TAG_PREFIX
from activities.ec2.launch_types import LaunchResult

EVENT = "before-parameter-build.ec2.CreateFleet"


def live(env: Any) -> list[dict[str, Any]]:
    return [
        i
        for r in env.clients.ec2.describe_instances()["Reservations"]
        for i in r["Instances"]
        if i["State"]["Name"] != "terminated"
    ]


def as_previous_release(params: dict[str, Any], **_: Any) -> None:
    """Rewrite a lone claim's CreateFleet as the previous release sent it: no member tags,
    the claim's own tags in the request (its token, the claim's UID, is the same)."""
    for spec in params["TagSpecifications"]:
        if spec["ResourceType"] != "instance":
            continue
        members = [t["Key"] for t in spec["Tags"] if t["Key"].startswith(MEMBER_TAG_PREFIX)]
        assert len(members) == 1, members  # a lone claim's request
        claim = members[0].removeprefix(MEMBER_TAG_PREFIX)
        spec["Tags"] = [t for t in spec["Tags"] if not t["Key"].startswith(MEMBER_TAG_PREFIX)]
        spec["Tags"] += [
            {"Key": "Name", "Value": f"default/{claim}"},
            {"Key": TAG_NODECLAIM, "Value": claim},
        ]


@pytest.fixture
def launched_by_previous_release(env: Any, make_nodeclass: Any, make_request: Any) -> Iterator[str]:
    """claim-u's launch as the previous release made it; its worker was replaced before the
    answer was recorded. Yields the instance id."""
    env.clients.ec2.meta.events.register(EVENT, as_previous_release)
    try:
        old = env.provider.launch(make_request.build("claim-u"), make_nodeclass.build())
    finally:
        env.clients.ec2.meta.events.unregister(EVENT, as_previous_release)
    assert env.emulation.fleet_calls[-1]["token"] == "uid-claim-u"
    yield old.instance_id


def test_a_retry_refused_for_its_token_adopts_the_earlier_requests_instance(
    env: Any, make_nodeclass: Any, make_request: Any, launched_by_previous_release: str
) -> None:
    earlier = launched_by_previous_release
    # EC2's reads do not list it yet when the retry looks before launching; they do after.
    env.emulation.hide_from_describe(earlier, reads=1)
    calls = len(env.emulation.fleet_calls)
    result = env.provider.launch(make_request.build("claim-u"), make_nodeclass.build())
    assert isinstance(result, LaunchResult)
    assert result.instance_id == earlier and result.reused
    assert [i["InstanceId"] for i in live(env)] == [earlier]  # no second instance
    # the retry did ask EC2, and EC2 refused: the earlier request alone launched
    assert env.emulation.refused_tokens == ["uid-claim-u"]
    assert len(env.emulation.fleet_calls) == calls


def test_a_retry_refused_for_its_token_waits_while_the_instance_is_not_listed(
    env: Any, make_nodeclass: Any, make_request: Any, launched_by_previous_release: str
) -> None:
    earlier = launched_by_previous_release
    env.emulation.hide_from_describe(earlier)
    calls = len(env.emulation.fleet_calls)
    with pytest.raises(TransientError, match="IdempotentParameterMismatch") as refused:
        env.provider.launch(make_request.build("claim-u"), make_nodeclass.build())
    assert refused.value.retryable  # the claim is retried, not failed and re-planned
    assert env.emulation.refused_tokens == ["uid-claim-u"]
    assert len(env.emulation.fleet_calls) == calls  # refused: nothing launched
    env.emulation.reveal(earlier)
    assert [i["InstanceId"] for i in live(env)] == [earlier]
    result = env.provider.launch(make_request.build("claim-u"), make_nodeclass.build())
    assert result.instance_id == earlier and result.reused
    assert [i["InstanceId"] for i in live(env)] == [earlier]


def test_a_retry_refused_for_its_token_whose_instance_has_ended_fails_to_be_planned_again(
    env: Any, make_nodeclass: Any, make_request: Any, launched_by_previous_release: str
) -> None:
    """The earlier request's instance is terminated: waiting would only run out the launch's
    time to live, so the claim fails now (as an insufficient-capacity claim does) and its
    pods are planned again."""
    env.clients.ec2.terminate_instances(InstanceIds=[launched_by_previous_release])
    calls = len(env.emulation.fleet_calls)
    with pytest.raises(LaunchFailed, match=r"terminated|shutting-down") as failed:
        env.provider.launch(make_request.build("claim-u"), make_nodeclass.build())
    assert not failed.value.retryable and launched_by_previous_release in str(failed.value)
    assert len(env.emulation.fleet_calls) == calls and live(env) == []


# -- the emulation ------------------------------------------------------------------------------
def test_the_emulation_refuses_a_token_used_with_other_parameters(
    env: Any, make_nodeclass: Any, make_request: Any
) -> None:
    sent: list[dict[str, Any]] = []

    def keep(params: dict[str, Any], **_: Any) -> None:
        sent.append(copy.deepcopy(params))

    env.clients.ec2.meta.events.register(EVENT, keep)
    first = env.provider.launch(make_request.build("claim-e"), make_nodeclass.build())
    env.clients.ec2.meta.events.unregister(EVENT, keep)
    (params,) = sent
    # the same request again (boto3's own retry of a lost answer): EC2's first answer
    again = env.clients.ec2.create_fleet(**copy.deepcopy(params))
    assert again["Instances"][0]["InstanceIds"] == [first.instance_id]
    # the same token with other parameters: refused, nothing launched
    other = copy.deepcopy(params)
    other["TagSpecifications"][0]["Tags"].append({"Key": "extra", "Value": "x"})
    with pytest.raises(ClientError) as refused:
        env.clients.ec2.create_fleet(**other)
    assert refused.value.response["Error"]["Code"] == "IdempotentParameterMismatch"
    assert env.emulation.refused_tokens == [params["ClientToken"]]
    assert [i["InstanceId"] for i in live(env)] == [first.instance_id]


def test_the_emulation_hides_a_new_instance_from_the_next_reads(
    env: Any, make_nodeclass: Any, make_request: Any
) -> None:
    result = env.provider.launch(make_request.build("claim-h"), make_nodeclass.build())
    by_tag = [{"Name": f"tag:{TAG_NODECLAIM}", "Values": ["claim-h"]}]

    def listed() -> list[str]:
        answer = env.clients.ec2.describe_instances(Filters=by_tag)
        return [i["InstanceId"] for r in answer["Reservations"] for i in r["Instances"]]

    env.emulation.hide_from_describe(result.instance_id, reads=2)
    assert listed() == [] and listed() == []
    assert listed() == [result.instance_id]
    env.emulation.hide_from_describe(result.instance_id)
    assert listed() == []
    env.emulation.reveal(result.instance_id)
    assert listed() == [result.instance_id]
