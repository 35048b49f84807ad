"""Drift facts from the AKSNodeClass: the Azure provider's reasons a claim no longer matches it.

Karpenter's Azure provider marks a NodeClaim Drifted when, in this order:

- ``NodeClassDrift``: the class's spec changed since launch (``models.aksnodeclass_hash``;
  compared only when the claim's hash version is Joinery's, so a hash Karpenter wrote is
  never read as drift);
- ``K8sVersionDrift``: the node's kubelet (``status.nodeInfo.kubeletVersion``) is not the
  class's ``status.kubernetesVersion`` (the cluster's version, published with
  ``KubernetesVersionReady``): a control-plane upgrade rolls every node. A status that gives
  only ``major.minor`` is compared at that granularity;
- ``ImageDrift``: the claim's ``status.imageID`` is none of the class's ``status.images``:
  a newer node image published to the gallery (or another image family) rolls every node.
  Karpenter Azure checks membership, not the image the node's size maps to;

and Joinery adds, as the EC2 provider has it:

- ``SubnetDrift``: the subnet the claim's NIC went into (``joinery.dev/subnet-id``, recorded
  at launch) is not the class's ``spec.vnetSubnetID``. A changed ``vnetSubnetID`` also
  changes the hash, so this is what judges a claim whose hash cannot be compared.

No verdict where a fact is missing, as Karpenter answers: no ``imageID`` on the claim, no
images or version in the status (or their condition not True), no kubelet version on the
node, no subnet recorded or none in the spec.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from models import labels as L
from models.aksnodeclass import IMAGES_READY, KUBERNETES_VERSION_READY, AKSNodeClass
from models.aksnodeclass_hash import (
    HASH_ANNOTATION,
    HASH_VERSION,
    HASH_VERSION_ANNOTATION,
    nodeclass_hash,
)
from scheduling.inputs import Document, InputError

KIND = "AKSNodeClass"


@dataclass(frozen=True)
class AKSNodeClassFacts:
    """What drift needs of one AKSNodeClass: its resolved status and its spec's hash."""

    name: str
    image_ids: frozenset[str]  # status.images ids (empty when not ready)
    kubernetes_version: str  # status.kubernetesVersion ("" when not ready)
    subnet_id: str  # spec.vnetSubnetID ("" when unset)
    spec_hash: str | None  # None when the spec is not a valid AKSNodeClass spec


def _condition_true(status: Mapping[str, Any], kind: str) -> bool:
    for c in status.get("conditions") or []:
        if isinstance(c, Mapping) and c.get("type") == kind:
            return str(c.get("status")) == "True"
    return False


def read_aks_nodeclass(d: Document) -> AKSNodeClassFacts:
    """The facts of an AKSNodeClass document. A malformed status raises ``InputError``
    naming the document and field; a spec that does not validate only loses the hash."""
    meta = d.body.get("metadata") or {}
    name = str(meta.get("name") or "") if isinstance(meta, Mapping) else ""
    status = d.body.get("status") or {}
    if not isinstance(status, Mapping):
        raise InputError(f"{d.label()}: status: expected a mapping")
    raw_images = status.get("images") or []
    if not isinstance(raw_images, list):
        raise InputError(f"{d.label()}: status.images: expected a list")
    for i, entry in enumerate(raw_images):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("id"), str):
            raise InputError(f"{d.label()}: status.images[{i}].id: expected an id")
    version = status.get("kubernetesVersion")
    if version is not None and not isinstance(version, str):
        raise InputError(f"{d.label()}: status.kubernetesVersion: expected a string")
    spec = d.body.get("spec") or {}
    subnet = spec.get("vnetSubnetID") if isinstance(spec, Mapping) else None
    try:
        spec_hash: str | None = nodeclass_hash(AKSNodeClass.model_validate(d.body))
    except ValidationError:
        spec_hash = None
    images_ready = _condition_true(status, IMAGES_READY)
    version_ready = _condition_true(status, KUBERNETES_VERSION_READY)
    return AKSNodeClassFacts(
        name=name,
        image_ids=frozenset(str(e["id"]) for e in raw_images) if images_ready else frozenset(),
        kubernetes_version=(version or "").removeprefix("v") if version_ready else "",
        subnet_id=str(subnet or ""),
        spec_hash=spec_hash,
    )


def static_drift(annotations: Mapping[str, str], nc: AKSNodeClassFacts) -> str | None:
    stamped = annotations.get(HASH_ANNOTATION)
    if (
        stamped
        and nc.spec_hash is not None
        and annotations.get(HASH_VERSION_ANNOTATION) == HASH_VERSION
        and stamped != nc.spec_hash
    ):
        return f"NodeClassDrift: AKSNodeClass {nc.name}'s spec changed since launch"
    return None


def same_version(kubelet_version: str, wanted: str) -> bool:
    """``1.33.2`` against ``1.33.2``, or against ``1.33`` when the class gives only that."""
    have = kubelet_version.removeprefix("v").split("+", 1)[0].split("-", 1)[0]
    want = wanted.removeprefix("v")
    if want.count(".") == 1:
        return have.split(".")[:2] == want.split(".")
    return have == want


def kubernetes_version_drift(kubelet_version: str, nc: AKSNodeClassFacts) -> str | None:
    if not kubelet_version or not nc.kubernetes_version:
        return None
    if same_version(kubelet_version, nc.kubernetes_version):
        return None
    return (
        f"K8sVersionDrift: kubelet {kubelet_version}, AKSNodeClass {nc.name} is at "
        f"Kubernetes {nc.kubernetes_version}"
    )


def image_drift(image_id: str, nc: AKSNodeClassFacts) -> str | None:
    if not image_id or not nc.image_ids or image_id in nc.image_ids:
        return None
    return f"ImageDrift: {image_id} is none of AKSNodeClass {nc.name}'s images now"


def subnet_drift(annotations: Mapping[str, str], nc: AKSNodeClassFacts) -> str | None:
    subnet = annotations.get(L.SUBNET_ID_ANNOTATION, "")
    if not subnet or not nc.subnet_id or subnet.lower() == nc.subnet_id.lower():
        return None
    return f"SubnetDrift: {subnet} is not AKSNodeClass {nc.name}'s subnet ({nc.subnet_id})"


def aks_drift_reason(
    annotations: Mapping[str, str],
    image_id: str,
    kubelet_version: str,
    nc: AKSNodeClassFacts,
) -> str | None:
    """Why a claim (its annotations and ``status.imageID``, its node's kubelet version) has
    drifted from its AKSNodeClass, or None; checked in Karpenter Azure's order."""
    return (
        static_drift(annotations, nc)
        or kubernetes_version_drift(kubelet_version, nc)
        or image_drift(image_id, nc)
        or subnet_drift(annotations, nc)
    )
