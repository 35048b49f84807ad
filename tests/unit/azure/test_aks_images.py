"""AKS node image selection: the definitions a node class tries, in order, and the newest
published version. Expected values are written out from Karpenter Azure's family tables
(its ubuntu_2204.go, ubuntu_2404.go, azlinux*.go), not derived from our data file."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest

from activities.azure import images
from activities.azure.images import ImageResolver, NodeImage, NoImages
from activities.azure.nodeclasses import CachedVersion
from models.aksnodeclass import AKSNodeClass

UBUNTU_CIG = "AKSUbuntu-38d80f77-467a-481f-a8d4-09b6d4220bd2"
AZL_CIG = "AKSAzureLinux-f7c7cda5-1c9a-4bdc-a222-9614c968580b"


def _names(
    family: str | None, k8s: str, *, fips: bool = False, trusted_launch: bool = False
) -> list[str]:
    found = images.candidates(family, k8s, fips=fips, trusted_launch=trusted_launch)
    return [d.definition for d in found]


@pytest.mark.parametrize(
    ("family", "k8s", "expected"),
    [
        (
            "Ubuntu2204",
            "1.33.1",
            ["2204gen2containerd", "2204containerd", "2204gen2arm64containerd"],
        ),
        (
            "Ubuntu2404",
            "1.30.0",
            ["2404gen2containerd", "2404containerd", "2404gen2arm64containerd"],
        ),
        ("Ubuntu", "1.33.9", ["2204gen2containerd", "2204containerd", "2204gen2arm64containerd"]),
        ("Ubuntu", "1.34.0", ["2404gen2containerd", "2404containerd", "2404gen2arm64containerd"]),
        (None, "v1.34", ["2404gen2containerd", "2404containerd", "2404gen2arm64containerd"]),
        ("AzureLinux", "1.31.4", ["V2gen2", "V2", "V2gen2arm64"]),
        ("AzureLinux", "1.32.0", ["V3gen2", "V3", "V3gen2arm64"]),
    ],
)
def test_candidates_by_family_and_version(
    family: str | None, k8s: str, expected: list[str]
) -> None:
    assert _names(family, k8s) == expected


def test_trusted_launch_and_fips() -> None:
    assert _names("Ubuntu", "1.34.0", trusted_launch=True) == ["2204gen2TLcontainerd"]
    assert _names("Ubuntu2404", "1.34.0", trusted_launch=True) == ["2404gen2TLcontainerd"]
    assert _names("AzureLinux", "1.33.0", trusted_launch=True) == ["V3gen2TL"]
    # FIPS images are published to AKS's private galleries only
    assert _names("Ubuntu", "1.33.0", fips=True) == []
    assert _names("AzureLinux", "1.33.0", fips=True) == []
    sig = [d.definition for d in images.candidates("Ubuntu", "1.33.0", fips=True, via=images.SIG)]
    assert sig == ["2004gen2fipscontainerd", "2004fipscontainerd"]


def test_bad_kubernetes_version() -> None:
    with pytest.raises(ValueError, match="not a Kubernetes version"):
        images.candidates("Ubuntu", "latest")


def test_definition_requirements_and_galleries() -> None:
    first = images.candidates("Ubuntu2204", "1.33.0")[0]
    assert first.community_gallery == UBUNTU_CIG
    assert first.requirements() == [
        {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
        {"key": "karpenter.azure.com/sku-hyperv-generation", "operator": "In", "values": ["2"]},
    ]
    azl = images.candidates("AzureLinux", "1.33.0")
    assert {d.community_gallery for d in azl} == {AZL_CIG}
    assert [(d.arch, d.hyperv_generation) for d in azl] == [
        ("amd64", "V2"),
        ("amd64", "V1"),
        ("arm64", "V2"),
    ]


def test_image_id_round_trip() -> None:
    image_id = images.cig_image_id(UBUNTU_CIG, "2204gen2containerd", "202512.18.0")
    assert image_id == (
        f"/CommunityGalleries/{UBUNTU_CIG}/images/2204gen2containerd/versions/202512.18.0"
    )
    assert images.parse_cig_image_id(image_id) == (UBUNTU_CIG, "2204gen2containerd", "202512.18.0")
    assert images.parse_cig_image_id("/subscriptions/x/images/y") is None


def _version(name: str, day: int, exclude: bool = False) -> Any:
    props = SimpleNamespace(
        published_date=datetime(2026, 1, day, tzinfo=UTC), exclude_from_latest=exclude
    )
    return SimpleNamespace(name=name, properties=props)


def test_newest_version_by_published_date() -> None:
    # name order and date order disagree: the date decides, as in Karpenter Azure
    versions = [
        _version("202601.09.0", 9),
        _version("202512.30.0", 20),
        _version("202601.25.0", 25, True),
    ]
    assert images.newest_version(versions) == "202512.30.0"
    assert images.newest_version([]) is None


@dataclass
class _Versions:
    published: dict[str, list[Any]]
    calls: int = 0

    def list(self, location: str, gallery: str, definition: str) -> list[Any]:
        self.calls += 1
        return self.published.get(definition, [])


def _resolver(published: dict[str, list[Any]], now: list[float]) -> tuple[ImageResolver, _Versions]:
    ops = _Versions(published)
    compute = SimpleNamespace(community_gallery_image_versions=ops)
    return ImageResolver(compute, "eastus", ttl_seconds=60, clock=lambda: now[0]), ops


def _nodeclass(**spec: Any) -> AKSNodeClass:
    return AKSNodeClass.model_validate({"metadata": {"name": "default"}, "spec": spec})


def test_resolver_resolves_caches_and_skips_unpublished() -> None:
    now = [0.0]
    published = {
        "2204gen2containerd": [_version("202601.01.0", 1), _version("202601.02.0", 2)],
        "2204gen2arm64containerd": [_version("202601.03.0", 3)],
    }
    resolver, ops = _resolver(published, now)
    got = resolver.resolve(_nodeclass(imageFamily="Ubuntu2204"), "1.33.0")
    assert [(i.definition.definition, i.version) for i in got] == [
        ("2204gen2containerd", "202601.02.0"),
        ("2204gen2arm64containerd", "202601.03.0"),
    ]
    assert ops.calls == 3
    resolver.resolve(_nodeclass(imageFamily="Ubuntu2204"), "1.33.0")
    assert ops.calls == 3  # cached
    published["2204gen2containerd"].append(_version("202601.05.0", 5))
    now[0] = 61.0
    again = resolver.resolve(_nodeclass(imageFamily="Ubuntu2204"), "1.33.0")
    assert ops.calls == 6
    assert again[0].id.endswith("/2204gen2containerd/versions/202601.05.0")


def test_image_for_arch_and_generation() -> None:
    now = [0.0]
    published = {
        "2404gen2containerd": [_version("1.0.0", 1)],
        "2404containerd": [_version("1.0.1", 2)],
        "2404gen2arm64containerd": [_version("1.0.2", 3)],
    }
    resolver, _ = _resolver(published, now)
    nc = _nodeclass(imageFamily="Ubuntu2404")

    def pick(arch: str, gens: list[str]) -> NodeImage:
        return resolver.image_for(nc, "1.34.0", arch, gens)

    assert pick("amd64", ["V1", "V2"]).definition.definition == "2404gen2containerd"
    assert pick("amd64", ["V1"]).definition.definition == "2404containerd"
    assert pick("arm64", ["V2"]).version == "1.0.2"
    with pytest.raises(NoImages, match="arm64 Hyper-V generation V1"):
        pick("arm64", ["V1"])


def test_cached_version_reads_once_per_ttl_and_keeps_the_last_on_failure() -> None:
    now, answers, calls = [0.0], ["1.33.2"], [0]

    def read() -> str:
        calls[0] += 1
        if not answers:
            raise ConnectionError("API server away")
        return answers[0]

    version = CachedVersion(read, ttl_seconds=10, clock=lambda: now[0])
    assert version() == "1.33.2" and version() == "1.33.2"
    assert calls[0] == 1
    answers[0] = "1.34.0"
    now[0] = 11.0
    assert version() == "1.34.0"
    answers.clear()
    now[0] = 22.0
    assert version() == "1.34.0"
