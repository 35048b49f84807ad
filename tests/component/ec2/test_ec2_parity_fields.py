"""EC2NodeClass fields the parity table (docs/parity.md) names that no other test showed:
AMI selection by ``ssmParameter`` and by ``owner``, and ``context`` reaching the CreateFleet
request. Against moto with the emulation layer, as the other EC2 tests."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sandbox.ec2.seed import EKS_OWNER, add_image
from tests.support.ec2_launches import request

OTHER_OWNER = "111122223333"


def test_ami_terms_by_ssm_parameter_and_by_owner(env: Any, make_nodeclass: Any) -> None:
    resolver = env.provider.resolver
    old = add_image("us-east-1", "team-node-1", "x86_64", datetime(2024, 1, 1, tzinfo=UTC))
    new = add_image("us-east-1", "team-node-2", "x86_64", datetime(2024, 6, 1, tzinfo=UTC))
    theirs = add_image(
        "us-east-1", "team-node-3", "x86_64", datetime(2024, 9, 1, tzinfo=UTC), owner=OTHER_OWNER
    )
    # ssmParameter: the image the parameter names, even when newer ones match its name.
    env.clients.ssm.put_parameter(Name="/team/node-ami", Value=old, Type="String")
    by_ssm = resolver.resolve(
        make_nodeclass.build(amiSelectorTerms=[{"ssmParameter": "/team/node-ami"}])
    )
    assert by_ssm.ready and [a.id for a in by_ssm.amis] == [old]
    # owner: only that account's images; the newest of them wins.
    mine = resolver.resolve(
        make_nodeclass.build(amiSelectorTerms=[{"name": "team-node-*", "owner": OTHER_OWNER}])
    )
    assert [a.id for a in mine.amis] == [theirs]
    eks = resolver.resolve(
        make_nodeclass.build(amiSelectorTerms=[{"name": "team-node-*", "owner": EKS_OWNER}])
    )
    assert [a.id for a in eks.amis] == [new]


def test_context_goes_into_the_fleet_request(env: Any, make_nodeclass: Any) -> None:
    """``spec.context`` is sent as CreateFleet's ``Context`` (as Karpenter sends it); without
    it, no Context is sent."""
    seen: list[dict[str, Any]] = []

    def capture(params: dict[str, Any], **_: Any) -> None:
        seen.append(dict(params))

    env.clients.ec2.meta.events.register("provide-client-params.ec2.CreateFleet", capture)
    env.provider.launch(request(name="claim-ctx"), make_nodeclass.build(context="ctx-reserved-1"))
    env.provider.launch(request(name="claim-plain"), make_nodeclass.build("plain"))
    assert [p.get("Context") for p in seen] == ["ctx-reserved-1", None]


def test_security_groups_by_id(env: Any, make_nodeclass: Any) -> None:
    """A security-group term by ``id`` selects exactly that group, where the discovery tags
    select every group carrying them."""
    ec2 = env.clients.ec2
    [seeded] = env.seeded.network.security_group_ids
    vpc = ec2.describe_security_groups(GroupIds=[seeded])["SecurityGroups"][0]["VpcId"]
    extra = ec2.create_security_group(GroupName="extra-nodes", Description="x", VpcId=vpc)
    tags = ec2.describe_security_groups(GroupIds=[seeded])["SecurityGroups"][0]["Tags"]
    ec2.create_tags(Resources=[extra["GroupId"]], Tags=tags)
    resolver = env.provider.resolver
    tagged = resolver.resolve(make_nodeclass.build())
    assert {g.id for g in tagged.security_groups} == {seeded, extra["GroupId"]}
    by_id = resolver.resolve(
        make_nodeclass.build(securityGroupSelectorTerms=[{"id": extra["GroupId"]}])
    )
    assert by_id.ready and [g.id for g in by_id.security_groups] == [extra["GroupId"]]
