"""Node images resolved through the compute SDK from the emulated community galleries."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from azure.core.exceptions import ResourceNotFoundError
from azure.mgmt.compute import ComputeManagementClient

from activities.azure.images import ImageResolver
from models.aksnodeclass import AKSNodeClass
from sandbox.azure.server import AzureServer

UBUNTU = "AKSUbuntu-38d80f77-467a-481f-a8d4-09b6d4220bd2"
AZL = "AKSAzureLinux-f7c7cda5-1c9a-4bdc-a222-9614c968580b"


@pytest.fixture
def galleries(azure: AzureServer) -> Iterator[AzureServer]:
    yield azure
    azure.emulator.galleries.reset()


def _nodeclass(family: str) -> AKSNodeClass:
    return AKSNodeClass.model_validate(
        {"metadata": {"name": "default"}, "spec": {"imageFamily": family}}
    )


def test_resolves_seeded_versions(galleries: AzureServer, compute: ComputeManagementClient) -> None:
    resolver = ImageResolver(compute, "eastus")
    got = [i.id for i in resolver.resolve(_nodeclass("AzureLinux"), "1.33.0")]
    assert got == [
        f"/CommunityGalleries/{AZL}/images/V3gen2/versions/202512.18.0",
        f"/CommunityGalleries/{AZL}/images/V3/versions/202512.18.0",
        f"/CommunityGalleries/{AZL}/images/V3gen2arm64/versions/202512.18.0",
    ]


def test_newest_published_wins_after_cache(
    galleries: AzureServer, compute: ComputeManagementClient
) -> None:
    now = [0.0]
    resolver = ImageResolver(compute, "westcentralus", ttl_seconds=100, clock=lambda: now[0])
    nc = _nodeclass("Ubuntu2204")
    first = resolver.image_for(nc, "1.33.0", "amd64", ["V1", "V2"])
    assert first.version == "202512.18.0"
    galleries.emulator.galleries.publish(UBUNTU, "2204gen2containerd", "202601.20.0")
    # an older name published later still wins: publishedDate decides
    galleries.emulator.galleries.publish(
        UBUNTU, "2204containerd", "202511.01.0", datetime(2026, 2, 1, tzinfo=UTC)
    )
    assert resolver.image_for(nc, "1.33.0", "amd64", ["V2"]).version == "202512.18.0"  # cached
    now[0] = 101.0
    assert resolver.image_for(nc, "1.33.0", "amd64", ["V2"]).id == (
        f"/CommunityGalleries/{UBUNTU}/images/2204gen2containerd/versions/202601.20.0"
    )
    assert resolver.image_for(nc, "1.33.0", "amd64", ["V1"]).version == "202511.01.0"


def test_single_version_and_missing_definition(
    galleries: AzureServer, compute: ComputeManagementClient
) -> None:
    ops = compute.community_gallery_image_versions
    got = ops.get("eastus", UBUNTU, "2404gen2containerd", "202512.18.0")
    assert got.name == "202512.18.0"
    assert got.properties is not None and got.properties.published_date is not None
    with pytest.raises(ResourceNotFoundError):
        list(ops.list("eastus", UBUNTU, "no-such-definition"))


def test_exists_names_only_published_versions(galleries: AzureServer) -> None:
    g = galleries.emulator.galleries
    seeded = f"/CommunityGalleries/{UBUNTU}/images/2404gen2containerd/versions/202512.18.0"
    assert g.exists(seeded)
    assert not g.exists(seeded.replace("202512.18.0", "202601.01.0"))
    g.publish(UBUNTU, "2404gen2containerd", "202601.01.0")
    assert g.exists(seeded.replace("202512.18.0", "202601.01.0"))
    g.withdraw(UBUNTU, "2404gen2containerd", "202512.18.0")
    assert not g.exists(seeded)
    assert not g.exists("/subscriptions/s/resourceGroups/r/providers/x")
