"""``karpenter.k8s.aws/v1`` EC2NodeClass: how to launch an instance in AWS."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from models.kube import KubeModel, ObjectMeta
from models.nodeclaim import Condition

_ALIAS = re.compile(r"^(al2023|al2|bottlerocket|windows2019|windows2022|windows2025)@.+$")


class SelectorTerm(KubeModel):
    """Subnet / security-group selector: tags ANDed within a term, or an id (or name)."""

    tags: dict[str, str] | None = None
    id: str | None = None
    name: str | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> SelectorTerm:
        if not self.tags and not self.id and not self.name:
            raise ValueError("expected at least one of tags, id or name")
        if self.id and (self.tags or self.name):
            raise ValueError("id cannot be combined with other fields")
        return self


class AMISelectorTerm(KubeModel):
    alias: str | None = None
    tags: dict[str, str] | None = None
    id: str | None = None
    name: str | None = None
    owner: str | None = None
    ssm_parameter: str | None = None

    @field_validator("alias")
    @classmethod
    def _alias(cls, v: str | None) -> str | None:
        if v is not None and not _ALIAS.match(v):
            raise ValueError(
                "alias must be family@version, e.g. al2023@latest or bottlerocket@latest"
            )
        return v

    @model_validator(mode="after")
    def _one_kind(self) -> AMISelectorTerm:
        if not (self.alias or self.tags or self.id or self.name or self.ssm_parameter):
            raise ValueError("expected one of alias, tags, id, name or ssmParameter")
        if self.alias and (self.tags or self.id or self.name or self.owner):
            raise ValueError("alias cannot be combined with other fields")
        return self


class CapacityReservationSelectorTerm(KubeModel):
    """Selects capacity reservations: an id, or tags (``*`` = any value) with an optional
    owner account and match criteria, as Karpenter's term does."""

    tags: dict[str, str] | None = None
    id: str | None = Field(default=None, pattern=r"^cr-[0-9a-z]+$")
    owner_id: str | None = Field(default=None, alias="ownerID", pattern=r"^[0-9]{12}$")
    instance_match_criteria: Literal["open", "targeted"] | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> CapacityReservationSelectorTerm:
        if not self.tags and not self.id and not self.instance_match_criteria:
            raise ValueError("expected at least one of id, tags or instanceMatchCriteria")
        if self.id and (self.tags or self.owner_id or self.instance_match_criteria):
            raise ValueError("id cannot be combined with other fields")
        if self.tags and any(not k or not v for k, v in self.tags.items()):
            raise ValueError("empty tag keys or values aren't supported")
        return self


class KubeletConfiguration(KubeModel):
    max_pods: int | None = Field(default=None, ge=0)
    pods_per_core: int | None = Field(default=None, ge=0)
    system_reserved: dict[str, str] | None = None
    kube_reserved: dict[str, str] | None = None
    eviction_hard: dict[str, str] | None = None
    eviction_soft: dict[str, str] | None = None
    eviction_soft_grace_period: dict[str, str] | None = None
    eviction_max_pod_grace_period: int | None = None
    image_gc_high_threshold_percent: int | None = Field(
        default=None, ge=0, le=100, alias="imageGCHighThresholdPercent"
    )
    image_gc_low_threshold_percent: int | None = Field(
        default=None, ge=0, le=100, alias="imageGCLowThresholdPercent"
    )
    cpu_cfs_quota: bool | None = Field(default=None, alias="cpuCFSQuota")
    cluster_dns: list[str] | None = Field(default=None, alias="clusterDNS")


class MetadataOptions(KubeModel):
    http_endpoint: Literal["enabled", "disabled"] = "enabled"
    http_protocol_i_pv6: Literal["enabled", "disabled"] = Field(
        default="disabled", alias="httpProtocolIPv6"
    )
    http_put_response_hop_limit: int = Field(default=1, ge=1, le=64)
    http_tokens: Literal["required", "optional"] = "required"


class BlockDevice(KubeModel):
    volume_size: str | None = None
    volume_type: str | None = None
    iops: int | None = None
    throughput: int | None = None
    encrypted: bool | None = None
    kms_key_id: str | None = Field(default=None, alias="kmsKeyID")
    delete_on_termination: bool | None = None
    snapshot_id: str | None = Field(default=None, alias="snapshotID")
    # MiB/s at which EBS fills the volume from its snapshot (needs snapshotID)
    volume_initialization_rate: int | None = Field(default=None, ge=100, le=300)

    @model_validator(mode="after")
    def _rate_needs_snapshot(self) -> BlockDevice:
        if self.volume_initialization_rate is not None and not self.snapshot_id:
            raise ValueError("snapshotID must be set when volumeInitializationRate is set")
        return self


class CPUOptions(KubeModel):
    """The instance's CPU options; Karpenter's v1.14 field carries nested virtualization."""

    nested_virtualization: Literal["enabled", "disabled"] | None = None


class ConnectionTracking(KubeModel):
    """Idle connection-tracking timeouts (seconds) of the interfaces the template defines."""

    tcp_established_timeout: int | None = Field(default=None, ge=60, le=432_000)
    udp_stream_timeout: int | None = Field(default=None, ge=60, le=180)
    udp_timeout: int | None = Field(default=None, ge=30, le=60)

    @model_validator(mode="after")
    def _one_set(self) -> ConnectionTracking:
        if (
            self.tcp_established_timeout is None
            and self.udp_stream_timeout is None
            and self.udp_timeout is None
        ):
            raise ValueError(
                "at least one of tcpEstablishedTimeout, udpStreamTimeout, or udpTimeout must be set"
            )
        return self


class PlacementGroupSelector(KubeModel):
    """A placement group by name or by id (one of them)."""

    name: str | None = None
    id: str | None = None

    @model_validator(mode="after")
    def _name_or_id(self) -> PlacementGroupSelector:
        if not self.name and not self.id:
            raise ValueError("expected name or id")
        if self.name and self.id:
            raise ValueError("name and id are mutually exclusive")
        return self


class BlockDeviceMapping(KubeModel):
    device_name: str
    ebs: BlockDevice | None = None
    root_volume: bool = False


class EC2NodeClassSpec(KubeModel):
    subnet_selector_terms: list[SelectorTerm] = Field(min_length=1, max_length=30)
    security_group_selector_terms: list[SelectorTerm] = Field(min_length=1, max_length=30)
    ami_selector_terms: list[AMISelectorTerm] = Field(min_length=1, max_length=30)
    ami_family: str | None = None
    capacity_reservation_selector_terms: list[CapacityReservationSelectorTerm] = Field(
        default_factory=list, max_length=30
    )
    role: str | None = None
    instance_profile: str | None = None
    user_data: str | None = None
    tags: dict[str, str] = Field(default_factory=dict)
    kubelet: KubeletConfiguration | None = None
    block_device_mappings: list[BlockDeviceMapping] = Field(default_factory=list)
    metadata_options: MetadataOptions = Field(default_factory=MetadataOptions)
    associate_public_ip_address: bool | None = Field(default=None, alias="associatePublicIPAddress")
    detailed_monitoring: bool | None = None
    instance_store_policy: Literal["RAID0"] | None = None
    context: str | None = None
    cpu_options: CPUOptions | None = Field(default=None, alias="cpuOptions")
    connection_tracking: ConnectionTracking | None = None
    ip_prefix_count: int | None = Field(default=None, ge=0, alias="ipPrefixCount")
    placement_group_selector: PlacementGroupSelector | None = None

    @model_validator(mode="after")
    def _role_or_profile(self) -> EC2NodeClassSpec:
        if self.role and self.instance_profile:
            raise ValueError("role and instanceProfile are mutually exclusive")
        aliases = [t for t in self.ami_selector_terms if t.alias]
        if aliases and len(self.ami_selector_terms) > 1:
            raise ValueError("amiSelectorTerms: an alias term must be the only term")
        return self


class EC2NodeClassStatus(KubeModel):
    subnets: list[dict[str, Any]] = Field(default_factory=list)
    security_groups: list[dict[str, Any]] = Field(default_factory=list)
    amis: list[dict[str, Any]] = Field(default_factory=list)
    # omitted when empty, as Karpenter's omitempty does
    capacity_reservations: list[dict[str, Any]] | None = None
    instance_profile: str | None = None
    conditions: list[Condition] = Field(default_factory=list)


class EC2NodeClass(KubeModel):
    api_version: Literal["karpenter.k8s.aws/v1"] = "karpenter.k8s.aws/v1"
    kind: Literal["EC2NodeClass"] = "EC2NodeClass"
    metadata: ObjectMeta
    spec: EC2NodeClassSpec
    status: EC2NodeClassStatus = Field(default_factory=EC2NodeClassStatus)

    @property
    def name(self) -> str:
        return self.metadata.name
