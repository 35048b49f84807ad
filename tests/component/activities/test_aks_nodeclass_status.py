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
from activities.disruption import cluster_state
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


def test_a_round_on_azure_reads_aksnodeclasses(admin: Kube, kube: Kube) -> None:
    """The disruption round lists the provider's node class kind and hands its documents to
    the engine as that kind (its drift checks key on it)."""
    name = f"aks-{uuid.uuid4().hex[:6]}"
    custom_objects.create(
        admin, AKSNODECLASS, {"metadata": {"name": name}, "spec": {"imageFamily": "AzureLinux"}}
    )
    state = cluster_state.read_state(kube, AKSNODECLASS)
    assert name in state.nodeclasses
    docs = {
        d.body["metadata"]["name"]: d
        for d in cluster_state.nodeclass_documents(state.nodeclasses, AKSNODECLASS)
    }
    assert docs[name].body["kind"] == "AKSNodeClass"
    assert docs[name].body["apiVersion"] == "karpenter.azure.com/v1beta1"
    assert name not in cluster_state.read_state(kube).nodeclasses  # EC2NodeClasses by default
    custom_objects.delete(admin, AKSNODECLASS, name)
