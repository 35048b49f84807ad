"""The Azure provider's VM half, assembled: launch, reads, deletion, garbage collection and
the unavailable offerings, built from the settings (``ProviderOptions``) in one place so the
provider only delegates to it."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from activities.azure.bootstrap import ClusterJoin
from activities.azure.launch import Launcher, VMSettings
from activities.azure.nodeclasses import AKSNodeClassResolver
from activities.azure.params import CatalogParams
from activities.azure.skus import Sku
from activities.azure.vms import VirtualMachines
from activities.cloud.errors import NodeClassNotReady
from activities.cloud.options import ProviderOptions
from activities.cloud.unavailable_offerings import UnavailableOfferings
from models import labels as L
from models.aksnodeclass import AKSNodeClass
from models.instancetype import InstanceType

UNAVAILABLE_TTL_SECONDS = 180.0


def without_unavailable(
    types: list[InstanceType], unavailable: UnavailableOfferings
) -> list[InstanceType]:
    """The catalog with the offerings Azure refused lately marked unavailable."""
    if not unavailable.entries():
        return types
    out = []
    for it in types:
        offerings = tuple(
            dataclasses.replace(o, available=False)
            if o.available and unavailable.is_unavailable(o.capacity_type, it.name, o.zone)
            else o
            for o in it.offerings
        )
        out.append(
            dataclasses.replace(it, offerings=offerings) if offerings != it.offerings else it
        )
    return out


def cluster_join(opts: ProviderOptions, location: str) -> Callable[[], ClusterJoin]:
    """The cluster facts each VM's custom data needs, from the settings; a launch without
    the API server or its CA cannot join a node, so it is not ready until they are given."""

    def facts() -> ClusterJoin:
        missing = [
            name
            for name, value in (
                ("CLUSTER_ENDPOINT", opts.cluster_endpoint),
                ("the cluster CA bundle", opts.cluster_ca_bundle),
                ("KUBERNETES_VERSION", opts.kubernetes_version),
            )
            if not value
        ]
        if missing:
            raise NodeClassNotReady(
                f"cannot bootstrap AKS nodes without {', '.join(missing)}", "ClusterUnknown"
            )
        return ClusterJoin(
            cluster_name=opts.cluster,
            api_server=opts.cluster_endpoint,
            ca_bundle=opts.cluster_ca_bundle,
            kubernetes_version=opts.kubernetes_version,
            subscription_id=opts.subscription_id,
            tenant_id=opts.tenant_id,
            node_resource_group=opts.node_resource_group,
            location=location,
            bootstrap_token=opts.kubelet_bootstrap_token,
            kubelet_identity_client_id=opts.kubelet_identity_client_id,
        )

    return facts


@dataclass
class Machines:
    vms: VirtualMachines
    launcher: Launcher
    unavailable: UnavailableOfferings

    @staticmethod
    def build(
        opts: ProviderOptions,
        compute: Any,
        network: Any,
        resolver: Callable[[], AKSNodeClassResolver],
        catalog: Callable[[AKSNodeClass | None], list[InstanceType]],
        skus: Callable[[], list[Sku]],
    ) -> Machines:
        unavailable = UnavailableOfferings(UNAVAILABLE_TTL_SECONDS)
        vms = VirtualMachines(
            compute, network, opts.subscription_id, opts.node_resource_group, opts.cluster
        )
        settings = VMSettings(
            location=opts.region,
            subscription=opts.subscription_id,
            resource_group=opts.node_resource_group,
            cluster=opts.cluster,
            node_identities=opts.node_identities,
            ssh_public_key=opts.ssh_public_key,
        )

        def launch_catalog(nodeclass: AKSNodeClass) -> list[InstanceType]:
            return without_unavailable(catalog(nodeclass), unavailable)

        def by_name() -> dict[str, Sku]:
            return {s.name: s for s in skus()}

        def max_pods(nodeclass: AKSNodeClass) -> int:
            return CatalogParams.for_node_class(nodeclass).max_pods

        launcher = Launcher(
            vms,
            settings,
            unavailable,
            resolver,
            cluster_join(opts, opts.region),
            launch_catalog,
            by_name,
            max_pods,
        )
        return Machines(vms, launcher, unavailable)

    def garbage_collect(self, now: datetime | None = None) -> dict[str, list[str]]:
        """Orphan NICs (the leaked VMs are the orphan-instance sweep's, through ``leaked``)."""
        return {"networkInterfaces": self.vms.orphan_nics(now)}

    def offering_interrupted(self, instance_type: str, zone: str) -> bool:
        """A spot VM evicted: its spot offering is out for a while, as Karpenter Azure does."""
        self.unavailable.mark_unavailable(L.CAPACITY_TYPE_SPOT, instance_type, zone)
        return True
