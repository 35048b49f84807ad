"""Placement groups as EC2 keeps them (sandbox/ec2/placement.py and the emulation's groups),
and Karpenter's PlacementGroupDrift on a group deleted and made again under its name.

EC2's rules, from its documentation: each CreatePlacementGroup makes a group with a new id
(a name can be reused once the group is deleted, an id never); an instance launched into a
partition group without a partition number is put in one by EC2, spreading the group's
instances; DescribeInstances shows the group and the partition in ``Placement``.
"""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from models import labels as L
from scheduling.disruption.nodeclass_drift_reasons import nodeclass_drift_reason, read_nodeclass
from scheduling.inputs import Document
from tests.support.ec2_launches import request

IMAGE = "ami-12c6146b"


def _group(ec2: Any, name: str, strategy: str = "cluster", **kw: Any) -> str:
    made = ec2.create_placement_group(GroupName=name, Strategy=strategy, **kw)
    return str(made["PlacementGroup"]["GroupId"])


def test_a_group_made_again_under_its_name_is_another_group(env: Any) -> None:
    ec2 = env.clients.ec2
    first = _group(ec2, "training")
    ec2.delete_placement_group(GroupName="training")
    second = _group(ec2, "training")
    assert second != first
    (found,) = ec2.describe_placement_groups(GroupNames=["training"])["PlacementGroups"]
    assert found["GroupId"] == second
    with pytest.raises(ClientError) as gone:
        ec2.describe_placement_groups(GroupIds=[first])
    assert gone.value.response["Error"]["Code"] == "InvalidPlacementGroup.Unknown"
    with pytest.raises(ClientError):
        ec2.delete_placement_group(GroupName="no-such-group")


def test_ec2_spreads_a_partition_groups_instances_and_says_where(env: Any) -> None:
    ec2 = env.clients.ec2
    group = _group(ec2, "spread-out", "partition", PartitionCount=3)
    ec2.create_launch_template(
        LaunchTemplateName="in-group",
        LaunchTemplateData={"ImageId": IMAGE, "Placement": {"GroupId": group}},
    )
    ec2.create_launch_template(
        LaunchTemplateName="in-partition-3",
        LaunchTemplateData={
            "ImageId": IMAGE,
            "Placement": {"GroupId": group, "PartitionNumber": 3},
        },
    )
    seen = []
    for template in ("in-group", "in-group", "in-partition-3", "in-group"):
        fleet = ec2.create_fleet(
            Type="instant",
            TargetCapacitySpecification={
                "TotalTargetCapacity": 1,
                "DefaultTargetCapacityType": "on-demand",
            },
            LaunchTemplateConfigs=[
                {
                    "LaunchTemplateSpecification": {
                        "LaunchTemplateName": template,
                        "Version": "$Latest",
                    },
                    "Overrides": [{"InstanceType": "m5.large", "AvailabilityZone": "us-east-1a"}],
                }
            ],
        )
        instance_id = fleet["Instances"][0]["InstanceIds"][0]
        described = ec2.describe_instances(InstanceIds=[instance_id])
        placement = described["Reservations"][0]["Instances"][0]["Placement"]
        assert (placement["GroupId"], placement["GroupName"]) == (group, "spread-out")
        seen.append(placement["PartitionNumber"])
    # 1, 2 (fewest first), 3 (asked for), then 1 again (each partition holds one)
    assert seen == [1, 2, 3, 1]


def _class_document(env: Any, nodeclass: Any) -> Document:
    """The class as the worker leaves it: its status and the resolved group's annotation."""
    status = env.provider.nodeclass_status(nodeclass)
    body = {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": nodeclass.name, "annotations": dict(status.annotations)},
        "spec": nodeclass.model_dump(by_alias=True, exclude_none=True)["spec"],
        "status": {k: v for k, v in status.fields.items()},
    }
    return Document(body, "the EC2NodeClass")


def test_a_group_made_again_drifts_the_nodes_launched_into_the_old_one(
    env: Any, make_nodeclass: Any
) -> None:
    ec2 = env.clients.ec2
    old = _group(ec2, "training")
    nodeclass = make_nodeclass.build(placementGroupSelector={"name": "training"})
    launched = env.provider.launch(request(), nodeclass)
    assert launched.labels[L.PLACEMENT_GROUP_ID] == old
    before = read_nodeclass(_class_document(env, nodeclass))
    assert before.placement_group_id == old
    assert nodeclass_drift_reason({}, "", None, before, launched.labels) is None

    ec2.delete_placement_group(GroupName="training")
    new = _group(ec2, "training")
    after = read_nodeclass(_class_document(env, nodeclass))
    assert after.placement_group_id == new
    reason = nodeclass_drift_reason({}, "", None, after, launched.labels)
    assert reason == (
        f"PlacementGroupDrift: launched into {old}, EC2NodeClass default's placement group "
        f"is now {new}"
    )
    # a class without a selector publishes "" and a node outside any group stays put
    plain = make_nodeclass.build()
    assert env.provider.nodeclass_status(plain).annotations == {
        L.NODECLASS_PLACEMENT_GROUP_ANNOTATION: ""
    }


PARTITION = "karpenter.k8s.aws/placement-group-partition"


def _partition_of(env: Any, instance_id: str) -> int:
    described = env.clients.ec2.describe_instances(InstanceIds=[instance_id])
    return int(described["Reservations"][0]["Instances"][0]["Placement"]["PartitionNumber"])


def test_a_partition_group_is_a_topology_and_each_node_says_its_partition(
    env: Any, make_nodeclass: Any
) -> None:
    group = _group(env.clients.ec2, "racks", "partition", PartitionCount=3)
    nodeclass = make_nodeclass.build(placementGroupSelector={"name": "racks"})
    for it in env.provider.instance_types(nodeclass):
        assert it.requirements.get(PARTITION).values == frozenset({"1", "2", "3"})
        assert it.requirements.get(L.PLACEMENT_GROUP_ID).values == frozenset({group})
    # no partition asked for: EC2 chooses, and the label says what it chose
    first = env.provider.launch(request("claim-1"), nodeclass)
    second = env.provider.launch(request("claim-2"), nodeclass)
    for launched in (first, second):
        assert launched.labels[PARTITION] == str(_partition_of(env, launched.instance_id))
    assert {first.labels[PARTITION], second.labels[PARTITION]} == {"1", "2"}
    # a claim narrowed to partitions 2 and 3 goes to the lowest of them
    narrowed = request(
        "claim-3", requirements=[{"key": PARTITION, "operator": "In", "values": ["3", "2"]}]
    )
    third = env.provider.launch(narrowed, nodeclass)
    assert third.labels[PARTITION] == "2" == str(_partition_of(env, third.instance_id))
