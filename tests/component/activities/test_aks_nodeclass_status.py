"""AKSNodeClass status written to the real control plane: the CRD keeps ``images`` and
``kubernetesVersion``, and Ready follows Karpenter Azure's conditions."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

from activities.azure.images import ImageResolver
from activities.azure.nodeclasses import AKSNodeClassResolver
from activities.azure.pricing import AzurePricing
from activities.azure.provider import AzureProvider
from activities.kubernetes import custom_objects
from activities.kubernetes.client import Kube
from activities.kubernetes.resources import AKSNODECLASS
from activities.status import nodeclasses as nodeclass_status
from tests.support.kube_objects import condition

SUBNET = (
    "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v/subnets/nodes"
)


class _Versions:
    """Community gallery versions: ``published`` per definition."""

    def __init__(self) -> None:
        self.published: dict[str, str] = {}

    def list(self, location: str, gallery: str, definition: str) -> list[Any]:
        name = self.published.get(definition, "202512.18.0")
        props = SimpleNamespace(
            published_date=datetime(2026, 1, 1, tzinfo=UTC), exclude_from_latest=False
        )
        return [SimpleNamespace(name=name, properties=props)]


def _provider(version: list[str], versions: _Versions) -> AzureProvider:
    compute = SimpleNamespace(community_gallery_image_versions=versions)
    resolver = AKSNodeClassResolver(
        ImageResolver(compute, "eastus", ttl_seconds=0),
        lambda: version[0],
        cluster_subnet_id=SUBNET,
    )
    return AzureProvider("eastus", compute, AzurePricing("eastus"), nodeclasses=resolver)


def test_status_is_published_and_follows_upgrades(admin: Kube, kube: Kube) -> None:
    name = f"aks-{uuid.uuid4().hex[:6]}"
    custom_objects.create(
        admin, AKSNODECLASS, {"metadata": {"name": name}, "spec": {"imageFamily": "Ubuntu"}}
    )
    version, versions = ["1.33.2"], _Versions()
    provider = _provider(version, versions)

    assert nodeclass_status.report(kube, provider, name) == []
    body = custom_objects.get(admin, AKSNODECLASS, name)
    assert condition(body, "Ready")["status"] == "True"  # type: ignore[index]
    assert body["status"]["kubernetesVersion"] == "1.33.2"
    ids = [i["id"] for i in body["status"]["images"]]
    assert ids[0].endswith("/images/2204gen2containerd/versions/202512.18.0")
    assert body["status"]["images"][0]["requirements"][0]["key"] == "kubernetes.io/arch"

    # a control-plane upgrade to 1.34 moves Ubuntu to 24.04 and a new version is published
    version[0] = "1.34.0"
    versions.published["2404gen2containerd"] = "202601.09.0"
    nodeclass_status.report(kube, provider, name)
    body = custom_objects.get(admin, AKSNODECLASS, name)
    assert body["status"]["kubernetesVersion"] == "1.34.0"
    assert body["status"]["images"][0]["id"].endswith(
        "/images/2404gen2containerd/versions/202601.09.0"
    )

    # no version known: not Ready, saying why
    version[0] = ""
    turned = nodeclass_status.report(kube, provider, name)
    assert {c.type for c in turned} >= {"KubernetesVersionReady", "ImagesReady"}
    body = custom_objects.get(admin, AKSNODECLASS, name)
    assert condition(body, "Ready")["status"] == "False"  # type: ignore[index]
    custom_objects.delete(admin, AKSNODECLASS, name)
