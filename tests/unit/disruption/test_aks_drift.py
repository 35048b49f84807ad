"""Drift from the AKSNodeClass (the Azure provider's reasons): a changed spec, a newer node
image, a Kubernetes upgrade and another subnet each drift a node launched before; nothing
else does (tags, a re-ordered list, defaults written out, facts not ready)."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from models import labels as L
from models.aksnodeclass import AKSNodeClass
from models.aksnodeclass_hash import HASH_ANNOTATION, HASH_VERSION_ANNOTATION, hash_annotations
from models.catalog import load_catalog
from scheduling.disruption.prepare import prepare_round
from scheduling.inputs import Document
from tests.support.catalogs import catalog
from tests.support.disruption import NOW, claim_for, managed, pool

GALLERY = "/CommunityGalleries/AKSUbuntu-38d80f77-467a-481f-a8d4-09b6d4220bd2/images"
IMAGE_OLD = f"{GALLERY}/2204gen2containerd/versions/202512.18.0"
IMAGE_NEW = f"{GALLERY}/2204gen2containerd/versions/202601.09.0"
ARM_IMAGE = f"{GALLERY}/2204gen2arm64containerd/versions/202512.18.0"
SUBNET_A = (
    "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v/subnets/a"
)
SUBNET_B = SUBNET_A[:-1] + "b"
AKS_REF = {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "x"}


def aks_pool() -> dict[str, Any]:
    body = pool()
    body["spec"]["template"]["spec"]["nodeClassRef"] = dict(AKS_REF)
    return body


def aks_nodeclass(
    *,
    images: Sequence[str] | None = (IMAGE_OLD, ARM_IMAGE),
    version: str | None = "1.33.2",
    images_ready: bool = True,
    version_ready: bool = True,
    **spec: Any,
) -> dict[str, Any]:
    """An AKSNodeClass as the status controller leaves it."""
    status: dict[str, Any] = {
        "conditions": [
            {"type": "ImagesReady", "status": str(images_ready)},
            {"type": "KubernetesVersionReady", "status": str(version_ready)},
        ]
    }
    if images is not None:
        status["images"] = [{"id": i, "requirements": []} for i in images]
    if version is not None:
        status["kubernetesVersion"] = version
    return {
        "apiVersion": "karpenter.azure.com/v1beta1",
        "kind": "AKSNodeClass",
        "metadata": {"name": "x"},
        "spec": {"imageFamily": "Ubuntu2204", "vnetSubnetID": SUBNET_A, **spec},
        "status": status,
    }


def launched_from(
    nc: Mapping[str, Any],
    *,
    image: str = IMAGE_OLD,
    kubelet: str | None = "v1.33.2",
    subnet: str = SUBNET_A,
    stamp: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """A node and its claim as a launch from ``nc`` left them: the class's hash, the image
    booted, the subnet its NIC went into, the kubelet version it registered with."""
    annotations = dict(
        hash_annotations(AKSNodeClass.model_validate(nc)) if stamp is None else stamp
    )
    annotations[L.SUBNET_ID_ANNOTATION] = subnet
    n = managed("a")
    if kubelet is not None:
        n["status"]["nodeInfo"] = {"kubeletVersion": kubelet}
    c = claim_for(n, annotations=annotations)
    c["spec"]["nodeClassRef"] = dict(AKS_REF)
    c["status"]["imageID"] = image
    return [n, c]


def drift(*docs: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> str | None:
    flat: list[Mapping[str, Any]] = []
    for d in docs:
        flat.extend(d if isinstance(d, list) else [d])  # type: ignore[list-item]
    inputs = prepare_round(
        [Document(copy.deepcopy(dict(d)), f"doc {n}") for n, d in enumerate(flat)],
        load_catalog(catalog()),
        NOW,
    )
    (candidate,) = inputs.candidates
    return candidate.drifted


def test_a_node_launched_from_the_class_as_it_is_has_not_drifted() -> None:
    nc = aks_nodeclass()
    assert drift(aks_pool(), nc, launched_from(nc)) is None


def test_a_spec_change_drifts_the_node() -> None:
    before = aks_nodeclass()
    after = aks_nodeclass(osDiskSizeGB=256)
    got = drift(aks_pool(), after, launched_from(before))
    assert got == "NodeClassDrift: AKSNodeClass x's spec changed since launch"
    kubelet = aks_nodeclass(kubelet={"imageGCHighThresholdPercent": 70})
    assert drift(aks_pool(), kubelet, launched_from(before)) is not None


def test_tags_defaults_and_list_order_do_not_drift() -> None:
    before = aks_nodeclass(security={"encryptionAtHost": True})
    tagged = aks_nodeclass(security={"encryptionAtHost": True}, tags={"team": "payments"})
    assert drift(aks_pool(), tagged, launched_from(before)) is None
    # the API server's defaults written out hash as the spec without them
    defaulted = aks_nodeclass(security={"encryptionAtHost": True}, osDiskSizeGB=128)
    assert drift(aks_pool(), defaulted, launched_from(before)) is None
    # the images' order is no drift: membership decides, as in Karpenter Azure
    reordered = aks_nodeclass(images=[ARM_IMAGE, IMAGE_OLD], security={"encryptionAtHost": True})
    assert drift(aks_pool(), reordered, launched_from(before)) is None


def test_a_newer_node_image_drifts_the_node() -> None:
    before = aks_nodeclass()
    published = aks_nodeclass(images=[IMAGE_NEW, ARM_IMAGE])
    got = drift(aks_pool(), published, launched_from(before))
    assert got == f"ImageDrift: {IMAGE_OLD} is none of AKSNodeClass x's images now"
    assert drift(aks_pool(), published, launched_from(before, image=IMAGE_NEW)) is None


def test_a_kubernetes_upgrade_drifts_the_node() -> None:
    before = aks_nodeclass()
    upgraded = aks_nodeclass(version="1.34.0")
    got = drift(aks_pool(), upgraded, launched_from(before))
    assert got == "K8sVersionDrift: kubelet v1.33.2, AKSNodeClass x is at Kubernetes 1.34.0"
    # a version given as major.minor is compared at that granularity
    assert drift(aks_pool(), aks_nodeclass(version="1.33"), launched_from(before)) is None
    assert drift(aks_pool(), aks_nodeclass(version="1.34"), launched_from(before)) is not None


def test_another_subnet_drifts_a_node_whose_hash_cannot_be_compared() -> None:
    nc = aks_nodeclass()
    karpenter = {HASH_ANNOTATION: "1234567890", HASH_VERSION_ANNOTATION: "v3"}
    assert drift(aks_pool(), nc, launched_from(nc, stamp=karpenter)) is None
    got = drift(aks_pool(), nc, launched_from(nc, stamp=karpenter, subnet=SUBNET_B))
    assert got == f"SubnetDrift: {SUBNET_B} is not AKSNodeClass x's subnet ({SUBNET_A})"
    # with Joinery's hash, a changed vnetSubnetID is a spec change first
    moved = aks_nodeclass(vnetSubnetID=SUBNET_B)
    assert (drift(aks_pool(), moved, launched_from(nc)) or "").startswith("NodeClassDrift")


def test_no_verdict_where_a_fact_is_missing_or_not_ready() -> None:
    before = aks_nodeclass()
    upgraded_not_ready = aks_nodeclass(version="1.34.0", version_ready=False)
    assert drift(aks_pool(), upgraded_not_ready, launched_from(before)) is None
    images_not_ready = aks_nodeclass(images=[IMAGE_NEW], images_ready=False)
    assert drift(aks_pool(), images_not_ready, launched_from(before)) is None
    no_images = aks_nodeclass(images=[])
    assert drift(aks_pool(), no_images, launched_from(before)) is None
    upgraded = aks_nodeclass(version="1.34.0")
    assert drift(aks_pool(), upgraded, launched_from(before, kubelet=None)) is None
    # a hash Karpenter wrote is never compared
    changed = aks_nodeclass(osDiskSizeGB=256)
    karpenter = {HASH_ANNOTATION: "1234567890", HASH_VERSION_ANNOTATION: "v3"}
    assert drift(aks_pool(), changed, launched_from(before, stamp=karpenter)) is None
    # no AKSNodeClass among the inputs: no provider verdict at all
    assert drift(aks_pool(), launched_from(before, image=IMAGE_NEW)) is None
