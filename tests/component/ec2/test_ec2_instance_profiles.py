"""Instance profiles from ``spec.role`` through moto's IAM: create, tag, reconcile, collect."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from activities.ec2.clients import AWSClients
from activities.ec2.instance_profiles import InstanceProfiles, profile_name
from activities.ec2.launch_types import LaunchRequest
from activities.ec2.provider import EC2Provider
from activities.ec2.settings import ProviderSettings

REGION = "us-east-1"
CLUSTER = "test-cluster"
ROLE = f"KarpenterNodeRole-{CLUSTER}"  # seeded by sandbox.ec2.seed
PREFIX = f"/karpenter/{REGION}/{CLUSTER}/"


@pytest.fixture
def managed(env: Any, session_catalog: Any) -> EC2Provider:
    settings = ProviderSettings(
        region=REGION, cluster=env.settings.cluster, manage_instance_profiles=True
    )
    clients = AWSClients.create(REGION, env.server.endpoint_url, env.server.session())
    provider = EC2Provider.create(settings, clients, clock=env.clock)
    provider.catalog.use_raw(session_catalog.raw)
    provider.pricing.load(session_catalog.on_demand, session_catalog.spot, session_catalog.source)
    return provider


def cond(resolved: Any, type_: str) -> Any:
    return next(c for c in resolved.conditions if c.type == type_)


def create_role(env: Any, name: str) -> None:
    trust = {"Version": "2012-10-17", "Statement": []}
    env.clients.iam.create_role(RoleName=name, AssumeRolePolicyDocument=json.dumps(trust))


def test_role_gets_a_tagged_profile_that_launches_use(
    env: Any, managed: EC2Provider, make_nodeclass: Any
) -> None:
    nc = make_nodeclass.build(role=ROLE, tags={"team": "infra"})
    resolved = managed.resolve_nodeclass(nc)
    assert cond(resolved, "InstanceProfileReady").status == "True"
    assert resolved.ready
    name = profile_name(CLUSTER, REGION, "default")
    assert resolved.instance_profile == name == resolved.status().instance_profile
    profile = env.clients.iam.get_instance_profile(InstanceProfileName=name)["InstanceProfile"]
    assert [r["RoleName"] for r in profile["Roles"]] == [ROLE]
    assert profile["Path"] == f"{PREFIX}default/"
    tags = {t["Key"]: t["Value"] for t in profile["Tags"]}
    assert tags == {
        "team": "infra",
        "karpenter.sh/managed-by": CLUSTER,
        f"kubernetes.io/cluster/{CLUSTER}": "owned",
        "karpenter.k8s.aws/ec2nodeclass": "default",
        "topology.kubernetes.io/region": REGION,
    }
    request = LaunchRequest(
        nodeclaim_name="claim-p",
        nodeclaim_uid="uid-p",
        nodepool_name="default",
        nodeclass_name="default",
        requirements=[
            {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large"]}
        ],
        resources={"cpu": "1"},
    )
    launched = managed.launch(request, nc)
    # the emulation gives the instance its template's profile, as EC2 does (moto does not)
    assert managed.instances.get(launched.instance_id).instance_profile == name
    [lt] = env.clients.ec2.describe_launch_templates()["LaunchTemplates"]
    data = env.clients.ec2.describe_launch_template_versions(
        LaunchTemplateName=lt["LaunchTemplateName"]
    )["LaunchTemplateVersions"][0]["LaunchTemplateData"]
    assert data["IamInstanceProfile"] == {"Name": name}
    assert base64.b64decode(data["UserData"])  # a real template, not an empty one


def _launch(managed: EC2Provider, nc: Any, claim: str) -> str:
    request = LaunchRequest(
        nodeclaim_name=claim,
        nodeclaim_uid=f"uid-{claim}",
        nodepool_name="default",
        nodeclass_name=nc.name,
        requirements=[
            {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large"]}
        ],
        resources={"cpu": "1"},
    )
    return managed.launch(request, nc).instance_id


def test_a_role_change_makes_a_new_profile_and_keeps_the_old_while_used(
    env: Any, managed: EC2Provider, make_nodeclass: Any
) -> None:
    """Swapping the role inside the profile running nodes use would take their credentials
    away mid-swap; as Karpenter, a new role gets a new profile, and the old one goes only
    once no instance uses it."""
    first = profile_name(CLUSTER, REGION, "default")
    old_node = _launch(managed, make_nodeclass.build(role=ROLE), "claim-old")
    create_role(env, "OtherNodeRole")
    changed = make_nodeclass.build(role="OtherNodeRole")
    resolved = managed.resolve_nodeclass(changed)
    assert cond(resolved, "InstanceProfileReady").status == "True"
    second = resolved.instance_profile
    assert second == profile_name(CLUSTER, REGION, "default", "OtherNodeRole") != first
    roles = {
        p["InstanceProfileName"]: [r["RoleName"] for r in p["Roles"]]
        for p in env.clients.iam.list_instance_profiles(PathPrefix=PREFIX)["InstanceProfiles"]
    }
    assert roles == {first: [ROLE], second: ["OtherNodeRole"]}  # the old one untouched
    # a second worker (no cache) reaches the same profile, and makes no twin
    other = InstanceProfiles(env.clients.iam, CLUSTER, REGION)
    assert other.ensure(changed).name == second
    assert len(env.clients.iam.list_instance_profiles(PathPrefix=PREFIX)["InstanceProfiles"]) == 2
    # and back: the profile that holds the role is found again, not a third one made
    assert other.ensure(make_nodeclass.build(role=ROLE)).name == first
    later = datetime.now(UTC) + timedelta(minutes=10)
    now_roles = {"default": "OtherNodeRole"}
    # the old profile stays while the instance launched with it runs
    assert (
        managed.garbage_collect(["default"], now=later, roles=now_roles)["instanceProfiles"] == []
    )
    managed.delete(old_node)
    assert managed.garbage_collect(["default"], now=later, roles=now_roles)["instanceProfiles"] == [
        first
    ]
    listed = env.clients.iam.list_instance_profiles(PathPrefix=PREFIX)["InstanceProfiles"]
    assert [p["InstanceProfileName"] for p in listed] == [second]


def test_missing_role_is_reported_and_creates_nothing(
    env: Any, managed: EC2Provider, make_nodeclass: Any
) -> None:
    resolved = managed.resolve_nodeclass(make_nodeclass.build(role="NoSuchRole"))
    c = cond(resolved, "InstanceProfileReady")
    assert c is not None and (c.status, c.reason) == ("False", "RoleNotFound")
    assert "NoSuchRole" in c.message
    reason = resolved.not_ready_reason()
    assert not resolved.ready and reason is not None and reason.reason == "RoleNotFound"
    assert env.clients.iam.list_instance_profiles(PathPrefix=PREFIX)["InstanceProfiles"] == []


def test_premade_instance_profile(env: Any, managed: EC2Provider, make_nodeclass: Any) -> None:
    env.clients.iam.create_instance_profile(InstanceProfileName="premade")
    ok = managed.resolve_nodeclass(make_nodeclass.build(role=None, instanceProfile="premade"))
    assert cond(ok, "InstanceProfileReady").status == "True" and ok.instance_profile == "premade"
    bad = managed.resolve_nodeclass(make_nodeclass.build(role=None, instanceProfile="absent"))
    c = cond(bad, "InstanceProfileReady")
    assert (c.status, c.reason) == ("False", "InstanceProfileNotFound")


def test_garbage_collection_deletes_profiles_of_gone_nodeclasses(
    env: Any, managed: EC2Provider, make_nodeclass: Any
) -> None:
    for name in ("keep", "gone"):
        managed.resolve_nodeclass(make_nodeclass.build(name, role=ROLE))
    env.clients.iam.create_instance_profile(InstanceProfileName="not-ours")
    assert managed.profiles is not None
    assert managed.profiles.garbage_collect(["keep"]) == []  # too young: maybe just created
    later = datetime.now(UTC) + timedelta(minutes=10)
    deleted = managed.profiles.garbage_collect(["keep"], now=later)
    assert deleted == [profile_name(CLUSTER, REGION, "gone")]
    left = {
        p["InstanceProfileName"]
        for p in env.clients.iam.list_instance_profiles()["InstanceProfiles"]
    }
    assert left == {profile_name(CLUSTER, REGION, "keep"), "not-ours"}
    # a gone NodeClass whose instance still runs keeps its profile until the instance ends
    nc = make_nodeclass.build("draining", role=ROLE)
    request = LaunchRequest(
        nodeclaim_name="claim-d",
        nodeclaim_uid="uid-d",
        nodepool_name="default",
        nodeclass_name="draining",
        requirements=[
            {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large"]}
        ],
        resources={"cpu": "1"},
    )
    instance = managed.launch(request, nc).instance_id
    assert managed.garbage_collect(["keep"], now=later)["instanceProfiles"] == []
    managed.delete(instance)
    assert managed.garbage_collect(["keep"], now=later)["instanceProfiles"] == [
        profile_name(CLUSTER, REGION, "draining")
    ]
    # the role itself is the user's: never deleted
    assert env.clients.iam.get_role(RoleName=ROLE)["Role"]["RoleName"] == ROLE
