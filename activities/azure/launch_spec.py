"""What a claim's VM boots and is told: its node image and its custom data, in one place.

The image comes from the node class resolver (``activities.azure.nodeclasses``: AKS
community gallery images for the class's family, the cluster's Kubernetes version, the
size's architecture and Hyper-V generation); the custom data is the self-hosted bootstrap
(``activities.azure.bootstrap``) that joins the node to the cluster. A class the resolver
cannot serve (no version, no image for the size) is not ready: the launch retries until it
is, as on EC2.
"""

from __future__ import annotations

from dataclasses import dataclass

from activities.azure.bootstrap import BootstrapParams, ClusterJoin, render_custom_data
from activities.azure.images import NoImages
from activities.azure.nodeclasses import AKSNodeClassResolver
from activities.azure.skus import Sku
from activities.cloud.errors import NodeClassNotReady
from activities.cloud.launch import LaunchRequest
from models.aksnodeclass import AKSNodeClass
from models.instancetype import InstanceType


@dataclass(frozen=True)
class LaunchSpec:
    image_id: str  # a community gallery image version id
    custom_data: str  # base64, as osProfile.customData takes it

    def image_reference(self) -> dict[str, str]:
        return {"communityGalleryImageId": self.image_id}


def launch_spec(
    resolver: AKSNodeClassResolver,
    cluster: ClusterJoin,
    nodeclass: AKSNodeClass,
    request: LaunchRequest,
    it: InstanceType,
    sku: Sku | None,
    *,
    subnet_id: str,
    max_pods: int,
    labels: dict[str, str],
) -> LaunchSpec:
    """The image and custom data of the claim's VM of type ``it``."""
    try:
        image = resolver.image_for(nodeclass, it)
    except (NoImages, ValueError) as exc:
        raise NodeClassNotReady(f"AKSNodeClass {nodeclass.name}: {exc}") from exc
    params = BootstrapParams.for_launch(
        cluster,
        nodeclass,
        request,
        arch=image.definition.arch,
        max_pods=max_pods,
        subnet_id=subnet_id,
        node_image_version=image.version,
        labels=labels,
        sku=sku,
    )
    return LaunchSpec(image.id, render_custom_data(params))
