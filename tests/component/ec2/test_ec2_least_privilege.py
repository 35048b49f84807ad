"""The provider's whole EC2 path under exactly the documented policy, with IAM enforcement on.

A user is given docs/deploy.md's policy (activities/ec2/permissions.py, placeholders filled
for this cluster) and the provider runs with that user's keys: discovery, NodeClass
resolution with a managed instance profile, a launch, a spot launch, interruption messages
(received, kept for later, deleted), a drifted NodeClass's second launch,
an orphan's termination, garbage collection of launch templates and instance profiles, and
a termination. Then calls outside the policy are shown to be denied.

moto alone cannot prove this: it authorizes EC2, SSM and EKS calls against the resource
``*`` and evaluates no condition of an identity policy (every ``aws:RequestTag``,
``aws:ResourceTag``, ``aws:TagKeys``, ``ec2:CreateAction``, ``iam:PassedToService`` and
``aws:RequestedRegion`` condition would hold). sandbox/ec2/authorization.py emulates both:
resource ARNs and the request context as AWS builds them for these calls, and IAM's
evaluation of the operators the policy uses.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest

from activities.ec2 import permissions
from activities.ec2.clients import AWSClients
from activities.ec2.errors import EC2Error, LaunchFailed
from activities.ec2.interruption import InterruptionQueue
from activities.ec2.provider import EC2Provider
from activities.ec2.settings import ProviderSettings
from sandbox.ec2.authorization import Authorization, allowed, enforced
from sandbox.ec2.server import MotoServer
from tests.component.ec2.conftest import CLUSTER, REGION, Env, RequestFactory, SessionCatalog
from tests.component.ec2.conftest import nodeclass as build_nodeclass
from tests.support.ec2_launches import event
from worker.cli.doctor_command import MISSING, OK, check_permissions

ACCOUNT = "123456789012"  # moto's default account
NODE_ROLE = f"KarpenterNodeRole-{CLUSTER}"  # seeded by sandbox.ec2.seed
QUEUE = CLUSTER
EVERYTHING = {
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}],
}


@dataclass
class Enforced:
    provider: EC2Provider
    admin: AWSClients  # a user allowed everything: the test's own set-up and checks
    joinery: boto3.session.Session  # the documented policy's user


def _user(iam: Any, name: str, document: dict[str, Any]) -> tuple[boto3.session.Session, str]:
    user = iam.create_user(UserName=name)["User"]
    arn = iam.create_policy(PolicyName=f"{name}-policy", PolicyDocument=json.dumps(document))
    iam.attach_user_policy(UserName=name, PolicyArn=arn["Policy"]["Arn"])
    key = iam.create_access_key(UserName=name)["AccessKey"]
    session = boto3.session.Session(
        aws_access_key_id=key["AccessKeyId"], aws_secret_access_key=key["SecretAccessKey"]
    )
    return session, str(user["Arn"])


@pytest.fixture
def enforced_env(env: Env, session_catalog: SessionCatalog) -> Iterator[Enforced]:
    # Before enforcement moto takes any keys: make the users, the queue, and leave the rest
    # of the seeded region as env made it.
    document = permissions.filled("aws", REGION, ACCOUNT, CLUSTER, QUEUE, NODE_ROLE)
    joinery, _ = _user(env.clients.iam, "joinery", document)
    admin, _ = _user(env.clients.iam, "admin", EVERYTHING)
    env.clients.sqs.create_queue(QueueName=QUEUE)
    settings = ProviderSettings(
        region=REGION,
        cluster=env.settings.cluster,
        manage_instance_profiles=True,
        discover_cluster=True,
        interruption_queue=QUEUE,
    )
    provider = EC2Provider.create(
        settings, AWSClients.create(REGION, env.server.endpoint_url, joinery), clock=env.clock
    )
    provider.catalog.use_raw(session_catalog.raw)
    provider.pricing.load(session_catalog.on_demand, session_catalog.spot, session_catalog.source)
    admin_clients = AWSClients.create(REGION, env.server.endpoint_url, admin)
    try:
        with enforced():
            yield Enforced(provider, admin_clients, joinery)
    finally:
        env.server.reset()  # users, policies and keys gone: later tests meet a fresh moto


def _instance(clients: AWSClients, instance_id: str) -> dict[str, Any]:
    [reservation] = clients.ec2.describe_instances(InstanceIds=[instance_id])["Reservations"]
    instance: dict[str, Any] = reservation["Instances"][0]
    return instance


def _tags(clients: AWSClients, instance_id: str) -> dict[str, str]:
    return {t["Key"]: t["Value"] for t in _instance(clients, instance_id)["Tags"]}


def _state(clients: AWSClients, instance_id: str) -> str:
    return str(_instance(clients, instance_id)["State"]["Name"])


def test_the_whole_path_runs_under_the_documented_policy(enforced_env: Enforced) -> None:
    provider, admin = enforced_env.provider, enforced_env.admin
    assert permissions.unassigned() == []
    # resolution: discovery (eks), selectors, the AMI alias (ssm), a managed profile (iam)
    nodeclass = build_nodeclass(role=NODE_ROLE)
    resolved = provider.resolve_nodeclass(nodeclass)
    assert resolved.ready, resolved.conditions
    assert resolved.instance_profile

    # a launch: launch template, CreateFleet with its tags, then the claim's tags
    first = provider.launch(RequestFactory.build("claim-a"), nodeclass)
    tags = _tags(admin, first.instance_id)
    assert tags["karpenter.sh/nodeclaim"] == "claim-a"
    assert tags[f"kubernetes.io/cluster/{CLUSTER}"] == "owned"

    # a spot launch (EC2 also creates a spot request, which Joinery does not tag)
    spot = RequestFactory.build(
        "claim-spot",
        requirements=[
            {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large"]},
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]},
        ],
    )
    spot_launch = provider.launch(spot, nodeclass)
    assert spot_launch.capacity_type == "spot"

    # the interruption queue: a warning for our spot instance is handled and deleted; one for
    # an instance not known yet, but this cluster's, is kept for a later delivery
    url = admin.sqs.get_queue_url(QueueName=QUEUE)["QueueUrl"]
    for instance_id in (spot_launch.instance_id, first.instance_id):
        detail = {"instance-id": instance_id, "instance-action": "terminate"}
        body = event("aws.ec2", "EC2 Spot Instance Interruption Warning", detail)
        admin.sqs.send_message(QueueUrl=url, MessageBody=body)
    queue = InterruptionQueue(
        provider.clients.sqs, QUEUE, wait_seconds=0, owned=provider.instances.any_owned
    )
    assert queue.poll_once(lambda e: spot_launch.instance_id in e.instance_ids) == 1
    assert provider.delete(spot_launch.instance_id) is False

    # drift: the NodeClass changed, its replacement comes from a second launch template
    drifted = build_nodeclass(role=NODE_ROLE, detailedMonitoring=True)
    provider.resolve_nodeclass(drifted)
    second = provider.launch(RequestFactory.build("claim-b"), drifted)
    templates = admin.ec2.describe_launch_templates()["LaunchTemplates"]
    assert len(templates) == 3  # first, spot, drifted

    # the drifted node is terminated; an orphan (its claim is gone) is collected
    assert provider.delete(first.instance_id) is False  # termination started
    orphan = provider.launch(RequestFactory.build("claim-orphan"), drifted)
    known = {"claim-b"}
    collected = [i.id for i in provider.list_owned() if i.nodeclaim not in known]
    assert collected == [orphan.instance_id]
    for instance_id in collected:
        provider.delete(instance_id)
    assert _state(admin, first.instance_id) in ("shutting-down", "terminated")
    assert _state(admin, orphan.instance_id) in ("shutting-down", "terminated")

    # garbage collection: the unused template, and the profile of a NodeClass that is gone
    # once its last instance ends
    later = datetime.now(UTC) + timedelta(minutes=10)
    deleted = provider.garbage_collect(["default"], now=later)
    in_use = _tags(admin, second.instance_id)["aws:ec2launchtemplate:id"]
    name_of = {t["LaunchTemplateId"]: t["LaunchTemplateName"] for t in templates}
    assert sorted(deleted["launchTemplates"]) == sorted(
        name for lt_id, name in name_of.items() if lt_id != in_use
    )
    provider.delete(second.instance_id)
    deleted = provider.garbage_collect([], now=later)
    assert deleted["launchTemplates"] == [name_of[in_use]]
    assert deleted["instanceProfiles"] == [resolved.instance_profile]
    assert admin.ec2.describe_launch_templates()["LaunchTemplates"] == []
    assert admin.iam.list_instance_profiles()["InstanceProfiles"] == []


def test_calls_outside_the_policy_are_denied(enforced_env: Enforced) -> None:
    provider, admin = enforced_env.provider, enforced_env.admin
    nodeclass = build_nodeclass(role=NODE_ROLE)
    provider.resolve_nodeclass(nodeclass)
    ours = provider.launch(RequestFactory.build("claim-a"), nodeclass).instance_id
    image = _instance(admin, ours)["ImageId"]
    foreign = admin.ec2.run_instances(ImageId=image, MinCount=1, MaxCount=1)["Instances"][0][
        "InstanceId"
    ]

    # terminating an instance without the cluster tag: EC2 refuses, Joinery reports a
    # permanent failure (retrying the same call cannot help) naming the call
    with pytest.raises(LaunchFailed) as denied:
        provider.delete(foreign)
    assert denied.value.code == "UnauthorizedOperation"
    assert not denied.value.retryable
    assert "TerminateInstances" in str(denied.value)
    assert _state(admin, foreign) == "running"

    # tagging a foreign instance, or our own with a key outside the post-launch ones
    for instance_id, tags in ((foreign, {"Name": "x"}), (ours, {"team": "x"})):
        with pytest.raises(EC2Error) as refused:
            provider.instances.tag(instance_id, tags)
        assert refused.value.code == "UnauthorizedOperation"
    assert "team" not in {t["Key"] for t in _instance(admin, ours)["Tags"]}

    # a launch tagged for another cluster, and an IAM call the policy never grants
    session = enforced_env.joinery
    ec2 = session.client("ec2", region_name=REGION, endpoint_url=admin.ec2.meta.endpoint_url)
    with pytest.raises(ec2.exceptions.ClientError) as run:
        ec2.run_instances(
            ImageId=image,
            MinCount=1,
            MaxCount=1,
            TagSpecifications=[
                {
                    "ResourceType": "instance",
                    "Tags": [{"Key": "kubernetes.io/cluster/other", "Value": "owned"}],
                }
            ],
        )
    assert run.value.response["Error"]["Code"] == "UnauthorizedOperation"
    assert "instance/" in run.value.response["Error"]["Message"]  # the instance's tag condition
    iam = session.client("iam", region_name=REGION, endpoint_url=admin.ec2.meta.endpoint_url)
    with pytest.raises(iam.exceptions.ClientError) as deleted:
        iam.delete_role(RoleName=NODE_ROLE)
    assert deleted.value.response["Error"]["Code"] == "AccessDenied"


class PolicySimulator:
    """``iam:SimulatePrincipalPolicy`` (which moto lacks) answered by the sandbox's IAM
    evaluation of one policy: an oracle independent of the doctor's code."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document

    def simulate_principal_policy(
        self,
        PolicySourceArn: str,  # boto3 names the parameters so
        ActionNames: list[str],
        ContextEntries: list[dict[str, Any]],
        ResourceArns: list[str] | None = None,
    ) -> dict[str, Any]:
        context = {e["ContextKeyName"].lower(): e["ContextKeyValues"] for e in ContextEntries}
        resource = (ResourceArns or ["*"])[0]
        return {
            "EvaluationResults": [
                {
                    "EvalActionName": action,
                    "EvalDecision": "allowed"
                    if allowed([self.document], Authorization(action, resource, context))
                    else "implicitDeny",
                }
                for action in ActionNames
            ]
        }


def test_doctor_simulates_the_scoped_policy(moto_server: MotoServer) -> None:
    document = permissions.filled("aws", REGION, ACCOUNT, CLUSTER, QUEUE, NODE_ROLE)
    args = (REGION, moto_server.endpoint_url, PolicySimulator(document), CLUSTER, QUEUE)
    [ok] = check_permissions(*args, [NODE_ROLE])
    assert ok.status == OK, ok.line()
    assert f"all {len(permissions.actions())} actions" in ok.line()
    # without the scoped deletion, the role cannot terminate its instances: said so
    trimmed = {
        **document,
        "Statement": [s for s in document["Statement"] if s["Sid"] != "AllowScopedDeletion"],
    }
    [missing] = check_permissions(
        REGION, moto_server.endpoint_url, PolicySimulator(trimmed), CLUSTER, QUEUE, [NODE_ROLE]
    )
    assert missing.status == MISSING and "ec2:TerminateInstances" in missing.line()
    # without a node role, the PassRole statement cannot be simulated: said so, not passed
    [partial] = check_permissions(*args)
    assert (
        partial.status == OK
        and "iam:PassRole" in partial.line()
        and "not checked" in partial.line()
    )
