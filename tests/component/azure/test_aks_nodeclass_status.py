"""AKSNodeClass status from the emulator through the SDKs: images, the Kubernetes version
and the subnet, each condition as Karpenter Azure names it, and what the launch reads."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from azure.mgmt.compute import ComputeManagementClient

from activities.azure.clients import network_client
from activities.azure.images import ImageResolver, NoImages
from activities.azure.nodeclasses import AKSNodeClassResolver
from activities.azure.pricing import AzurePricing
from activities.azure.provider import AzureProvider
from models.aksnodeclass import AKSNodeClass
from models.instancetype import InstanceType
from models.requirements import IN, Requirement, Requirements
from sandbox.azure.credential import FakeCredential
from sandbox.azure.server import AzureServer
from tests.component.azure.conftest import SUBSCRIPTION

UBUNTU = "/CommunityGalleries/AKSUbuntu-38d80f77-467a-481f-a8d4-09b6d4220bd2/images"
SUBNET = (
    f"/subscriptions/{SUBSCRIPTION}/resourceGroups/MC_rg_prod_eastus/providers"
    "/Microsoft.Network/virtualNetworks/aks-vnet/subnets/aks-subnet"
)
OTHER = SUBNET.replace("aks-subnet", "gone")


# The cluster's Kubernetes version as the provider's resolver reads it (a test changes it).
VERSION = ["1.33.2"]


@pytest.fixture
def provider(azure: AzureServer, compute: ComputeManagementClient) -> Iterator[AzureProvider]:
    azure.emulator.arm.add_subnet(SUBNET)
    network = network_client(
        SUBSCRIPTION,
        endpoint=azure.endpoint,
        credential=FakeCredential(),
        ca_file=azure.ca_file,
        retry_total=0,
    )
    VERSION[:] = ["1.33.2"]
    resolver = AKSNodeClassResolver(
        ImageResolver(compute, "eastus"),
        lambda: VERSION[0],
        network=network,
        cluster_subnet_id=SUBNET,
    )
    p = AzureProvider("eastus", compute, AzurePricing("eastus"), nodeclasses=resolver)
    yield p
    azure.emulator.galleries.reset()


def _nc(**spec: Any) -> AKSNodeClass:
    return AKSNodeClass.model_validate({"metadata": {"name": "default"}, "spec": spec})


def _conditions(p: AzureProvider, nc: AKSNodeClass) -> dict[str, tuple[str, str]]:
    return {c.type: (c.status, c.reason) for c in p.nodeclass_status(nc).conditions}


def test_ready_class_publishes_images_and_version(provider: AzureProvider) -> None:
    status = provider.nodeclass_status(_nc(imageFamily="Ubuntu"))
    got = {c.type: c.status for c in status.conditions}
    assert got == {
        "KubernetesVersionReady": "True",
        "ImagesReady": "True",
        "SubnetsReady": "True",
        "LocalDNSReady": "True",
        "ValidationSucceeded": "True",
    }
    assert status.fields["kubernetesVersion"] == "1.33.2"
    # Ubuntu before Kubernetes 1.34 boots 22.04: gen2, gen1, then arm64
    assert status.fields["images"] == [
        {
            "id": f"{UBUNTU}/2204gen2containerd/versions/202512.18.0",
            "requirements": [
                {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
                {
                    "key": "karpenter.azure.com/sku-hyperv-generation",
                    "operator": "In",
                    "values": ["2"],
                },
            ],
        },
        {
            "id": f"{UBUNTU}/2204containerd/versions/202512.18.0",
            "requirements": [
                {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
                {
                    "key": "karpenter.azure.com/sku-hyperv-generation",
                    "operator": "In",
                    "values": ["1"],
                },
            ],
        },
        {
            "id": f"{UBUNTU}/2204gen2arm64containerd/versions/202512.18.0",
            "requirements": [
                {"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]},
                {
                    "key": "karpenter.azure.com/sku-hyperv-generation",
                    "operator": "In",
                    "values": ["2"],
                },
            ],
        },
    ]
    assert provider.nodeclass_not_ready(_nc()) is None


def test_an_upgrade_moves_ubuntu_to_2404(provider: AzureProvider) -> None:
    VERSION[0] = "1.34.0"
    status = provider.nodeclass_status(_nc(imageFamily="Ubuntu"))
    assert status.fields["kubernetesVersion"] == "1.34.0"
    assert status.fields["images"][0]["id"] == f"{UBUNTU}/2404gen2containerd/versions/202512.18.0"


def test_unknown_version_makes_images_and_version_not_ready(provider: AzureProvider) -> None:
    VERSION[0] = ""
    got = _conditions(provider, _nc())
    assert got["KubernetesVersionReady"] == ("False", "KubernetesVersionUnknown")
    assert got["ImagesReady"][0] == "False"
    assert "Kubernetes version is not known" in (provider.nodeclass_not_ready(_nc()) or "")


def test_subnet_conditions(provider: AzureProvider) -> None:
    assert _conditions(provider, _nc(vnetSubnetID=OTHER))["SubnetsReady"] == (
        "False",
        "SubnetNotFound",
    )
    resolver = provider.nodeclass_resolver()
    resolver.cluster_subnet_id = ""
    assert _conditions(provider, _nc())["SubnetsReady"] == ("False", "SubnetIDInvalid")
    assert resolver.subnet_id(_nc(vnetSubnetID=SUBNET)) == SUBNET


def test_fips_and_unpublished_images(provider: AzureProvider, azure: AzureServer) -> None:
    assert _conditions(provider, _nc(fipsMode="FIPS"))["ImagesReady"] == (
        "False",
        "SIGRequiredForFIPS",
    )
    galleries = azure.emulator.galleries
    for definition in ("V3gen2", "V3", "V3gen2arm64"):
        galleries.withdraw("AKSAzureLinux-f7c7cda5-1c9a-4bdc-a222-9614c968580b", definition)
    got = _conditions(provider, _nc(imageFamily="AzureLinux"))
    # every definition is gone (404 from the gallery): the listing fails
    assert got["ImagesReady"][0] == "False"


def test_gallery_refusal_is_images_unknown_error(
    provider: AzureProvider, azure: AzureServer
) -> None:
    azure.emulator.faults.fail(
        f"/subscriptions/{SUBSCRIPTION}/providers/Microsoft.Compute/locations/eastus/"
        "communityGalleries",
        403,
        "AuthorizationFailed",
        "The client does not have authorization to perform this action.",
    )
    got = _conditions(provider, _nc(imageFamily="Ubuntu2404"))
    assert got["ImagesReady"] == ("False", "ImagesUnknownError")


def _instance_type(name: str, arch: str, generations: list[str]) -> InstanceType:
    reqs = Requirements(
        [
            Requirement.create("kubernetes.io/arch", IN, [arch]),
            Requirement.create("karpenter.azure.com/sku-hyperv-generation", IN, generations),
        ]
    )
    return InstanceType(name=name, capacity={}, overhead={}, requirements=reqs, offerings=())


def test_launch_image_per_instance_type(provider: AzureProvider) -> None:
    resolver = provider.nodeclass_resolver()
    nc = _nc(imageFamily="Ubuntu2404")
    both = resolver.image_for(nc, _instance_type("Standard_D4s_v5", "amd64", ["1", "2"]))
    assert both.id == f"{UBUNTU}/2404gen2containerd/versions/202512.18.0"
    gen1 = resolver.image_for(nc, _instance_type("Standard_A2_v2", "amd64", ["1"]))
    assert gen1.definition.definition == "2404containerd"
    arm = resolver.image_for(nc, _instance_type("Standard_D4ps_v5", "arm64", ["2"]))
    assert arm.definition.definition == "2404gen2arm64containerd"
    with pytest.raises(NoImages, match="Standard_X"):
        resolver.image_for(nc, _instance_type("Standard_X", "arm64", ["1"]))
