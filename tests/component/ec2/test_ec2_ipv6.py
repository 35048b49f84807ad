"""IPv6: the emulator gives a launch template's IPv6 addresses as EC2 does (sandbox/ec2/ipv6.py),
and a node of an IPv6 cluster gets a primary IPv6 address in a subnet that assigns none.

EC2's rules, from its documentation (not from the emulation): an interface gets the number of
IPv6 addresses its launch asks for, from the subnet's IPv6 block; a subnet assigns one by
itself only when ``AssignIpv6AddressOnCreation`` is set (off by default); ``PrimaryIpv6``
makes the first the instance's ``Ipv6Address``.
"""

from __future__ import annotations

import ipaddress
from typing import Any

import pytest

from activities.ec2.clients import AWSClients
from activities.ec2.provider import EC2Provider
from activities.ec2.settings import ClusterInfo, ProviderSettings
from sandbox.ec2.ipv6 import node_addresses
from sandbox.ec2.seed import SeededNetwork, seed_network
from sandbox.nodes import node_for
from tests.component.ec2.conftest import CLUSTER, REGION, SessionCatalog, nodeclass
from tests.support.ec2_launches import request

IMAGE = "ami-12c6146b"


@pytest.fixture
def network(env: Any) -> SeededNetwork:
    """An IPv6 VPC (its subnets without auto-assignment) beside the seeded IPv4 one."""
    return seed_network(env.clients.ec2, f"{CLUSTER}-v6", cidr="10.40.0.0/16", ipv6=True)


def _subnet_block(ec2: Any, subnet_id: str) -> ipaddress.IPv6Network:
    subnet = ec2.describe_subnets(SubnetIds=[subnet_id])["Subnets"][0]
    assert not subnet.get("AssignIpv6AddressOnCreation")
    return ipaddress.IPv6Network(subnet["Ipv6CidrBlockAssociationSet"][0]["Ipv6CidrBlock"])


def _launch(ec2: Any, subnet_id: str, data: dict[str, Any], name: str) -> dict[str, Any]:
    ec2.create_launch_template(LaunchTemplateName=name, LaunchTemplateData=data)
    fleet = ec2.create_fleet(
        Type="instant",
        TargetCapacitySpecification={
            "TotalTargetCapacity": 1,
            "DefaultTargetCapacityType": "on-demand",
        },
        LaunchTemplateConfigs=[
            {
                "LaunchTemplateSpecification": {"LaunchTemplateName": name, "Version": "$Latest"},
                "Overrides": [{"InstanceType": "m5.large", "SubnetId": subnet_id}],
            }
        ],
    )
    instance_id = fleet["Instances"][0]["InstanceIds"][0]
    found: dict[str, Any] = ec2.describe_instances(InstanceIds=[instance_id])["Reservations"][0][
        "Instances"
    ][0]
    return found


def _v6(instance: dict[str, Any]) -> list[dict[str, Any]]:
    return [a for eni in instance["NetworkInterfaces"] for a in eni.get("Ipv6Addresses") or []]


def test_the_emulator_gives_ipv6_addresses_only_when_asked(
    env: Any, network: SeededNetwork
) -> None:
    ec2 = env.clients.ec2
    subnet = next(iter(network.subnets.values()))
    block = _subnet_block(ec2, subnet)
    groups = network.security_group_ids
    plain = _launch(ec2, subnet, {"ImageId": IMAGE, "SecurityGroupIds": groups}, "plain")
    assert _v6(plain) == [] and "Ipv6Address" not in plain  # the subnet assigns none
    interface = {"DeviceIndex": 0, "Groups": groups, "Ipv6AddressCount": 1, "PrimaryIpv6": True}
    asked = _launch(ec2, subnet, {"ImageId": IMAGE, "NetworkInterfaces": [interface]}, "asked")
    (address,) = _v6(asked)
    assert ipaddress.IPv6Address(address["Ipv6Address"]) in block
    assert address["IsPrimaryIpv6"] is True
    assert asked["Ipv6Address"] == address["Ipv6Address"]
    # a subnet that auto-assigns gives one, not primary, without the template asking
    ec2.modify_subnet_attribute(SubnetId=subnet, AssignIpv6AddressOnCreation={"Value": True})
    auto = _launch(ec2, subnet, {"ImageId": IMAGE, "SecurityGroupIds": groups}, "auto")
    (given,) = _v6(auto)
    assert given["IsPrimaryIpv6"] is False and "Ipv6Address" not in auto


def _provider(env: Any, session_catalog: SessionCatalog, family: str) -> EC2Provider:
    cluster = ClusterInfo(
        CLUSTER,
        "https://k8s.example",
        "Q0E=",
        "fd00:10:100::/108" if family == "ipv6" else "10.100.0.0/16",
        ip_family=family,
    )
    settings = ProviderSettings(region=REGION, cluster=cluster)
    clients = AWSClients.create(REGION, env.server.endpoint_url, env.server.session())
    provider = EC2Provider.create(settings, clients, clock=env.clock)
    provider.catalog.use_raw(session_catalog.raw)
    od, spot, source = session_catalog.on_demand, session_catalog.spot, session_catalog.source
    provider.pricing.load(od, spot, source)
    return provider


@pytest.mark.parametrize("family", ["ipv6", "ipv4"])
def test_a_node_gets_the_clusters_address_family(
    env: Any, network: SeededNetwork, session_catalog: SessionCatalog, family: str
) -> None:
    provider = _provider(env, session_catalog, family)
    selector = [{"tags": {"karpenter.sh/discovery": f"{CLUSTER}-v6"}}]
    nc = nodeclass(subnetSelectorTerms=selector, securityGroupSelectorTerms=selector)
    result = provider.launch(request(), nc)
    described = env.clients.ec2.describe_instances(InstanceIds=[result.instance_id])
    instance = described["Reservations"][0]["Instances"][0]
    subnet = instance["SubnetId"]
    assert subnet in network.subnets.values()
    claim = {
        "metadata": {"name": "claim-a"},
        "spec": {"requirements": []},
        "status": {"providerID": result.provider_id},
    }
    node = node_for(claim, node_addresses(instance, family))
    (internal,) = [a for a in node["status"]["addresses"] if a["type"] == "InternalIP"]
    if family == "ipv6":
        primary = ipaddress.IPv6Address(instance["Ipv6Address"])
        assert primary in _subnet_block(env.clients.ec2, subnet)
        assert ipaddress.ip_address(internal["address"]) == primary
    else:
        assert _v6(instance) == []  # the subnet assigns none and the template asks none
        assert ipaddress.ip_address(internal["address"]).version == 4
