"""An AKSNodeClass resolved: its images, the cluster's Kubernetes version and its subnet.

Karpenter Azure's node class status controller publishes ``status.kubernetesVersion`` (the
cluster's) with ``KubernetesVersionReady``, ``status.images`` (the newest version of each
candidate gallery definition, ``activities.azure.images``) with ``ImagesReady``, and checks
the subnet with ``SubnetsReady`` (``spec.vnetSubnetID``, else the cluster's subnet: parsed,
then read from the network API). The launch reads the same resolution: the image an
instance type boots and the subnet its NIC goes into. Image versions and subnet reads are
cached (``ImageResolver``'s TTL, ``SUBNET_TTL_SECONDS``), so the planner asking whether a
class is ready reads the gallery and the subnet once per interval, not once per round.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from azure.core.exceptions import AzureError, ResourceNotFoundError

from activities.azure.images import (
    DEFAULT_TTL_SECONDS,
    ImageResolver,
    NodeImage,
    NoImages,
    image_for_instance_type,
    minor_version,
)
from activities.cloud.options import ProviderOptions
from activities.cloud.provider import NodeClassStatus
from activities.kubernetes import conditions as cond
from models.aksnodeclass import (
    IMAGES_READY,
    KUBERNETES_VERSION_READY,
    LOCAL_DNS_READY,
    SUBNETS_READY,
    AKSNodeClass,
)
from models.instancetype import InstanceType

SUBNET_TTL_SECONDS = 180.0  # Karpenter Azure re-checks a healthy subnet every 3 minutes
# Karpenter Azure's reasons.
IMAGES_NOT_FOUND = "ImagesNotFound"
IMAGES_UNKNOWN_ERROR = "ImagesUnknownError"
SIG_REQUIRED_FOR_FIPS = "SIGRequiredForFIPS"
KUBERNETES_VERSION_UNKNOWN = "KubernetesVersionUnknown"
SUBNET_NOT_FOUND = "SubnetNotFound"
SUBNET_ID_INVALID = "SubnetIDInvalid"
SUBNET_UNKNOWN_ERROR = "SubnetUnknownError"

_SUBNET = re.compile(
    r"(?i)^/subscriptions/(?P<sub>[^/]+)/resourceGroups/(?P<rg>[^/]+)/providers/"
    r"Microsoft\.Network/virtualNetworks/(?P<vnet>[^/]+)/subnets/(?P<subnet>[^/]+)$"
)


def subnet_parts(subnet_id: str) -> tuple[str, str, str, str] | None:
    """(subscription, resource group, virtual network, subnet) of a subnet id, or None."""
    m = _SUBNET.match(subnet_id)
    return None if m is None else (m["sub"], m["rg"], m["vnet"], m["subnet"])


@dataclass
class AKSNodeClassResolver:
    """Resolves node classes for the status writer, the planner and the launch."""

    images: ImageResolver
    # The cluster's Kubernetes version ("" when unknown); asked at each resolution, so a
    # control-plane upgrade moves every class's images and version.
    kubernetes_version: Callable[[], str]
    network: Any = None  # azure.mgmt.network.NetworkManagementClient (None: no subnet read)
    cluster_subnet_id: str = ""
    clock: Callable[[], float] = time.monotonic
    _subnets: dict[str, tuple[float, cond.Condition]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # -- what the launch reads -------------------------------------------------------------
    def version(self) -> str:
        """The cluster's Kubernetes version without a leading v; ValueError when unknown."""
        raw = self.kubernetes_version().strip().removeprefix("v")
        minor_version(raw)  # raises ValueError naming it
        return raw

    def node_images(self, nodeclass: AKSNodeClass) -> list[NodeImage]:
        """The class's images in preference order (what ``status.images`` publishes)."""
        return self.images.resolve(nodeclass, self.version())

    def image_for(self, nodeclass: AKSNodeClass, it: InstanceType) -> NodeImage:
        """The image a VM of ``it`` boots: the first of the class's images whose architecture
        and Hyper-V generation it supports. Raises ``NoImages``."""
        image = image_for_instance_type(self.node_images(nodeclass), it)
        if image is None:
            raise NoImages(
                f"AKSNodeClass {nodeclass.name}: no {nodeclass.spec.image_family} image suits "
                f"{it.name}"
            )
        return image

    def subnet_id(self, nodeclass: AKSNodeClass) -> str:
        """The subnet the class's NICs go into: ``spec.vnetSubnetID``, else the cluster's."""
        return nodeclass.spec.vnet_subnet_id or self.cluster_subnet_id

    # -- status --------------------------------------------------------------------------
    def status(self, nodeclass: AKSNodeClass) -> NodeClassStatus:
        """Conditions (KubernetesVersionReady, ImagesReady, SubnetsReady, LocalDNSReady)
        and the fields to publish (``kubernetesVersion``, ``images``)."""
        fields: dict[str, Any] = {}
        out: list[cond.Condition] = []
        try:
            version = self.version()
        except ValueError as exc:
            out.append(
                cond.Condition(
                    KUBERNETES_VERSION_READY,
                    "False",
                    KUBERNETES_VERSION_UNKNOWN,
                    f"the cluster's Kubernetes version is not known: {exc}",
                )
            )
            out.append(
                cond.Condition(
                    IMAGES_READY,
                    "False",
                    KUBERNETES_VERSION_UNKNOWN,
                    "images are chosen by the cluster's Kubernetes version, which is not known",
                )
            )
        else:
            fields["kubernetesVersion"] = version
            out.append(cond.Condition(KUBERNETES_VERSION_READY, "True", KUBERNETES_VERSION_READY))
            images_cond, entries = self._images_condition(nodeclass, version)
            out.append(images_cond)
            if entries:
                fields["images"] = entries
        out.append(self.subnet_condition(nodeclass))
        out.append(cond.Condition(LOCAL_DNS_READY, "True", LOCAL_DNS_READY))
        return NodeClassStatus(out, fields)

    def not_ready(self, nodeclass: AKSNodeClass) -> str | None:
        """Why launches from the class would fail now (the first False condition), or None."""
        for c in self.status(nodeclass).conditions:
            if c.status != "True":
                return c.message or c.reason
        return None

    def _images_condition(
        self, nodeclass: AKSNodeClass, version: str
    ) -> tuple[cond.Condition, list[dict[str, Any]]]:
        if nodeclass.spec.fips_mode == "FIPS":
            return (
                cond.Condition(
                    IMAGES_READY,
                    "False",
                    SIG_REQUIRED_FOR_FIPS,
                    "FIPS node images are published only to AKS's private galleries; "
                    "self-hosted nodes boot community gallery images",
                ),
                [],
            )
        try:
            images = self.images.resolve(nodeclass, version)
        except AzureError as exc:  # refused, throttled past the SDK's retries, unreachable
            return (
                cond.Condition(
                    IMAGES_READY,
                    "False",
                    IMAGES_UNKNOWN_ERROR,
                    f"listing gallery image versions: {_first_line(exc)}",
                ),
                [],
            )
        if not images:
            return (
                cond.Condition(
                    IMAGES_READY,
                    "False",
                    IMAGES_NOT_FOUND,
                    f"no {nodeclass.spec.image_family} image is published for Kubernetes "
                    f"{version} in {self.images.region}",
                ),
                [],
            )
        entries = [i.status_entry() for i in images]
        return cond.Condition(IMAGES_READY, "True", IMAGES_READY), entries

    def subnet_condition(self, nodeclass: AKSNodeClass) -> cond.Condition:
        """``SubnetsReady``: the subnet id parses and the network API has it (cached)."""
        subnet = self.subnet_id(nodeclass)
        parts = subnet_parts(subnet)
        if parts is None:
            why = (
                f"failed to parse vnetSubnetID {subnet}"
                if subnet
                else "no spec.vnetSubnetID and no cluster subnet is configured"
            )
            return cond.Condition(SUBNETS_READY, "False", SUBNET_ID_INVALID, why)
        if self.network is None:
            return cond.Condition(SUBNETS_READY, "True", SUBNETS_READY)
        now = self.clock()
        key = subnet.lower()
        with self._lock:
            hit = self._subnets.get(key)
            if hit is not None and now - hit[0] < SUBNET_TTL_SECONDS:
                return hit[1]
        _, group, vnet, name = parts
        try:
            self.network.subnets.get(group, vnet, name)
        except ResourceNotFoundError:
            found = cond.Condition(
                SUBNETS_READY, "False", SUBNET_NOT_FOUND, f"resource not found: {subnet}"
            )
        except AzureError as exc:
            # not cached: the next check asks again
            return cond.Condition(
                SUBNETS_READY,
                "False",
                SUBNET_UNKNOWN_ERROR,
                f"unknown error getting subnet: {_first_line(exc)}",
            )
        else:
            found = cond.Condition(SUBNETS_READY, "True", SUBNETS_READY)
        with self._lock:
            self._subnets[key] = (now, found)
        return found


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


@dataclass
class CachedVersion:
    """The cluster's Kubernetes version read through ``read`` (the API server's ``/version``)
    at most once per ``ttl_seconds``, so a control-plane upgrade reaches the node classes
    (and drifts their nodes) without a restart; a failed read keeps the last answer."""

    read: Callable[[], str]
    ttl_seconds: float = 300.0
    clock: Callable[[], float] = time.monotonic
    _value: str = ""
    _at: float | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self) -> str:
        now = self.clock()
        with self._lock:
            if self._at is not None and now - self._at < self.ttl_seconds:
                return self._value
        try:
            value = self.read()
        except Exception:  # the API server is away: the last version stands
            with self._lock:
                return self._value
        with self._lock:
            self._value, self._at = value, now
            return value


def resolver_for(
    opts: ProviderOptions | None,
    compute: Any,
    *,
    region: str = "",
    network: Any = None,
    cluster_subnet_id: str = "",
) -> AKSNodeClassResolver:
    """The resolver a provider built from settings uses: images from ``compute``'s
    community galleries, the version the settings give (``KUBERNETES_VERSION``, filled from
    the API server when the worker reads it there), subnets read with ``network``."""
    version = opts.kubernetes_version if opts is not None else ""
    where = opts.region if opts is not None and opts.region else region
    # AMI_/SUBNET_REFRESH_INTERVAL's Azure twin: how long a listed image version serves
    ttl = opts.nodeclass_refresh_seconds if opts is not None else DEFAULT_TTL_SECONDS
    return AKSNodeClassResolver(
        ImageResolver(compute, where, ttl_seconds=ttl),
        lambda: version,
        network=network,
        cluster_subnet_id=cluster_subnet_id,
    )
