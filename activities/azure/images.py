"""AKS node images: which gallery image a node class boots, and its newest version in the region.

Karpenter Azure's self-hosted mode boots AKS's own node images from their public Community
Image Galleries (CIG). For a node class it lists the *candidate definitions* of the family
the class resolves to (``Ubuntu`` picks Ubuntu2404 from Kubernetes 1.34 and Ubuntu2204 before
it, ``AzureLinux`` picks AzureLinux v3 from 1.32), for the class's variant (default, Trusted
Launch, FIPS), in priority order: gen2 amd64, gen1 amd64, gen2 arm64. Each candidate's image
id is the version the gallery published last in the region. An instance type boots the first
candidate whose requirements (architecture, Hyper-V generation) it meets, so gen2 is preferred
where a size supports both.

The definitions are facts (``data/aks-node-images.json``, from Karpenter Azure's image
family tables); :func:`candidates` is pure, :class:`ImageResolver` reads versions through the
compute SDK (``community_gallery_image_versions.list``) with a time-bounded cache.
FIPS images are published only to AKS's private galleries, so a FIPS class resolves to no
image here, as in Karpenter Azure without its SIG option.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from importlib import resources
from typing import Any

from activities.azure.type_labels import SKU_HYPERV_GENERATION
from models import labels as L
from models.aksnodeclass import AKSNodeClass
from models.instancetype import InstanceType
from models.requirements import IN, Requirements

CIG = "CIG"
SIG = "SIG"
DEFAULT = "default"
TRUSTED_LAUNCH = "trustedLaunch"
FIPS = "fips"
FIPS_TRUSTED_LAUNCH = "fips+trustedLaunch"

# The families a node boots (the data's ``imageFamily``), by what AKSNodeClass says.
UBUNTU_2004 = "Ubuntu2004"
UBUNTU_2204 = "Ubuntu2204"
UBUNTU_2404 = "Ubuntu2404"
AZURE_LINUX_2 = "AzureLinux (v2)"
AZURE_LINUX_3 = "AzureLinux3"
# The Kubernetes minor versions from which a generic family moves on to a newer OS.
UBUNTU_2404_FROM = (1, 34)
AZURE_LINUX_3_FROM = (1, 32)

# How long a listed version is reused before the gallery is asked again.
DEFAULT_TTL_SECONDS = 3 * 3600.0

_CIG_ID = re.compile(
    r"^/CommunityGalleries/(?P<gallery>[^/]+)/images/(?P<definition>[^/]+)"
    r"/versions/(?P<version>[^/]+)$",
    re.I,
)


@dataclass(frozen=True, slots=True)
class ImageDefinition:
    """One AKS gallery image definition a family may boot."""

    family: str  # the data's imageFamily: Ubuntu2204, AzureLinux3, ...
    variant: str  # default, trustedLaunch, fips, fips+trustedLaunch
    priority: int  # lower first within (family, variant)
    gallery: str  # AKSUbuntu or AKSAzureLinux
    community_gallery: str  # the public gallery name, e.g. AKSUbuntu-38d80f77-...
    definition: str  # e.g. 2204gen2containerd
    arch: str  # amd64 or arm64
    hyperv_generation: str  # V1 or V2
    available_via: tuple[str, ...]

    @property
    def generation_label(self) -> str:
        """The ``karpenter.azure.com/sku-hyperv-generation`` value: "1" or "2"."""
        return self.hyperv_generation.removeprefix("V")

    def requirements(self) -> list[dict[str, Any]]:
        """The node selector requirements an instance type must meet to boot this image
        (as Karpenter Azure publishes them in ``status.images``)."""
        return [
            {"key": L.ARCH, "operator": IN, "values": [self.arch]},
            {"key": SKU_HYPERV_GENERATION, "operator": IN, "values": [self.generation_label]},
        ]


@dataclass(frozen=True, slots=True)
class NodeImage:
    """A resolved image: the definition and the gallery version it boots."""

    definition: ImageDefinition
    version: str

    @property
    def id(self) -> str:
        return cig_image_id(
            self.definition.community_gallery, self.definition.definition, self.version
        )

    def status_entry(self) -> dict[str, Any]:
        """The ``status.images`` entry (wire form)."""
        return {"id": self.id, "requirements": self.definition.requirements()}


def cig_image_id(community_gallery: str, definition: str, version: str) -> str:
    return f"/CommunityGalleries/{community_gallery}/images/{definition}/versions/{version}"


def parse_cig_image_id(image_id: str) -> tuple[str, str, str] | None:
    """(community gallery, definition, version) of a CIG image id, None when it is not one."""
    m = _CIG_ID.match(image_id)
    return None if m is None else (m["gallery"], m["definition"], m["version"])


@cache
def load_definitions() -> tuple[ImageDefinition, ...]:
    """Every definition in the bundled facts, in file order."""
    text = resources.files("activities.azure").joinpath("data/aks-node-images.json").read_text()
    raw = json.loads(text)
    return tuple(
        ImageDefinition(
            family=str(i["imageFamily"]),
            variant=str(i["variant"]),
            priority=int(i["priority"]),
            gallery=str(i["gallery"]),
            community_gallery=str(i["communityGallery"]),
            definition=str(i["definition"]),
            arch=str(i["arch"]),
            hyperv_generation=str(i["hyperVGeneration"]),
            available_via=tuple(i["availableVia"]),
        )
        for i in raw["images"]
    )


def minor_version(kubernetes_version: str) -> tuple[int, int]:
    """(major, minor) of ``1.33.2`` or ``v1.33``; ValueError for anything else."""
    parts = kubernetes_version.strip().removeprefix("v").split(".")
    if len(parts) < 2 or not parts[0].isdigit() or not parts[1].isdigit():
        raise ValueError(f"{kubernetes_version!r} is not a Kubernetes version such as 1.33.2")
    return int(parts[0]), int(parts[1])


def boot_family(
    image_family: str | None, kubernetes_version: str, *, fips: bool, trusted_launch: bool
) -> str:
    """The family a node boots for the class's ``imageFamily`` (Karpenter Azure's rules)."""
    minor = minor_version(kubernetes_version)
    if image_family == "Ubuntu2204":
        return UBUNTU_2204
    if image_family == "Ubuntu2404":
        return UBUNTU_2404
    if image_family == "AzureLinux":
        return AZURE_LINUX_3 if minor >= AZURE_LINUX_3_FROM else AZURE_LINUX_2
    # Ubuntu, or unset
    if fips:
        return UBUNTU_2204 if trusted_launch else UBUNTU_2004
    if trusted_launch:
        return UBUNTU_2204
    return UBUNTU_2404 if minor >= UBUNTU_2404_FROM else UBUNTU_2204


# ``kubernetes.azure.com/os-sku-effective``: the family's name as Karpenter Azure labels it.
EFFECTIVE_NAMES = {
    UBUNTU_2004: "Ubuntu",
    UBUNTU_2204: "Ubuntu2204",
    UBUNTU_2404: "Ubuntu2404",
    AZURE_LINUX_2: "AzureLinux2",
    AZURE_LINUX_3: "AzureLinux3",
}


def effective_name(
    image_family: str | None, kubernetes_version: str, *, fips: bool, trusted_launch: bool
) -> str:
    family = boot_family(image_family, kubernetes_version, fips=fips, trusted_launch=trusted_launch)
    return EFFECTIVE_NAMES[family]


def variant(*, fips: bool, trusted_launch: bool) -> str:
    if fips:
        return FIPS_TRUSTED_LAUNCH if trusted_launch else FIPS
    return TRUSTED_LAUNCH if trusted_launch else DEFAULT


def candidates(
    image_family: str | None,
    kubernetes_version: str,
    *,
    fips: bool = False,
    trusted_launch: bool = False,
    via: str = CIG,
    definitions: Iterable[ImageDefinition] | None = None,
) -> list[ImageDefinition]:
    """The definitions a class may boot, in the order an instance type tries them.

    Trusted Launch with FIPS on AzureLinux has no definition of its own; FIPS without the
    private galleries (``via=CIG``) has none at all: both give an empty list.
    """
    family = boot_family(image_family, kubernetes_version, fips=fips, trusted_launch=trusted_launch)
    wanted = variant(fips=fips, trusted_launch=trusted_launch)
    pool = load_definitions() if definitions is None else tuple(definitions)
    found = [
        d for d in pool if d.family == family and d.variant == wanted and via in d.available_via
    ]
    return sorted(found, key=lambda d: d.priority)


def nodeclass_candidates(
    nodeclass: AKSNodeClass, kubernetes_version: str, via: str = CIG
) -> list[ImageDefinition]:
    spec = nodeclass.spec
    return candidates(
        spec.image_family,
        kubernetes_version,
        fips=spec.fips_mode == "FIPS",
        trusted_launch=spec.trusted_launch_enabled,
        via=via,
    )


def fits(requirements: Sequence[Mapping[str, Any]], it: InstanceType) -> bool:
    reqs = Requirements.from_selector_terms(requirements)
    return it.requirements.compatible(reqs) is None


def image_for_instance_type(images: Sequence[NodeImage], it: InstanceType) -> NodeImage | None:
    """The image ``it`` boots: the first of ``images`` whose architecture and Hyper-V
    generation it supports."""
    for image in images:
        if fits(image.definition.requirements(), it):
            return image
    return None


def image_id_for_instance_type(
    status_images: Sequence[Mapping[str, Any]], it: InstanceType
) -> str | None:
    """The same choice made from a class's published ``status.images`` (wire form), as drift
    and a launch that reads the status make it."""
    for entry in status_images:
        if fits(entry.get("requirements") or [], it):
            return str(entry.get("id"))
    return None


def select_image(
    images: Sequence[NodeImage], arch: str, hyperv_generations: Iterable[str]
) -> NodeImage | None:
    """The first of ``images`` for ``arch`` whose generation (V1/V2 or 1/2) is supported."""
    gens = {g.upper().removeprefix("V") for g in hyperv_generations}
    for image in images:
        d = image.definition
        if d.arch == arch and d.generation_label in gens:
            return image
    return None


# -- reading versions from the gallery -----------------------------------------------------
def newest_version(versions: Iterable[Any]) -> str | None:
    """The name of the version published last (Karpenter Azure picks by ``publishedDate``);
    versions marked ``excludeFromLatest`` are passed over. ``versions`` are the SDK's
    ``CommunityGalleryImageVersion`` items (or anything with ``name`` and ``properties``)."""
    best: tuple[datetime, str] | None = None
    for v in versions:
        props = getattr(v, "properties", None)
        published = getattr(props, "published_date", None) if props is not None else None
        if getattr(props, "exclude_from_latest", False):
            continue
        name = getattr(v, "name", None)
        if not name or published is None:
            continue
        if best is None or published > best[0]:
            best = (published, str(name))
    return None if best is None else best[1]


class NoImages(Exception):
    """A node class resolves to no image (no candidate definition, or none published)."""


@dataclass
class ImageResolver:
    """Newest published versions of the candidate definitions, per region, cached."""

    compute: Any  # azure.mgmt.compute.ComputeManagementClient
    region: str
    ttl_seconds: float = DEFAULT_TTL_SECONDS
    clock: Callable[[], float] = time.monotonic
    _versions: dict[tuple[str, str], tuple[float, str | None]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def latest_version(self, definition: ImageDefinition) -> str | None:
        """The newest version of ``definition`` in the region (None when none is published)."""
        key = (definition.community_gallery, definition.definition)
        now = self.clock()
        with self._lock:
            hit = self._versions.get(key)
            if hit is not None and now - hit[0] < self.ttl_seconds:
                return hit[1]
        pages = self.compute.community_gallery_image_versions.list(
            self.region, definition.community_gallery, definition.definition
        )
        version = newest_version(pages)
        with self._lock:
            self._versions[key] = (now, version)
        return version

    def resolve(self, nodeclass: AKSNodeClass, kubernetes_version: str) -> list[NodeImage]:
        """The class's images in preference order (``status.images``), each at its newest
        version; a definition with no published version is left out."""
        out = []
        for d in nodeclass_candidates(nodeclass, kubernetes_version):
            version = self.latest_version(d)
            if version:
                out.append(NodeImage(d, version))
        return out

    def image_for(
        self,
        nodeclass: AKSNodeClass,
        kubernetes_version: str,
        arch: str,
        hyperv_generations: Iterable[str],
    ) -> NodeImage:
        """The image a VM of ``arch`` and these generations boots; raises ``NoImages``."""
        images = self.resolve(nodeclass, kubernetes_version)
        gens = list(hyperv_generations)
        image = select_image(images, arch, gens)
        if image is None:
            raise NoImages(
                f"AKSNodeClass {nodeclass.name}: no {nodeclass.spec.image_family} image for "
                f"{arch} Hyper-V generation {'/'.join(gens) or 'none'} "
                f"(Kubernetes {kubernetes_version})"
            )
        return image

    def forget(self) -> None:
        with self._lock:
            self._versions.clear()
