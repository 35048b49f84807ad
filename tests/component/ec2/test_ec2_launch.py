"""Launch, ICE, idempotency, termination and GC against moto plus the emulation layer."""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from botocore.exceptions import ClientError

from activities.ec2.errors import InsufficientCapacity, NodeClassNotReady
from activities.ec2.launch_templates import TAG_CLUSTER
from activities.ec2.launch_types import parse_provider_id
from tests.support.ec2_launches import M5_FAMILY, cheapest, instances, lt_data, request


def test_on_demand_launch_picks_the_cheapest_and_tags(env: Any, make_nodeclass: Any) -> None:
    nc = make_nodeclass.build(tags={"cost-center": "42"})
    result = env.provider.launch(request(), nc)
    assert result.instance_type == "m5.large"  # cheapest m5 able to hold the request
    assert result.capacity_type == "on-demand"
    assert parse_provider_id(result.provider_id) == (result.zone, result.instance_id)
    assert result.capacity["pods"] == "29" and result.allocatable["memory"] == "6903Mi"
    assert result.image_id == env.seeded.amis.images[("al2023", "standard", "x86_64")]
    assert result.labels["karpenter.k8s.aws/instance-family"] == "m5"
    inst = env.provider.get(result.instance_id)
    assert inst.tags["karpenter.sh/nodeclaim"] == "claim-a"
    assert inst.tags["karpenter.sh/nodepool"] == "default"
    assert inst.tags["karpenter.k8s.aws/ec2nodeclass"] == "default"
    assert inst.tags["kubernetes.io/cluster/test-cluster"] == "owned"
    assert inst.tags["eks:eks-cluster-name"] == "test-cluster"
    assert inst.tags["cost-center"] == "42"
    # one launch template per (AMI, max pods): m5.large (29 pods) and m5.xlarge (58 pods)
    lts = env.clients.ec2.describe_launch_templates()["LaunchTemplates"]
    assert len(lts) == 2 and all(
        t["LaunchTemplateName"].startswith("karpenter.k8s.aws/") for t in lts
    )
    data = next(
        d
        for d in map(lambda t: lt_data(env, t["LaunchTemplateName"]), lts)
        if "maxPods: 29" in base64.b64decode(d["UserData"]).decode()
    )
    user_data = base64.b64decode(data["UserData"]).decode()
    assert "kind: NodeConfig" in user_data and "multipart/mixed" in user_data
    assert "team=web" in user_data and "karpenter.sh/nodepool=default" in user_data
    assert "key: dedicated" in user_data and "karpenter.sh/unregistered" in user_data
    assert "maxPods: 29" in user_data
    assert data["MetadataOptions"]["HttpTokens"] == "required"


def test_spot_launch_prefers_the_cheapest_spot_pool(env: Any, make_nodeclass: Any) -> None:
    nc = make_nodeclass.build()
    _, itype, zone = cheapest(env, nc, "spot", {"m5.large", "m5.xlarge"})
    result = env.provider.launch(request(capacity="spot"), nc)
    assert (result.capacity_type, result.instance_type, result.zone) == ("spot", itype, zone)
    assert env.provider.get(result.instance_id).capacity_type == "spot"


def test_capacity_type_falls_back_to_on_demand_when_spot_is_not_offered(
    env: Any, make_nodeclass: Any
) -> None:
    nc = make_nodeclass.build()
    for t in env.provider.instance_types(nc):
        if t.name in ("m5.large", "m5.xlarge"):
            for o in t.offerings:
                if o.capacity_type == "spot":
                    env.provider.unavailable.mark_unavailable("spot", t.name, o.zone)
    both = [
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "on-demand"]}
    ]
    req = request()
    req.requirements = [*M5_FAMILY, *both]
    assert env.provider.launch(req, nc).capacity_type == "on-demand"


def test_ice_moves_the_next_launch_and_expires(env: Any, make_nodeclass: Any) -> None:
    nc = make_nodeclass.build()
    _, itype, zone = cheapest(env, nc, "spot", {"m5.large", "m5.xlarge"})
    env.emulation.inject_insufficient_capacity("spot", itype, zone)
    first = env.provider.launch(request("claim-1", "spot"), nc)
    assert (first.instance_type, first.zone) != (itype, zone)
    assert env.provider.unavailable.is_unavailable("spot", itype, zone)
    # the catalog now shows the pool unavailable, and the next launch does not even try it
    t = next(t for t in env.provider.instance_types(nc) if t.name == itype)
    assert not next(
        o for o in t.offerings if o.zone == zone and o.capacity_type == "spot"
    ).available
    env.provider.launch(request("claim-2", "spot"), nc)
    assert env.emulation.fleet_calls[-1]["errors"] == 0
    # three minutes later the pool is back
    env.emulation.clear_insufficient_capacity()
    env.clock.advance(181)
    assert not env.provider.unavailable.is_unavailable("spot", itype, zone)
    third = env.provider.launch(request("claim-3", "spot"), nc)
    assert (third.instance_type, third.zone) == (itype, zone)


def test_ice_everywhere_raises_typed_error(env: Any, make_nodeclass: Any) -> None:
    nc = make_nodeclass.build()
    for t in env.provider.instance_types(nc):
        if t.name in ("m5.large", "m5.xlarge"):
            for o in t.offerings:
                env.emulation.inject_insufficient_capacity(o.capacity_type, t.name, o.zone)
    with pytest.raises(InsufficientCapacity) as err:
        env.provider.launch(request(), nc)
    assert not err.value.retryable and len(err.value.pools) >= 10
    with pytest.raises(InsufficientCapacity, match="no available offering"):
        env.provider.launch(request("claim-b"), nc)  # everything is cached as unavailable
    assert instances(env) == []


def test_retried_launch_returns_the_same_instance(env: Any, make_nodeclass: Any) -> None:
    nc = make_nodeclass.build()
    first = env.provider.launch(request(), nc)
    again = env.provider.launch(request(), nc)
    assert again.instance_id == first.instance_id and again.reused
    assert again.capacity == first.capacity
    # same client token straight to CreateFleet with other parameters (as if the tag lookup
    # lost a race to an earlier release's request): EC2 refuses it, nothing more launches
    # (test_ec2_launch_upgrade.py: the launcher then adopts the earlier instance)
    with pytest.raises(ClientError, match="IdempotentParameterMismatch"):
        env.clients.ec2.create_fleet(
            Type="instant",
            ClientToken="uid-claim-a",
            TargetCapacitySpecification={
                "TotalTargetCapacity": 1,
                "DefaultTargetCapacityType": "on-demand",
            },
            LaunchTemplateConfigs=[
                {
                    "LaunchTemplateSpecification": {
                        "LaunchTemplateName": env.clients.ec2.describe_launch_templates()[
                            "LaunchTemplates"
                        ][0]["LaunchTemplateName"],
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
        )
    assert [i["InstanceId"] for i in instances(env)] == [first.instance_id]


def test_terminate_twice_and_get_after(env: Any, make_nodeclass: Any) -> None:
    result = env.provider.launch(request(), make_nodeclass.build())
    assert env.provider.delete(result.instance_id) is False  # termination started
    assert env.provider.delete(result.instance_id) is True  # already gone: done
    assert env.provider.delete("i-0123456789abcdef0") is True  # never existed: done
    from activities.ec2.errors import InstanceNotFound

    with pytest.raises(InstanceNotFound):
        env.provider.get(result.instance_id)


def test_gc_lists_owned_instances_without_nodeclaims(env: Any, make_nodeclass: Any) -> None:
    nc = make_nodeclass.build()
    kept = env.provider.launch(request("kept"), nc)
    leaked = env.provider.launch(request("leaked"), nc)
    # an instance of another cluster / not launched by us is never listed
    env.clients.ec2.run_instances(
        ImageId=kept.image_id, InstanceType="m5.large", MinCount=1, MaxCount=1
    )
    owned = {i.id for i in env.provider.list_owned()}
    assert owned == {kept.instance_id, leaked.instance_id}
    later = datetime.now(UTC) + timedelta(minutes=5)
    gone = env.provider.instances.leaked({"kept"}, now=later)
    assert [i.id for i in gone] == [leaked.instance_id]
    assert env.provider.instances.leaked({"kept"}, now=datetime.now(UTC) - timedelta(hours=1)) == []


def test_launch_with_unready_nodeclass_or_impossible_request(env: Any, make_nodeclass: Any) -> None:
    bad = make_nodeclass.build(subnetSelectorTerms=[{"tags": {"nothing": "here"}}])
    with pytest.raises(NodeClassNotReady, match="matched no subnets"):
        env.provider.launch(request(), bad)
    huge = request(resources={"cpu": "10000"})
    with pytest.raises(InsufficientCapacity, match="0 compatible"):
        env.provider.launch(huge, make_nodeclass.build())
    assert instances(env) == []


def test_bottlerocket_and_gpu_pick_matching_amis(env: Any, make_nodeclass: Any) -> None:
    nc = make_nodeclass.build(amiSelectorTerms=[{"alias": "bottlerocket@latest"}])
    req = request(capacity="on-demand")
    req.requirements = [
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["g4dn.xlarge"]},
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
    ]
    result = env.provider.launch(req, nc)
    assert result.image_id == env.seeded.amis.images[("bottlerocket", "nvidia", "x86_64")]
    assert result.capacity["nvidia.com/gpu"] == "1"
    lt = env.clients.ec2.describe_launch_templates()["LaunchTemplates"][0]["LaunchTemplateName"]
    data = lt_data(env, lt)
    toml = base64.b64decode(data["UserData"]).decode()
    assert "[settings.kubernetes]" in toml and 'cluster-name = "test-cluster"' in toml
    assert [m["DeviceName"] for m in data["BlockDeviceMappings"]] == ["/dev/xvda", "/dev/xvdb"]


def test_launch_templates_are_reused_by_content_and_collected_when_unused(
    env: Any, make_nodeclass: Any
) -> None:
    nc = make_nodeclass.build()
    first = env.provider.launch(request("claim-a"), nc)
    env.provider.launch(request("claim-b"), nc)  # same content: the same two templates
    lts = env.clients.ec2.describe_launch_templates()["LaunchTemplates"]
    assert len(lts) == 2
    # young templates are kept even if unused (a launch may be about to use them)
    assert env.provider.garbage_collect()["launchTemplates"] == []
    later = datetime.now(UTC) + timedelta(minutes=10)
    ids = {
        t["Value"]
        for i in instances(env)
        for t in i["Tags"]
        if t["Key"] == "aws:ec2launchtemplate:id"
    }
    deleted = env.provider.templates.garbage_collect(ids, now=later)
    left = env.clients.ec2.describe_launch_templates()["LaunchTemplates"]
    assert len(deleted) == 1 and [t["LaunchTemplateId"] for t in left] == sorted(ids)
    # once no NodeClaim's instance uses it, the last one goes too
    for i in instances(env):
        env.provider.delete(i["InstanceId"])
    assert env.provider.templates.garbage_collect(set(), now=later) == [
        t["LaunchTemplateName"] for t in left
    ]
    assert env.clients.ec2.describe_launch_templates()["LaunchTemplates"] == []
    # and a launch after that recreates what it needs
    assert env.provider.launch(request("claim-c"), nc).instance_id != first.instance_id


def test_more_launch_templates_than_one_page_are_all_listed_and_collected(env: Any) -> None:
    mine = {"Key": TAG_CLUSTER, "Value": env.settings.cluster.name}
    tags = [{"ResourceType": "launch-template", "Tags": [mine]}]
    made = {f"joinery-page-{i:02d}" for i in range(40)}  # moto alone answers 15, no NextToken
    for name in sorted(made):
        env.clients.ec2.create_launch_template(
            LaunchTemplateName=name, LaunchTemplateData={}, TagSpecifications=tags
        )
    pages = env.clients.ec2.get_paginator("describe_launch_templates").paginate(
        PaginationConfig={"PageSize": 7}
    )
    sizes = [len(p["LaunchTemplates"]) for p in pages]
    assert sizes == [7, 7, 7, 7, 7, 5]
    unpaged = env.clients.ec2.describe_launch_templates()["LaunchTemplates"]
    assert {t["LaunchTemplateName"] for t in unpaged} == made
    later = datetime.now(UTC) + timedelta(minutes=10)
    assert set(env.provider.templates.garbage_collect(set(), now=later)) == made
    assert env.clients.ec2.describe_launch_templates()["LaunchTemplates"] == []


def test_worker_cluster_settings_decide_discovery() -> None:
    from activities.ec2.provider import cluster_info
    from worker.running.app import provider_options
    from worker.running.settings import Settings, TemporalSettings

    info, discover = cluster_info(
        provider_options(Settings(TemporalSettings(), cluster="c", cluster_endpoint="https://e"))
    )
    assert (info.name, info.endpoint, discover) == ("c", "https://e", True)
    full = Settings(
        TemporalSettings(),
        cluster="c",
        cluster_endpoint="https://e",
        cluster_ca_bundle="Q0E=",
        service_cidr="172.20.0.0/16",
        kubernetes_version="1.30",
    )
    info, discover = cluster_info(provider_options(full))
    assert discover is False and info.dns_ip == "172.20.0.10" and info.kubernetes_version == "1.30"


def test_a_burst_of_same_shaped_claims_matches_the_catalog_once(
    env: Any, make_nodeclass: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every claim of a round has the same shape; a changed catalog is matched afresh."""
    from activities.ec2 import type_match

    calls: list[int] = []
    plain = type_match.compatible_types

    def counting(types: Any, reqs: Any, requests: Any) -> Any:
        calls.append(len(types))
        return plain(types, reqs, requests)

    monkeypatch.setattr(type_match, "compatible_types", counting)
    nc = make_nodeclass.build()
    env.provider.launch(request("claim-1"), nc)
    # the same requirements written in another order, the same requests
    shuffled = request("claim-2")
    shuffled.requirements = list(reversed(shuffled.requirements))
    env.provider.launch(shuffled, nc)
    assert len(calls) == 1
    env.provider.launch(request("claim-3", resources={"cpu": "3", "memory": "1Gi"}), nc)
    assert len(calls) == 2  # other requests: another shape
    # a refused pool rebuilds the catalog: the next launch matches the new list
    _, itype, zone = cheapest(env, nc, "on-demand", {"m5.large", "m5.xlarge"})
    env.provider.unavailable.mark_unavailable("on-demand", itype, zone)
    fourth = env.provider.launch(request("claim-4"), nc)
    assert len(calls) == 3
    assert (fourth.instance_type, fourth.zone) != (itype, zone)


def test_launch_times_are_parsed_without_dateutil(
    env: Any, make_nodeclass: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The clients parse EC2's ISO 8601 timestamps with the standard library: the same aware
    instant botocore's own parser gives, without its per-timestamp dateutil parse."""
    import dateutil.parser
    from botocore.utils import parse_timestamp as botocore_parse

    from activities.ec2.clients import parse_timestamp

    result = env.provider.launch(request(), make_nodeclass.build())
    calls: list[object] = []
    real = dateutil.parser.parse

    def counting(*args: Any, **kw: Any) -> Any:
        calls.append(args)
        return real(*args, **kw)

    monkeypatch.setattr(dateutil.parser, "parse", counting)
    launched = env.provider.get(result.instance_id).launch_time
    assert calls == []
    assert launched is not None and launched.utcoffset() is not None
    assert abs(launched - datetime.now(UTC)) < timedelta(hours=1)
    for text in ("2026-11-27T10:00:00.000Z", "2026-11-27T10:00:00+02:00"):
        assert parse_timestamp(text) == botocore_parse(text)
    assert parse_timestamp(1700000000) == botocore_parse(1700000000)  # epoch: botocore's
    assert parse_timestamp("Fri, 27 Nov 2026 10:00:00 GMT") == botocore_parse(
        "Fri, 27 Nov 2026 10:00:00 GMT"
    )


def test_a_spot_interruption_moves_the_next_launch_like_an_ice_and_expires(
    env: Any, make_nodeclass: Any
) -> None:
    """Karpenter marks the offering of a spot-interrupted instance unavailable as it does an
    insufficient-capacity answer: the replacement launches elsewhere; three minutes later
    the pool is back. Other interruption kinds, and on-demand, mark nothing."""
    from activities.ec2.interruption import (
        REBALANCE_RECOMMENDATION,
        SCHEDULED_CHANGE,
        SPOT_INTERRUPTION,
        InterruptionEvent,
        mark_interrupted_offering,
    )

    nc = make_nodeclass.build()
    first = env.provider.launch(request("claim-1", "spot"), nc)
    itype, zone = first.instance_type, first.zone
    cache = env.provider.unavailable
    for kind in (REBALANCE_RECOMMENDATION, SCHEDULED_CHANGE):
        assert not mark_interrupted_offering(cache, InterruptionEvent(kind, ("i-x",)), itype, zone)
    assert not cache.is_unavailable("spot", itype, zone)
    spot = InterruptionEvent(SPOT_INTERRUPTION, (first.instance_id,))
    assert not mark_interrupted_offering(cache, spot, "", zone)  # type unknown: nothing
    assert mark_interrupted_offering(cache, spot, itype, zone)
    assert cache.is_unavailable("spot", itype, zone)
    assert not cache.is_unavailable("on-demand", itype, zone)
    t = next(t for t in env.provider.instance_types(nc) if t.name == itype)
    assert not next(
        o for o in t.offerings if o.zone == zone and o.capacity_type == "spot"
    ).available
    second = env.provider.launch(request("claim-2", "spot"), nc)
    assert (second.instance_type, second.zone) != (itype, zone)
    env.clock.advance(181)
    assert not cache.is_unavailable("spot", itype, zone)
    third = env.provider.launch(request("claim-3", "spot"), nc)
    assert (third.instance_type, third.zone) == (itype, zone)
