"""EC2NodeClass resolution: selector semantics, AMI aliases, reasons when nothing matches."""

from __future__ import annotations

from typing import Any

import pytest

from activities.ec2.errors import NodeClassNotReady
from sandbox.ec2.seed import add_image


def cond(resolved: Any, type_: str) -> Any:
    return next(c for c in resolved.conditions if c.type == type_)


def test_discovery_tags_resolve_everything(env: Any, make_nodeclass: Any) -> None:
    resolved = env.provider.resolve_nodeclass(make_nodeclass.build())
    assert resolved.ready
    assert {s.id for s in resolved.subnets} == set(env.seeded.network.subnets.values())
    assert [g.id for g in resolved.security_groups] == env.seeded.network.security_group_ids
    images = env.seeded.amis.images
    assert {a.id for a in resolved.amis} == {
        images[("al2023", v, a)] for v in ("standard", "nvidia") for a in ("x86_64", "arm64")
    }
    status = resolved.status().to_wire()
    assert {c["type"] for c in status["conditions"]} >= {"Ready", "SubnetsReady", "AMIsReady"}
    assert status["subnets"][0].keys() >= {"id", "zone"}


def test_selector_semantics(env: Any, make_nodeclass: Any) -> None:
    ec2 = env.clients.ec2
    zone_a = env.seeded.network.subnets["us-east-1a"]
    zone_b = env.seeded.network.subnets["us-east-1b"]
    ec2.create_tags(Resources=[zone_a], Tags=[{"Key": "tier", "Value": "private"}])
    ec2.create_tags(Resources=[zone_b], Tags=[{"Key": "tier", "Value": "public"}])
    resolver = env.provider.resolver
    # tags ANDed within a term
    nc = make_nodeclass.build(
        subnetSelectorTerms=[
            {"tags": {"karpenter.sh/discovery": "test-cluster", "tier": "private"}}
        ]
    )
    assert [s.id for s in resolver.resolve(nc).subnets] == [zone_a]
    # "*" = the key exists, any value
    nc = make_nodeclass.build(subnetSelectorTerms=[{"tags": {"tier": "*"}}])
    assert {s.id for s in resolver.resolve(nc).subnets} == {zone_a, zone_b}
    # terms ORed; ids
    zone_c = env.seeded.network.subnets["us-east-1c"]
    nc = make_nodeclass.build(subnetSelectorTerms=[{"id": zone_c}, {"tags": {"tier": "public"}}])
    assert {s.id for s in resolver.resolve(nc).subnets} == {zone_b, zone_c}
    # security group by name
    nc = make_nodeclass.build(securityGroupSelectorTerms=[{"name": "test-cluster-nodes"}])
    assert [
        g.id for g in resolver.resolve(nc).security_groups
    ] == env.seeded.network.security_group_ids


def test_ami_aliases_and_terms(env: Any, make_nodeclass: Any) -> None:
    resolver = env.provider.resolver
    older = resolver.resolve(make_nodeclass.build(amiSelectorTerms=[{"alias": "al2023@v20241011"}]))
    assert older.ready and all("v20241011" in a.name for a in older.amis)
    br = resolver.resolve(make_nodeclass.build(amiSelectorTerms=[{"alias": "bottlerocket@latest"}]))
    assert br.ready and {a.id for a in br.amis} == {
        v for k, v in env.seeded.amis.images.items() if k[0] == "bottlerocket"
    }
    # name / tags / id terms: newest wins per architecture
    a_old = add_image("us-east-1", "custom-node-1", "x86_64", _dt(2024, 1, 1), owner="123456789012")
    a_new = add_image("us-east-1", "custom-node-2", "x86_64", _dt(2024, 6, 1), owner="123456789012")
    env.clients.ec2.create_tags(Resources=[a_old, a_new], Tags=[{"Key": "team", "Value": "x"}])
    by_name = resolver.resolve(make_nodeclass.build(amiSelectorTerms=[{"name": "custom-node-*"}]))
    assert [a.id for a in by_name.amis] == [a_new]
    by_tag = resolver.resolve(make_nodeclass.build(amiSelectorTerms=[{"tags": {"team": "x"}}]))
    assert [a.id for a in by_tag.amis] == [a_new]
    by_id = resolver.resolve(make_nodeclass.build(amiSelectorTerms=[{"id": a_old}]))
    assert [a.id for a in by_id.amis] == [a_old]


def test_selectors_matching_nothing_give_reasons(env: Any, make_nodeclass: Any) -> None:
    nc = make_nodeclass.build(
        subnetSelectorTerms=[{"tags": {"karpenter.sh/discovery": "nope"}}],
        securityGroupSelectorTerms=[{"id": "sg-00000000000000000"}],
        amiSelectorTerms=[{"alias": "al2023@v19990101"}],
    )
    resolved = env.provider.resolve_nodeclass(nc)
    assert not resolved.ready
    assert cond(resolved, "SubnetsReady").reason == "SubnetsNotFound"
    assert "nope" in cond(resolved, "SubnetsReady").message
    assert cond(resolved, "SecurityGroupsReady").reason == "SecurityGroupsNotFound"
    assert cond(resolved, "AMIsReady").reason == "AMINotFound"
    assert "al2023@v19990101" in cond(resolved, "AMIsReady").message
    ready = cond(resolved, "Ready")
    assert ready.status == "False" and ready.reason == "SubnetsNotFound"
    with pytest.raises(NodeClassNotReady, match="subnetSelectorTerms matched no subnets"):
        resolved.require_ready()


def test_unsupported_alias_version_and_missing_ami_id(env: Any, make_nodeclass: Any) -> None:
    resolved = env.provider.resolve_nodeclass(
        make_nodeclass.build(amiSelectorTerms=[{"alias": "windows2022@v20241011"}])
    )
    assert cond(resolved, "AMIsReady").reason == "AMINotFound"
    assert "only @latest" in cond(resolved, "AMIsReady").message
    resolved = env.provider.resolve_nodeclass(
        make_nodeclass.build(amiSelectorTerms=[{"id": "ami-0123456789abcdef0"}])
    )
    assert cond(resolved, "Ready").reason == "AMINotFound"


def _dt(y: int, m: int, d: int) -> Any:
    from datetime import UTC, datetime

    return datetime(y, m, d, tzinfo=UTC)
