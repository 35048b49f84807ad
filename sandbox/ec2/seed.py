"""Seed an emulated region with what a real EKS account already has.

A VPC with one subnet per zone and a security group, all carrying Karpenter's discovery tag;
an EKS cluster (moto's EKS) with a service CIDR and version; EKS-optimized AL2023, AL2,
Bottlerocket and Windows AMIs and the public SSM parameters that point at them.
moto refuses ``PutParameter`` under ``/aws/`` and registers AMIs without architecture or date,
so both are written into moto's in-process backends directly.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
from moto.core import DEFAULT_ACCOUNT_ID
from moto.ec2.models import ec2_backends
from moto.ec2.models.amis import Ami
from moto.ec2.utils import random_ami_id
from moto.ssm.models import Parameter, ssm_backends

from activities.ec2.partitions import arn

DISCOVERY_TAG = "karpenter.sh/discovery"
EKS_OWNER = "602401143452"
WINDOWS_OWNER = "801119661308"
ARCHES = ("x86_64", "arm64")


@dataclass
class SeededNetwork:
    vpc_id: str
    subnets: dict[str, str]  # zone → subnet id
    security_group_ids: list[str]


@dataclass
class SeededAMIs:
    # (family, variant, arch) → image id, e.g. ("al2023", "standard", "x86_64")
    images: dict[tuple[str, str, str], str] = field(default_factory=dict)
    parameters: dict[str, str] = field(default_factory=dict)


def zones_of(ec2: Any) -> list[str]:
    return sorted(z["ZoneName"] for z in ec2.describe_availability_zones()["AvailabilityZones"])


def seed_network(
    ec2: Any,
    cluster_name: str,
    zones: list[str] | None = None,
    cidr: str = "10.20.0.0/16",
    subnet_prefix: int = 20,
    ipv6: bool = False,
) -> SeededNetwork:
    """A tagged VPC, one tagged subnet per zone and one tagged security group. With ``ipv6``
    the VPC has an Amazon-provided IPv6 block and each subnet a /64 of it, without
    auto-assignment (EC2's default): an instance gets an IPv6 address only if asked."""
    tag = [{"Key": DISCOVERY_TAG, "Value": cluster_name}]
    vpc_id = ec2.create_vpc(
        CidrBlock=cidr,
        AmazonProvidedIpv6CidrBlock=ipv6,
        TagSpecifications=[{"ResourceType": "vpc", "Tags": tag}],
    )["Vpc"]["VpcId"]
    blocks = ipaddress.ip_network(cidr).subnets(new_prefix=subnet_prefix)
    v6_blocks: Iterator[ipaddress.IPv6Network] = iter(())
    if ipv6:
        vpc = ec2.describe_vpcs(VpcIds=[vpc_id])["Vpcs"][0]
        v6 = vpc["Ipv6CidrBlockAssociationSet"][0]["Ipv6CidrBlock"]
        v6_blocks = ipaddress.IPv6Network(v6).subnets(new_prefix=64)
    subnets: dict[str, str] = {}
    for zone, block in zip(zones or zones_of(ec2), blocks, strict=False):
        v6_block = next(v6_blocks, None)
        subnets[zone] = ec2.create_subnet(
            VpcId=vpc_id,
            CidrBlock=str(block),
            **({"Ipv6CidrBlock": str(v6_block)} if v6_block else {}),
            AvailabilityZone=zone,
            TagSpecifications=[
                {
                    "ResourceType": "subnet",
                    "Tags": [*tag, {"Key": "Name", "Value": f"{cluster_name}-{zone}"}],
                }
            ],
        )["Subnet"]["SubnetId"]
    sg = ec2.create_security_group(
        GroupName=f"{cluster_name}-nodes",
        Description="nodes",
        VpcId=vpc_id,
        TagSpecifications=[{"ResourceType": "security-group", "Tags": tag}],
    )["GroupId"]
    return SeededNetwork(vpc_id, subnets, [sg])


def put_public_parameter(
    region: str, name: str, value: str, account: str = DEFAULT_ACCOUNT_ID
) -> None:
    """Write an SSM parameter under ``/aws/`` (AWS-owned; the API refuses it)."""
    params = ssm_backends[account][region]._parameters
    params[name].append(
        Parameter(  # type: ignore[abstract]
            account_id=account,
            name=name,
            value=value,
            parameter_type="String",
            description=None,
            allowed_pattern=None,
            keyid=None,
            last_modified_date=datetime.now(UTC),
            version=len(params[name]) + 1,
            data_type="aws:ec2:image",
        )
    )


def add_image(
    region: str,
    name: str,
    architecture: str,
    created: datetime,
    owner: str = EKS_OWNER,
    account: str = DEFAULT_ACCOUNT_ID,
) -> str:
    """Register an AMI with the fields moto's RegisterImage drops (architecture, date, owner)."""
    backend = ec2_backends[account][region]
    ami_id = random_ami_id()
    backend.amis[ami_id] = Ami(
        backend,
        ami_id,
        name=name,
        owner_id=owner,
        owner_alias="amazon" if owner in (EKS_OWNER, WINDOWS_OWNER) else None,
        public=True,
        virtualization_type="hvm",
        architecture=architecture,
        creation_date=created,
        image_location=f"amazon/{name}",
        hypervisor="xen",
        root_device_type="ebs",
        root_device_name="/dev/xvda",
        region_name=region,
    )
    return ami_id


def seed_eks_amis(
    region: str,
    kubernetes_version: str = "1.31",
    releases: tuple[str, ...] = ("v20241011", "v20241024"),
    bottlerocket_releases: tuple[str, ...] = ("1.25.0", "1.26.1"),
) -> SeededAMIs:
    """AL2023, AL2, Bottlerocket (standard, nvidia) and Windows AMIs with SSM parameters.

    The last release of each list is "recommended"/"latest"; older ones get versioned
    parameters only, as in the real public namespace.
    """
    out = SeededAMIs()
    base = datetime(2024, 10, 1, tzinfo=UTC)
    k8s = kubernetes_version
    for i, release in enumerate(releases):
        last = i == len(releases) - 1
        for arch in ARCHES:
            for variant in ("standard", "nvidia"):
                name = f"amazon-eks-node-al2023-{arch}-{variant}-{k8s}-{release}"
                prefix = f"/aws/service/eks/optimized-ami/{k8s}/amazon-linux-2023/{arch}/{variant}"
                latest = f"{prefix}/recommended/image_id" if last else None
                release_ami = (name, base + timedelta(days=i))
                _publish(out, region, ("al2023", variant, arch), release_ami, prefix, latest)
        for path, kind, arch, variant in (
            ("amazon-linux-2", "node", "x86_64", "standard"),
            ("amazon-linux-2-arm64", "arm64-node", "arm64", "standard"),
            ("amazon-linux-2-gpu", "gpu-node", "x86_64", "nvidia"),
        ):
            name = f"amazon-eks-{kind}-{k8s}-{release}"
            prefix = f"/aws/service/eks/optimized-ami/{k8s}/{path}"
            latest = f"{prefix}/recommended/image_id" if last else None
            release_ami = (name, base + timedelta(days=i))
            _publish(out, region, ("al2", variant, arch), release_ami, prefix, latest)
    for i, release in enumerate(bottlerocket_releases):
        last = i == len(bottlerocket_releases) - 1
        for arch in ARCHES:
            for flavor, variant in (
                (f"aws-k8s-{k8s}", "standard"),
                (f"aws-k8s-{k8s}-nvidia", "nvidia"),
            ):
                name = f"bottlerocket-{flavor}-{arch}-v{release}"
                prefix = f"/aws/service/bottlerocket/{flavor}/{arch}"
                latest = f"{prefix}/latest/image_id" if last else None
                release_ami = (name, base + timedelta(days=i))
                key = ("bottlerocket", variant, arch)
                _publish(out, region, key, release_ami, prefix, latest, leaf=release)
    for year in ("2019", "2022", "2025"):
        name = f"Windows_Server-{year}-English-Core-EKS_Optimized-{k8s}"
        param = f"/aws/service/ami-windows-latest/{name}/image_id"
        key = (f"windows{year}", "standard", "x86_64")
        ami = (f"{name}-2024.10.08", base)
        _publish(out, region, key, ami, None, param, owner=WINDOWS_OWNER)
    return out


def _publish(
    out: SeededAMIs,
    region: str,
    key: tuple[str, str, str],
    ami: tuple[str, datetime],
    prefix: str | None,
    latest: str | None,
    leaf: str | None = None,
    owner: str = EKS_OWNER,
) -> None:
    """One image, its versioned parameter ``prefix/<leaf or name>/image_id`` and, for the
    newest release, the ``latest`` parameter (``out.images[key]`` then names it)."""
    name, created = ami
    image = add_image(region, name, key[2], created, owner=owner)
    params = [f"{prefix}/{leaf or name}/image_id"] if prefix else []
    if latest:
        params.append(latest)
        out.images[key] = image
    for p in params:
        put_public_parameter(region, p, image)
        out.parameters[p] = image


def seed_eks_cluster(
    ec2: Any,
    cluster_name: str,
    kubernetes_version: str = "1.31",
    service_cidr: str = "172.20.0.0/16",
    subnet_ids: list[str] | None = None,
) -> dict[str, Any]:
    """An ACTIVE EKS cluster in moto (same endpoint as ``ec2``); returns DescribeCluster's
    ``cluster``. An existing one of that name is left as it is."""
    eks = boto3.session.Session(
        aws_access_key_id="testing", aws_secret_access_key="testing"
    ).client("eks", region_name=ec2.meta.region_name, endpoint_url=ec2.meta.endpoint_url)
    with contextlib.suppress(eks.exceptions.ResourceInUseException):
        eks.create_cluster(
            name=cluster_name,
            version=kubernetes_version,
            roleArn=arn(
                ec2.meta.region_name,
                "iam",
                DEFAULT_ACCOUNT_ID,
                f"role/{cluster_name}-cluster",
                regional=False,
            ),
            resourcesVpcConfig={"subnetIds": subnet_ids or []},
            kubernetesNetworkConfig={"serviceIpv4Cidr": service_cidr, "ipFamily": "ipv4"},
        )
    cluster: dict[str, Any] = eks.describe_cluster(name=cluster_name)["cluster"]
    return cluster


@dataclass
class SeededRegion:
    region: str
    network: SeededNetwork
    amis: SeededAMIs
    cluster: dict[str, Any] = field(default_factory=dict)


def seed_region(
    ec2: Any, region: str, cluster_name: str, kubernetes_version: str = "1.31"
) -> SeededRegion:
    """Everything a NodeClass with discovery-tag selectors and an alias needs to be Ready,
    and the EKS cluster that discovery reads."""
    network = seed_network(ec2, cluster_name)
    amis = seed_eks_amis(region, kubernetes_version)
    cluster = seed_eks_cluster(
        ec2, cluster_name, kubernetes_version, subnet_ids=list(network.subnets.values())
    )
    seed_node_role(ec2, f"KarpenterNodeRole-{cluster_name}")
    seed_spot_service_role(ec2)
    return SeededRegion(region, network, amis, cluster)


SPOT_SERVICE_ROLE = "AWSServiceRoleForEC2Spot"


def _seed_role(ec2: Any, name: str, service: str, path: str = "/") -> None:
    """An IAM role ``service`` may assume (one that exists already is left as it is)."""
    # IAM is one per partition: a role made through a us-east-1 client would not exist for
    # a cluster in cn-north-1 or us-gov-west-1 (moto keeps them apart, as AWS does).
    iam = boto3.session.Session(
        aws_access_key_id="testing", aws_secret_access_key="testing"
    ).client("iam", region_name=ec2.meta.region_name, endpoint_url=ec2.meta.endpoint_url)
    trust = {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Principal": {"Service": service}, "Action": "sts:AssumeRole"}
        ],
    }
    with contextlib.suppress(iam.exceptions.EntityAlreadyExistsException):
        iam.create_role(RoleName=name, Path=path, AssumeRolePolicyDocument=json.dumps(trust))


def seed_spot_service_role(ec2: Any) -> None:
    """The Spot service-linked role an account has once it used Spot (EC2 makes it on the
    first spot request, when the caller may); its path and trust are EC2's."""
    _seed_role(
        ec2, SPOT_SERVICE_ROLE, "spot.amazonaws.com", "/aws-service-role/spot.amazonaws.com/"
    )


def seed_node_role(ec2: Any, role: str) -> None:
    """The node IAM role Karpenter's getting-started stack creates (EC2 may assume it)."""
    _seed_role(ec2, role, "ec2.amazonaws.com")
