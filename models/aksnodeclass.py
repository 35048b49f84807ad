"""``karpenter.azure.com/v1beta1`` AKSNodeClass: how to launch a VM for an AKS node.

The field names, defaults and bounds are those of Karpenter's Azure provider, so its
manifests parse unchanged; the CRD in ``deploy/crds/`` holds the same rules for the API server.
Fields Joinery does not act on yet are listed by :func:`unimplemented_fields` so the object can
be made not Ready with a condition naming them (never silently ignored).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from models.kube import KubeModel, NodeSelectorRequirementWithMinValues, ObjectMeta
from models.nodeclaim import Condition

API_VERSION: Literal["karpenter.azure.com/v1beta1"] = "karpenter.azure.com/v1beta1"
KIND: Literal["AKSNodeClass"] = "AKSNodeClass"

IMAGE_FAMILIES = ("Ubuntu", "Ubuntu2204", "Ubuntu2404", "AzureLinux")
UBUNTU_FAMILIES = frozenset({"Ubuntu", "Ubuntu2204", "Ubuntu2404"})
DEFAULT_IMAGE_FAMILY: Literal["Ubuntu"] = "Ubuntu"
DEFAULT_OS_DISK_SIZE_GB = 128

# Status condition types the Azure provider reports; all True makes the class Ready.
IMAGES_READY = "ImagesReady"
KUBERNETES_VERSION_READY = "KubernetesVersionReady"
SUBNETS_READY = "SubnetsReady"
VALIDATION_SUCCEEDED = "ValidationSucceeded"
LOCAL_DNS_READY = "LocalDNSReady"
READINESS = (
    IMAGES_READY,
    KUBERNETES_VERSION_READY,
    SUBNETS_READY,
    VALIDATION_SUCCEEDED,
    LOCAL_DNS_READY,
)

_SUBNET_ID = re.compile(
    r"(?i)^/subscriptions/[^/]+/resourceGroups/[a-zA-Z0-9_\-().]{0,89}[a-zA-Z0-9_\-()]"
    r"/providers/Microsoft\.Network/virtualNetworks/[^/]+/subnets/[^/]+$"
)
_QUANTITY_SIZE = re.compile(r"^\d+(E|P|T|G|M|K|Ei|Pi|Ti|Gi|Mi|Ki)$")
_DNS_ZONE = re.compile(
    r"^(\.|[A-Za-z0-9]([A-Za-z0-9_-]{0,61}[A-Za-z0-9])?"
    r"(\.[A-Za-z0-9]([A-Za-z0-9_-]{0,61}[A-Za-z0-9])?)*\.?)$"
)
_DNS_DURATION = re.compile(r"^([0-9]+(s|m|h))+$")
_PORT_RANGE = re.compile(r"^\d+ \d+$")


class TrustedLaunch(KubeModel):
    vtpm: bool | None = None
    secure_boot: bool | None = None

    @property
    def enabled(self) -> bool:
        return bool(self.vtpm) or bool(self.secure_boot)


class Security(KubeModel):
    encryption_at_host: bool | None = None
    trusted_launch: TrustedLaunch | None = None


class LocalDNSZoneOverride(KubeModel):
    zone: str = Field(min_length=1, max_length=254)
    query_logging: Literal["Error", "Log"]
    protocol: Literal["PreferUDP", "ForceTCP"]
    forward_destination: Literal["ClusterCoreDNS", "VnetDNS"]
    forward_policy: Literal["Sequential", "RoundRobin", "Random"]
    max_concurrent: int = Field(ge=0)
    cache_duration: str
    serve_stale_duration: str
    serve_stale: Literal["Verify", "Immediate", "Disable"]

    @field_validator("zone")
    @classmethod
    def _zone(cls, v: str) -> str:
        if not _DNS_ZONE.match(v):
            raise ValueError(f"{v!r} is not a DNS zone")
        return v

    @field_validator("cache_duration", "serve_stale_duration")
    @classmethod
    def _duration(cls, v: str) -> str:
        if not _DNS_DURATION.match(v):
            raise ValueError(f"{v!r} is not a duration such as 1h or 30s")
        return v

    @model_validator(mode="after")
    def _rules(self) -> LocalDNSZoneOverride:
        if self.zone.endswith("cluster.local") and self.forward_destination == "VnetDNS":
            raise ValueError("forwardDestination: 'cluster.local' cannot be forwarded to VnetDNS")
        if self.serve_stale == "Verify" and self.protocol == "ForceTCP":
            raise ValueError("serveStale: Verify cannot be used with protocol ForceTCP")
        return self


def _check_overrides(overrides: list[LocalDNSZoneOverride]) -> list[LocalDNSZoneOverride]:
    zones = [o.zone for o in overrides]
    if len(set(zones)) != len(zones):
        raise ValueError("zones must be unique")
    missing = [z for z in (".", "cluster.local") if z not in zones]
    if missing:
        raise ValueError("must contain required zones '.' and 'cluster.local'")
    return overrides


class LocalDNS(KubeModel):
    mode: Literal["Preferred", "Required", "Disabled"]
    vnet_dns_overrides: list[LocalDNSZoneOverride] = Field(alias="vnetDNSOverrides", max_length=100)
    kube_dns_overrides: list[LocalDNSZoneOverride] = Field(alias="kubeDNSOverrides", max_length=100)

    @field_validator("vnet_dns_overrides")
    @classmethod
    def _vnet(cls, v: list[LocalDNSZoneOverride]) -> list[LocalDNSZoneOverride]:
        _check_overrides(v)
        for o in v:
            if o.forward_destination != "ClusterCoreDNS":
                continue
            if o.zone == ".":
                raise ValueError("root zone '.' cannot be forwarded to ClusterCoreDNS")
            if not o.zone.endswith("cluster.local"):
                raise ValueError("external domains cannot be forwarded to ClusterCoreDNS")
        return v

    @field_validator("kube_dns_overrides")
    @classmethod
    def _kube(cls, v: list[LocalDNSZoneOverride]) -> list[LocalDNSZoneOverride]:
        return _check_overrides(v)


class GPU(KubeModel):
    mode: Literal["Driver", "None"] = "Driver"


class ArtifactStreaming(KubeModel):
    enabled: bool | None = None


class KubeletConfiguration(KubeModel):
    """The subset of kubelet settings AKS lets a node pool change (its CustomKubeletConfig)."""

    cpu_manager_policy: Literal["none", "static"] = "none"
    cpu_cfs_quota: bool = Field(default=True, alias="cpuCFSQuota")
    cpu_cfs_quota_period: str = Field(default="100ms", alias="cpuCFSQuotaPeriod")
    image_gc_high_threshold_percent: int | None = Field(
        default=None, ge=0, le=100, alias="imageGCHighThresholdPercent"
    )
    image_gc_low_threshold_percent: int | None = Field(
        default=None, ge=0, le=100, alias="imageGCLowThresholdPercent"
    )
    topology_manager_policy: Literal["restricted", "best-effort", "none", "single-numa-node"] = (
        "none"
    )
    allowed_unsafe_sysctls: list[str] | None = None
    container_log_max_size: str = "50Mi"
    container_log_max_files: int = Field(default=5, ge=2)
    pod_pids_limit: int | None = None
    fail_swap_on: bool | None = None

    @field_validator("container_log_max_size")
    @classmethod
    def _log_size(cls, v: str) -> str:
        if not _QUANTITY_SIZE.match(v):
            raise ValueError(f"{v!r} is not a size such as 50Mi")
        return v

    @model_validator(mode="after")
    def _gc(self) -> KubeletConfiguration:
        high, low = self.image_gc_high_threshold_percent, self.image_gc_low_threshold_percent
        if high is not None and low is not None and high <= low:
            raise ValueError(
                "imageGCHighThresholdPercent must be greater than imageGCLowThresholdPercent"
            )
        return self


# sysctl name → (minimum, maximum), the bounds AKS's custom node configuration accepts.
SYSCTL_BOUNDS: dict[str, tuple[int, int]] = {
    "fsAioMaxNr": (65536, 6553500),
    "fsFileMax": (8192, 12000500),
    "fsInotifyMaxUserWatches": (781250, 2097152),
    "fsNrOpen": (8192, 20000500),
    "kernelThreadsMax": (20, 513785),
    "netCoreNetdevMaxBacklog": (1000, 3240000),
    "netCoreOptmemMax": (20480, 4194304),
    "netCoreRmemDefault": (212992, 134217728),
    "netCoreRmemMax": (212992, 134217728),
    "netCoreSomaxconn": (4096, 3240000),
    "netCoreWmemDefault": (212992, 134217728),
    "netCoreWmemMax": (212992, 134217728),
    "netIPv4NeighDefaultGcThresh1": (128, 80000),
    "netIPv4NeighDefaultGcThresh2": (512, 90000),
    "netIPv4NeighDefaultGcThresh3": (1024, 100000),
    "netIPv4TCPFinTimeout": (5, 120),
    "netIPv4TCPKeepaliveProbes": (1, 15),
    "netIPv4TCPKeepaliveTime": (30, 432000),
    "netIPv4TCPMaxSynBacklog": (128, 3240000),
    "netIPv4TCPMaxTwBuckets": (8000, 1440000),
    "netIPv4TCPKeepaliveIntvl": (10, 90),
    "netNetfilterNfConntrackBuckets": (65536, 524288),
    "netNetfilterNfConntrackMax": (131072, 2097152),
    "vmMaxMapCount": (65530, 262144),
    "vmSwappiness": (0, 100),
    "vmVfsCachePressure": (0, 100),
}
_SYSCTL_ORDER = (
    ("netCoreRmemDefault", "netCoreRmemMax"),
    ("netCoreWmemDefault", "netCoreWmemMax"),
    ("netIPv4NeighDefaultGcThresh1", "netIPv4NeighDefaultGcThresh2"),
    ("netIPv4NeighDefaultGcThresh2", "netIPv4NeighDefaultGcThresh3"),
)


def _check_sysctls(raw: dict[str, Any]) -> dict[str, Any]:
    """The sysctls object as given, checked field by field (names are camelCase as on the wire)."""
    for key, value in raw.items():
        if key == "netIPv4TCPTwReuse":
            if not isinstance(value, bool):
                raise ValueError(f"{key}: expected a boolean")
            continue
        if key == "netIPv4IPLocalPortRange":
            _check_port_range(value)
            continue
        bounds = SYSCTL_BOUNDS.get(key)
        if bounds is None:
            continue  # unknown fields are kept, as everywhere in the Karpenter kinds
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{key}: expected an integer")
        low, high = bounds
        if not low <= value <= high:
            raise ValueError(f"{key}: must be between {low} and {high}")
    for small, large in _SYSCTL_ORDER:
        if small in raw and large in raw and raw[small] > raw[large]:
            raise ValueError(f"{small}: must be <= {large}")
    return raw


def _check_port_range(value: Any) -> None:
    key = "netIPv4IPLocalPortRange"
    if not isinstance(value, str) or not _PORT_RANGE.match(value):
        raise ValueError(f"{key}: expected two ports, 'first last'")
    first, last = (int(p) for p in value.split(" "))
    if not 1024 <= first <= 60999:
        raise ValueError(f"{key}: first port must be in [1024, 60999]")
    if not 32768 <= last <= 65535:
        raise ValueError(f"{key}: last port must be in [32768, 65535]")
    if first > last:
        raise ValueError(f"{key}: first port must be <= last port")


class LinuxOSConfiguration(KubeModel):
    swap_file_size: str | None = None
    sysctls: dict[str, Any] | None = None
    transparent_huge_page_defrag: (
        Literal["always", "defer", "defer+madvise", "madvise", "never"] | None
    ) = None
    transparent_huge_page_enabled: Literal["always", "madvise", "never"] | None = None

    @field_validator("swap_file_size")
    @classmethod
    def _swap(cls, v: str | None) -> str | None:
        if v is not None and not _QUANTITY_SIZE.match(v):
            raise ValueError(f"{v!r} is not a size such as 1500Mi")
        return v

    @field_validator("sysctls")
    @classmethod
    def _sysctls(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        return None if v is None else _check_sysctls(v)


def _check_tags(tags: dict[str, str]) -> dict[str, str]:
    for key, value in tags.items():
        if len(key) > 512:
            raise ValueError("tags keys must be less than 512 characters")
        if any(c in key for c in "<>%&?"):
            raise ValueError("tags keys must not contain '<', '>', '%', '&', or '?'")
        if "\\" in key:
            raise ValueError("tags keys must not contain '\\'")
        if len(value) > 256:
            raise ValueError("tags values must be less than 256 characters")
    return tags


class AKSNodeClassSpec(KubeModel):
    vnet_subnet_id: str | None = Field(default=None, alias="vnetSubnetID")
    os_disk_size_gb: int = Field(
        default=DEFAULT_OS_DISK_SIZE_GB, ge=30, le=2048, alias="osDiskSizeGB"
    )
    image_family: Literal["Ubuntu", "Ubuntu2204", "Ubuntu2404", "AzureLinux"] = DEFAULT_IMAGE_FAMILY
    fips_mode: Literal["FIPS", "Disabled"] | None = Field(default=None, alias="fipsMode")
    tags: dict[str, str] = Field(default_factory=dict)
    kubelet: KubeletConfiguration | None = None
    max_pods: int | None = Field(default=None, ge=10, le=250)
    security: Security | None = None
    local_dns: LocalDNS | None = Field(default=None, alias="localDNS")
    gpu: GPU | None = None
    artifact_streaming: ArtifactStreaming | None = None
    linux_os_config: LinuxOSConfiguration | None = Field(default=None, alias="linuxOSConfig")

    @field_validator("vnet_subnet_id")
    @classmethod
    def _subnet(cls, v: str | None) -> str | None:
        if v is not None and not _SUBNET_ID.match(v):
            raise ValueError(
                "expected /subscriptions/<id>/resourceGroups/<group>/providers/"
                "Microsoft.Network/virtualNetworks/<vnet>/subnets/<subnet>"
            )
        return v

    @field_validator("tags")
    @classmethod
    def _tags(cls, v: dict[str, str]) -> dict[str, str]:
        return _check_tags(v)

    @model_validator(mode="after")
    def _cross_field(self) -> AKSNodeClassSpec:
        """The provider's CEL rules that relate two fields, each reported on the first one."""
        trusted = self.trusted_launch_enabled
        if self.fips_mode == "FIPS":
            if self.image_family == "Ubuntu2404":
                raise ValueError("fipsMode: FIPS is not yet supported for Ubuntu2404")
            if self.image_family == "Ubuntu2204" and not trusted:
                raise ValueError("fipsMode: TrustedLaunch is required for FIPS with Ubuntu2204")
            if trusted and self.image_family not in ("Ubuntu", "Ubuntu2204"):
                raise ValueError(
                    "fipsMode: TrustedLaunch with FIPS is only supported for Ubuntu and Ubuntu2204"
                )
        swap = self.linux_os_config is not None and self.linux_os_config.swap_file_size
        if swap and (self.kubelet is None or self.kubelet.fail_swap_on is not False):
            raise ValueError(
                "linuxOSConfig.swapFileSize: kubelet.failSwapOn must be set to false "
                "when linuxOSConfig.swapFileSize is specified"
            )
        return self

    @property
    def encryption_at_host(self) -> bool:
        return bool(self.security and self.security.encryption_at_host)

    @property
    def trusted_launch_enabled(self) -> bool:
        tl = self.security.trusted_launch if self.security else None
        return tl is not None and tl.enabled

    @property
    def gpu_mode(self) -> str:
        return self.gpu.mode if self.gpu is not None else "Driver"

    @property
    def artifact_streaming_enabled(self) -> bool:
        return bool(self.artifact_streaming and self.artifact_streaming.enabled)


class NodeImage(KubeModel):
    id: str
    requirements: list[NodeSelectorRequirementWithMinValues] = Field(default_factory=list)


class AKSNodeClassStatus(KubeModel):
    images: list[NodeImage] = Field(default_factory=list)
    kubernetes_version: str | None = None
    conditions: list[Condition] = Field(default_factory=list)
    local_dns_state: Literal["Enabled", "Disabled"] | None = Field(
        default=None, alias="localDNSState"
    )


class AKSNodeClass(KubeModel):
    api_version: Literal["karpenter.azure.com/v1beta1"] = API_VERSION
    kind: Literal["AKSNodeClass"] = KIND
    metadata: ObjectMeta
    spec: AKSNodeClassSpec = Field(default_factory=AKSNodeClassSpec)
    status: AKSNodeClassStatus = Field(default_factory=AKSNodeClassStatus)

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def local_dns_enabled(self) -> bool:
        """As the provider decides it: from the resolved status, never from the spec's mode."""
        return self.status.local_dns_state == "Enabled"


# Fields Joinery reads but does not act on yet, with why (spec path → reason). A class that
# sets one is not Ready: a silent no-op would launch nodes unlike the ones asked for.
UNIMPLEMENTED: dict[str, str] = {
    "localDNS": "per-node local DNS is not configured by Joinery yet",
    "artifactStreaming": "artifact streaming is not configured by Joinery yet",
    "linuxOSConfig": "custom Linux OS configuration is not applied by Joinery yet",
    "kubelet.cpuManagerPolicy": "kubelet CPU manager policy is not applied by Joinery yet",
    "kubelet.topologyManagerPolicy": "kubelet topology manager policy is not applied yet",
    "kubelet.allowedUnsafeSysctls": "kubelet unsafe sysctls are not applied by Joinery yet",
    "kubelet.failSwapOn": "kubelet swap settings are not applied by Joinery yet",
}


def unimplemented_fields(spec: AKSNodeClassSpec) -> list[str]:
    """Spec paths set to something Joinery would not honour, in a stable order."""
    out: list[str] = []
    if spec.local_dns is not None and spec.local_dns.mode != "Disabled":
        out.append("localDNS")
    if spec.artifact_streaming_enabled:
        out.append("artifactStreaming")
    if spec.linux_os_config is not None and spec.linux_os_config.model_dump(exclude_none=True):
        out.append("linuxOSConfig")
    kubelet = spec.kubelet
    if kubelet is not None:
        if kubelet.cpu_manager_policy != "none":
            out.append("kubelet.cpuManagerPolicy")
        if kubelet.topology_manager_policy != "none":
            out.append("kubelet.topologyManagerPolicy")
        if kubelet.allowed_unsafe_sysctls:
            out.append("kubelet.allowedUnsafeSysctls")
        if kubelet.fail_swap_on is False:
            out.append("kubelet.failSwapOn")
    return out


def validation_condition(spec: AKSNodeClassSpec, generation: int | None = None) -> Condition:
    """``ValidationSucceeded``: False naming the first unimplemented field (and how many more)."""
    fields = unimplemented_fields(spec)
    if not fields:
        return Condition(
            type=VALIDATION_SUCCEEDED,
            status="True",
            reason=VALIDATION_SUCCEEDED,
            observed_generation=generation,
        )
    first = fields[0]
    more = f" (and {', '.join('spec.' + f for f in fields[1:])})" if len(fields) > 1 else ""
    return Condition(
        type=VALIDATION_SUCCEEDED,
        status="False",
        reason="UnsupportedField",
        message=f"spec.{first}: {UNIMPLEMENTED[first]}{more}",
        observed_generation=generation,
    )
