"""A launch's result names the subnet and security groups its instance was launched into (the
claim records them; drift compares them with the EC2NodeClass's), against moto plus the
emulation: a fresh launch, a batched one, and an instance found again by its claim's tag."""

from __future__ import annotations

import threading
from typing import Any

from activities.ec2.launch_types import LaunchResult


def described(env: Any, instance_id: str) -> dict[str, Any]:
    answer = env.clients.ec2.describe_instances(InstanceIds=[instance_id])
    instance: dict[str, Any] = answer["Reservations"][0]["Instances"][0]
    return instance


def test_a_launch_names_the_subnet_and_security_groups_it_used(
    env: Any, make_nodeclass: Any, make_request: Any
) -> None:
    result = env.provider.launch(make_request.build("claim-a"), make_nodeclass.build())
    instance = described(env, result.instance_id)
    assert result.subnet_id == instance["SubnetId"]
    assert result.subnet_id == env.seeded.network.subnets[result.zone]
    assert result.security_group_ids == sorted(env.seeded.network.security_group_ids)
    # the security groups are what the claim's launch template gives the instance (and EC2
    # puts it in: the emulation applies them, as moto does not)
    assert sorted(g["GroupId"] for g in instance["SecurityGroups"]) == result.security_group_ids
    template = next(t["Value"] for t in instance["Tags"] if t["Key"] == "aws:ec2launchtemplate:id")
    data = env.clients.ec2.describe_launch_template_versions(LaunchTemplateId=template)
    given = data["LaunchTemplateVersions"][0]["LaunchTemplateData"]["SecurityGroupIds"]
    assert sorted(given) == result.security_group_ids


def test_claims_launched_together_each_name_their_own_subnet(
    env: Any, make_nodeclass: Any, make_request: Any
) -> None:
    nodeclass = make_nodeclass.build()
    results: dict[str, LaunchResult] = {}

    def launch(name: str) -> None:
        results[name] = env.provider.launch(make_request.build(name), nodeclass)

    threads = [threading.Thread(target=launch, args=(f"claim-{i}",)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 3
    for r in results.values():
        assert r.subnet_id == described(env, r.instance_id)["SubnetId"]
        assert r.security_group_ids == sorted(env.seeded.network.security_group_ids)


def test_an_instance_found_again_names_what_ec2_describes(
    env: Any, make_nodeclass: Any, make_request: Any
) -> None:
    nodeclass = make_nodeclass.build()
    first = env.provider.launch(make_request.build("claim-r"), nodeclass)
    again = env.provider.launch(make_request.build("claim-r"), nodeclass)
    assert again.reused and again.instance_id == first.instance_id
    instance = described(env, first.instance_id)
    assert again.subnet_id == first.subnet_id == instance["SubnetId"]
    assert again.security_group_ids == sorted(g["GroupId"] for g in instance["SecurityGroups"])
    assert again.security_group_ids == first.security_group_ids
