"""Launch templates, one per distinct launch configuration, named by its hash and reused.

Naming by content hash makes creation idempotent across retries and workers: two launches that
need the same template find it by name instead of creating a twin.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from activities.ec2.errors import LaunchTemplateNotFound, aws_errors, error_code
from activities.ec2.families import BOTTLEROCKET, CUSTOM, AMIFamily
from activities.ec2.instances import TAG_NODECLASS
from activities.ec2.userdata import encode
from models.ec2nodeclass import BlockDeviceMapping, EC2NodeClass
from models.quantity import parse_quantity

NAME_PREFIX = "karpenter.k8s.aws/"
TAG_CLUSTER = "karpenter.k8s.aws/cluster"
GIB = 2**30
LT_ID_TAG = "aws:ec2launchtemplate:id"  # EC2 tags every instance with its template's id
GC_GRACE = timedelta(minutes=5)


def _ebs(mapping: BlockDeviceMapping) -> dict[str, Any]:
    ebs = mapping.ebs
    out: dict[str, Any] = {}
    if ebs is None:
        return out
    if ebs.volume_size:
        out["VolumeSize"] = math.ceil(parse_quantity(ebs.volume_size) / 1000 / GIB)
    for field_name, key in (
        ("volume_type", "VolumeType"),
        ("iops", "Iops"),
        ("throughput", "Throughput"),
        ("encrypted", "Encrypted"),
        ("kms_key_id", "KmsKeyId"),
        ("delete_on_termination", "DeleteOnTermination"),
        ("snapshot_id", "SnapshotId"),
        ("volume_initialization_rate", "VolumeInitializationRate"),
    ):
        value = getattr(ebs, field_name)
        if value is not None:
            out[key] = value
    return out


def block_device_mappings(nodeclass: EC2NodeClass, family: AMIFamily) -> list[dict[str, Any]]:
    """The NodeClass's mappings, else the family default (encrypted gp3 of the default size);
    none for a Custom AMI, whose own snapshot decides (a default smaller than it would fail
    the launch), as in Karpenter."""
    if nodeclass.spec.block_device_mappings:
        return [
            {"DeviceName": m.device_name, "Ebs": _ebs(m)}
            for m in nodeclass.spec.block_device_mappings
        ]
    if family.name == CUSTOM:
        return []
    size = family.default_volume_bytes // GIB
    default = {"VolumeSize": size, "VolumeType": "gp3", "Encrypted": True}
    if family.name == BOTTLEROCKET:
        root = {"VolumeSize": 4, "VolumeType": "gp3", "Encrypted": True}
        return [
            {"DeviceName": "/dev/xvda", "Ebs": root},
            {"DeviceName": "/dev/xvdb", "Ebs": default},
        ]
    return [{"DeviceName": family.ephemeral_device, "Ebs": default}]


@dataclass(frozen=True)
class LaunchTemplateInput:
    """Everything that goes into one template; equal inputs give the same name."""

    nodeclass_name: str
    image_id: str
    user_data: str
    security_group_ids: tuple[str, ...]
    metadata_options: str  # canonical JSON
    block_device_mappings: str  # canonical JSON
    instance_profile: str | None = None
    detailed_monitoring: bool = False
    associate_public_ip: bool | None = None
    # An IPv6 cluster's nodes get their primary interface's IPv6 address from the template,
    # whatever the subnet's own auto-assign setting says (as Karpenter's templates do).
    ipv6: bool = False
    # EFA interfaces, one per network card (a claim whose pods request vpc.amazonaws.com/efa)
    efa_interfaces: int = 0
    # The NodeClass's ipPrefixCount: prefixes (IPv4, or IPv6 in an IPv6 cluster) per interface
    ip_prefix_count: int = 0
    # canonical JSON of the LT's CpuOptions and of each interface's connection tracking, or ""
    cpu_options: str = ""
    connection_tracking: str = ""
    placement_group_id: str = ""  # the NodeClass's resolved placement group, "" without one
    # the partition asked for in a partition group (0: EC2 chooses, spreading the group)
    placement_partition: int = 0
    # A reserved launch's template targets its capacity reservation (capacity blocks are
    # bought on their own market type), as Karpenter's reserved launch templates do.
    capacity_reservation_id: str = ""
    capacity_reservation_type: str = ""

    @staticmethod
    def build(
        nodeclass: EC2NodeClass,
        family: AMIFamily,
        image_id: str,
        user_data: str,
        security_group_ids: list[str],
        instance_profile: str | None,
        ipv6: bool = False,
        efa_interfaces: int = 0,
        placement_group_id: str = "",
    ) -> LaunchTemplateInput:
        spec = nodeclass.spec
        cpu = {}
        if spec.cpu_options is not None and spec.cpu_options.nested_virtualization:
            cpu["NestedVirtualization"] = spec.cpu_options.nested_virtualization
        tracking = {}
        if spec.connection_tracking is not None:
            ct = spec.connection_tracking
            for value, key in (
                (ct.tcp_established_timeout, "TcpEstablishedTimeout"),
                (ct.udp_stream_timeout, "UdpStreamTimeout"),
                (ct.udp_timeout, "UdpTimeout"),
            ):
                if value is not None:
                    tracking[key] = value
        mo = spec.metadata_options
        metadata = {
            "HttpEndpoint": mo.http_endpoint,
            "HttpProtocolIpv6": mo.http_protocol_i_pv6,
            "HttpPutResponseHopLimit": mo.http_put_response_hop_limit,
            "HttpTokens": mo.http_tokens,
            # Always said: an account whose defaults expose tags in IMDS would refuse every
            # launch, since IMDS tag keys may not hold the "/" all of Joinery's keys have.
            "InstanceMetadataTags": "disabled",
        }
        return LaunchTemplateInput(
            nodeclass_name=nodeclass.name,
            image_id=image_id,
            user_data=user_data,
            security_group_ids=tuple(sorted(security_group_ids)),
            metadata_options=json.dumps(metadata, sort_keys=True),
            block_device_mappings=json.dumps(
                block_device_mappings(nodeclass, family), sort_keys=True
            ),
            instance_profile=instance_profile,
            detailed_monitoring=bool(spec.detailed_monitoring),
            associate_public_ip=spec.associate_public_ip_address,
            ipv6=ipv6,
            efa_interfaces=efa_interfaces,
            ip_prefix_count=spec.ip_prefix_count or 0,
            cpu_options=json.dumps(cpu, sort_keys=True) if cpu else "",
            connection_tracking=json.dumps(tracking, sort_keys=True) if tracking else "",
            placement_group_id=placement_group_id,
        )

    def name(self) -> str:
        fields = dict(self.__dict__)
        for added in (
            "ipv6",
            "efa_interfaces",
            "ip_prefix_count",
            "cpu_options",
            "connection_tracking",
            "placement_group_id",
            "placement_partition",
            "capacity_reservation_id",
            "capacity_reservation_type",
        ):
            if not fields[added]:
                del fields[added]  # templates without them keep the names they had
        digest = hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()
        return NAME_PREFIX + digest[:32]

    def data(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "ImageId": self.image_id,
            "UserData": encode(self.user_data),
            "MetadataOptions": json.loads(self.metadata_options),
            "Monitoring": {"Enabled": self.detailed_monitoring},
        }
        devices = json.loads(self.block_device_mappings)
        if devices:  # none: the AMI's own mappings apply (Custom)
            out["BlockDeviceMappings"] = devices
        if self.cpu_options:
            out["CpuOptions"] = json.loads(self.cpu_options)
        if self.placement_group_id:
            out["Placement"] = {"GroupId": self.placement_group_id}
            if self.placement_partition:
                out["Placement"]["PartitionNumber"] = self.placement_partition
        if (
            self.associate_public_ip is not None
            or self.ipv6
            or self.efa_interfaces
            or self.ip_prefix_count
            or self.connection_tracking
        ):
            # Security groups then go on the interfaces: EC2 refuses them in both places.
            out["NetworkInterfaces"] = [
                self._interface(card) for card in range(max(self.efa_interfaces, 1))
            ]
        else:
            out["SecurityGroupIds"] = list(self.security_group_ids)
        if self.instance_profile:
            out["IamInstanceProfile"] = {"Name": self.instance_profile}
        if self.capacity_reservation_id:
            out["CapacityReservationSpecification"] = {
                "CapacityReservationPreference": "capacity-reservations-only",
                "CapacityReservationTarget": {
                    "CapacityReservationId": self.capacity_reservation_id
                },
            }
            if self.capacity_reservation_type == "capacity-block":
                out["InstanceMarketOptions"] = {"MarketType": "capacity-block"}
        return out

    def _interface(self, card: int) -> dict[str, Any]:
        """The interface on network card ``card``: the first card's is the primary (device
        0); each further EFA interface is device 1 of its own card."""
        interface: dict[str, Any] = {
            "DeviceIndex": 0 if card == 0 else 1,
            "Groups": list(self.security_group_ids),
        }
        if self.efa_interfaces:
            interface["NetworkCardIndex"] = card
            interface["InterfaceType"] = "efa"
        if self.associate_public_ip is not None:
            interface["AssociatePublicIpAddress"] = self.associate_public_ip
        if self.ipv6:
            interface["PrimaryIpv6"] = True
            interface["Ipv6AddressCount"] = 1
        if self.ip_prefix_count:
            key = "Ipv6PrefixCount" if self.ipv6 else "Ipv4PrefixCount"
            interface[key] = self.ip_prefix_count
        if self.connection_tracking:
            interface["ConnectionTrackingSpecification"] = json.loads(self.connection_tracking)
        return interface


class LaunchTemplateProvider:
    """Find-or-create by name, with an in-process cache of names known to exist."""

    def __init__(self, ec2: Any, cluster_name: str) -> None:
        self._ec2 = ec2
        self._cluster = cluster_name
        self._known: set[str] = set()
        self._lock = threading.Lock()

    def ensure(self, spec: LaunchTemplateInput) -> str:
        name = spec.name()
        with self._lock:
            if name in self._known:
                return name
        if not self._exists(name):
            self._create(name, spec)
        with self._lock:
            self._known.add(name)
        return name

    def invalidate(self, name: str) -> None:
        with self._lock:
            self._known.discard(name)

    def _exists(self, name: str) -> bool:
        try:
            with aws_errors("DescribeLaunchTemplates"):
                resp = self._ec2.describe_launch_templates(LaunchTemplateNames=[name])
        except Exception as exc:
            if "NotFound" in getattr(exc, "code", ""):
                return False
            raise
        return bool(resp.get("LaunchTemplates"))

    def _create(self, name: str, spec: LaunchTemplateInput) -> None:
        tags = [
            {"Key": TAG_CLUSTER, "Value": self._cluster},
            {"Key": TAG_NODECLASS, "Value": spec.nodeclass_name},
        ]
        try:
            self._ec2.create_launch_template(
                LaunchTemplateName=name,
                LaunchTemplateData=spec.data(),
                TagSpecifications=[{"ResourceType": "launch-template", "Tags": tags}],
            )
        except Exception as exc:
            # Another worker created it between our describe and create: that is success.
            if error_code(exc) == "InvalidLaunchTemplateName.AlreadyExistsException":
                return
            with aws_errors("CreateLaunchTemplate"):
                raise

    def garbage_collect(
        self, in_use_ids: set[str], now: datetime | None = None, grace: timedelta = GC_GRACE
    ) -> list[str]:
        """Delete this cluster's templates no live instance was launched from.

        ``in_use_ids`` are the ``aws:ec2launchtemplate:id`` tags EC2 puts on instances. A
        template younger than ``grace`` is kept: a launch may be about to use it. One that a
        launch still holds in its cache and finds gone is recreated (LaunchTemplateNotFound
        is retryable).
        """
        cutoff = (now or datetime.now(UTC)) - grace
        with aws_errors("DescribeLaunchTemplates"):
            pages = self._ec2.get_paginator("describe_launch_templates").paginate(
                Filters=[{"Name": f"tag:{TAG_CLUSTER}", "Values": [self._cluster]}]
            )
            templates = [t for page in pages for t in page.get("LaunchTemplates", [])]
        deleted = []
        for t in templates:
            created = t.get("CreateTime")
            if t["LaunchTemplateId"] in in_use_ids:
                continue
            if isinstance(created, datetime) and created > cutoff:
                continue
            try:
                with aws_errors("DeleteLaunchTemplate"):
                    self._ec2.delete_launch_template(LaunchTemplateId=t["LaunchTemplateId"])
            except LaunchTemplateNotFound:
                pass  # deleted by another worker: done
            self.invalidate(t["LaunchTemplateName"])
            deleted.append(t["LaunchTemplateName"])
        return deleted
