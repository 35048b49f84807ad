"""The Azure ``CloudProvider``: the catalog (Resource SKUs) and its prices, node classes,
and the VMs (``activities.azure.machines``: launch, get, list, delete, garbage collection).

A provider made without a node resource group (plan-type use: ``joinery plan``, ``joinery
catalog``) has no VMs; its VM calls raise ``NotImplementedOnProvider``. The interruption
source (spot eviction events) is not here yet.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from activities.azure.arm_errors import azure_errors
from activities.azure.catalog import build_catalog, fetch_skus
from activities.azure.machines import Machines, without_unavailable
from activities.azure.nodeclasses import AKSNodeClassResolver, resolver_for
from activities.azure.params import CatalogParams
from activities.azure.pricing import AzurePricing, url_fetcher
from activities.azure.skus import Sku
from activities.cloud.errors import NotImplementedOnProvider
from activities.cloud.health import Unhealthy
from activities.cloud.instances import Instance
from activities.cloud.interruption import InterruptionEvent, InterruptionSource
from activities.cloud.kinds import AKS_NODECLASS, NodeClassKind
from activities.cloud.launch import LaunchRequest, LaunchResult
from activities.cloud.observe import timed
from activities.cloud.options import AZURE, ProviderOptions
from activities.cloud.provider import CallObserver, NodeClassStatus
from activities.kubernetes import conditions as cond
from models.aksnodeclass import AKSNodeClass, unimplemented_fields, validation_condition
from models.instancetype import InstanceType

# Why a provider has no VMs: it was built for plan-type use.
NO_VMS = "no node resource group (AZURE_NODE_RESOURCE_GROUP) configured"
PROVIDER_ID_PREFIX = "azure://"


def provider_id(vm_id: str) -> str:
    """A Node's providerID for a VM: ``azure://`` and its ARM resource id, as AKS writes it."""
    return f"{PROVIDER_ID_PREFIX}{vm_id}"


def vm_id(value: str) -> str:
    """The VM resource id of an Azure provider id, or "" when it is not one."""
    if not value.startswith(PROVIDER_ID_PREFIX + "/"):
        return ""
    rest = value[len(PROVIDER_ID_PREFIX) :]
    return rest if "/virtualmachines/" in rest.lower() else ""


@dataclass
class AzureProvider:
    region: str
    compute: Any  # azure.mgmt.compute.ComputeManagementClient
    pricing: AzurePricing
    observe: CallObserver | None = None
    # The cluster's Kubernetes core API, given by the worker (``share_unavailable_offerings``):
    # spot eviction notices are Node conditions (activities/azure/eviction.py).
    core_api: Any = None
    # Images, Kubernetes version and subnet of node classes (``nodeclass_resolver``).
    nodeclasses: AKSNodeClassResolver | None = None
    # The VMs (None: no node resource group, no VMs: plan-type use only).
    machines: Machines | None = None
    _skus: list[Sku] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @staticmethod
    def from_options(opts: ProviderOptions) -> AzureProvider:
        """The provider ``--provider azure`` builds: ARM (or ``endpoint_url``) for the SKUs,
        the Retail Prices API for prices (the bundled table with an endpoint given)."""
        from activities.azure.clients import compute_client, network_client

        if not opts.subscription_id:
            raise ValueError("--provider azure: no subscription (AZURE_SUBSCRIPTION_ID)")
        endpoint = opts.endpoint_url or None
        ca_file = opts.azure_ca_file or None
        compute = compute_client(opts.subscription_id, endpoint=endpoint, ca_file=ca_file)
        fetch = None if opts.endpoint_url else url_fetcher()
        network = None
        if opts.node_resource_group:
            network = network_client(opts.subscription_id, endpoint=endpoint, ca_file=ca_file)
        provider = AzureProvider(
            opts.region,
            compute,
            AzurePricing(opts.region, fetch=fetch),
            nodeclasses=resolver_for(
                opts, compute, network=network, cluster_subnet_id=opts.azure_subnet_id
            ),
        )
        if network is not None:
            provider.attach_machines(opts, network)
        return provider

    def attach_machines(self, opts: ProviderOptions, network: Any) -> None:
        """Give the provider its VMs in ``opts.node_resource_group`` (``machines``)."""
        self.machines = Machines.build(
            opts,
            self.compute,
            network,
            self.nodeclass_resolver,
            self._raw_instance_types,
            self._region_skus,
        )

    @property
    def name(self) -> str:
        return AZURE

    @property
    def nodeclass_kind(self) -> NodeClassKind:
        return AKS_NODECLASS

    def provider_id(self, zone: str, instance_id: str) -> str:
        return provider_id(instance_id)

    def instance_id(self, provider_id: str) -> str:
        return vm_id(provider_id)

    def zone_of(self, provider_id: str) -> str:
        return ""  # an Azure VM's id names no zone

    def watch_launches(
        self, launch_failed: Callable[..., None], batch: Callable[..., None]
    ) -> None:
        return None  # no launch batches on Azure: one VM per call

    def loaded_instance_types(self) -> list[InstanceType]:
        return []

    # -- catalog and prices ---------------------------------------------------------------
    def _region_skus(self) -> list[Sku]:
        with self._lock:
            if self._skus is None:
                with azure_errors("list resource SKUs"):
                    skus = fetch_skus(self.compute, self.region)
                self.pricing.refresh()
                self._skus = skus
            return self._skus

    def _raw_instance_types(self, nodeclass: AKSNodeClass | None = None) -> list[InstanceType]:
        params = CatalogParams.for_node_class(nodeclass)
        return build_catalog(self._region_skus(), self.region, self.pricing, params)

    def instance_types(self, nodeclass: AKSNodeClass | None = None) -> list[InstanceType]:
        """The catalog, with the offerings Azure refused lately marked unavailable."""

        def listed() -> list[InstanceType]:
            types = self._raw_instance_types(nodeclass)
            if self.machines is None:
                return types
            return without_unavailable(types, self.machines.unavailable)

        return timed(self.observe, "GetInstanceTypes", listed)

    def load_catalog(self) -> None:
        self._region_skus()

    def catalog_snapshot(self) -> object:
        """The SKUs (prices are read afresh: the bundled table, or the API when it answers)."""
        return list(self._region_skus())

    def adopt_catalog_snapshot(self, snapshot: Any) -> None:
        with self._lock:
            self._skus = list(snapshot)

    # -- node classes ---------------------------------------------------------------------
    def nodeclass_resolver(self) -> AKSNodeClassResolver:
        """The node class resolver (images, Kubernetes version, subnet); a provider made
        without one resolves images through its compute client and knows no version."""
        with self._lock:
            if self.nodeclasses is None:
                self.nodeclasses = resolver_for(None, self.compute, region=self.region)
            return self.nodeclasses

    def nodeclass_not_ready(self, nodeclass: AKSNodeClass) -> str | None:
        """A field Joinery does not act on, or no image, version or subnet to launch with
        (resolutions are cached: a gallery is listed once per refresh interval, not per
        planning round)."""
        if unimplemented_fields(nodeclass.spec):
            return validation_condition(nodeclass.spec).message or "not ready"
        return self.nodeclass_resolver().not_ready(nodeclass)

    def nodeclass_status(self, nodeclass: AKSNodeClass) -> NodeClassStatus:
        """Validation, then the resolver's conditions and ``images`` / ``kubernetesVersion``."""
        c = validation_condition(nodeclass.spec, nodeclass.metadata.generation)
        resolved = self.nodeclass_resolver().status(nodeclass)
        validation = cond.Condition(c.type, c.status, c.reason, c.message or "")
        return NodeClassStatus([*resolved.conditions, validation], resolved.fields)

    # -- VMs ----------------------------------------------------------------------------
    def _vms(self, operation: str) -> Machines:
        if self.machines is None:
            raise NotImplementedOnProvider(operation, AZURE, NO_VMS)
        return self.machines

    def launch(self, request: LaunchRequest, nodeclass: AKSNodeClass) -> LaunchResult:
        machines = self._vms("launch")
        return timed(self.observe, "Create", lambda: machines.launcher.launch(request, nodeclass))

    def get(self, instance_id: str) -> Instance:
        vms = self._vms("get").vms
        return timed(self.observe, "Get", lambda: vms.get(instance_id))

    def find_by_nodeclaim(self, nodeclaim: str) -> Instance | None:
        return self._vms("find by NodeClaim").vms.find_by_nodeclaim(nodeclaim)

    def list_owned(self, nodepool: str | None = None) -> Sequence[Instance]:
        vms = self._vms("list").vms
        return timed(self.observe, "List", lambda: vms.list_owned(nodepool))

    def leaked(
        self, known_nodeclaims: Iterable[str], now: datetime | None, grace: timedelta
    ) -> Sequence[Instance]:
        return self._vms("list").vms.leaked(known_nodeclaims, now, grace)

    def delete(self, instance_id: str) -> bool:
        """The VM, then its NIC, then its OS disk; True once all are gone."""
        vms = self._vms("delete").vms
        return timed(self.observe, "Delete", lambda: vms.delete(instance_id))

    def garbage_collect(
        self,
        live_nodeclasses: list[str] | None = None,
        now: datetime | None = None,
        roles: Mapping[str, str] | None = None,
    ) -> dict[str, list[str]]:
        """Orphan NICs (leaked VMs go through ``leaked`` and the orphan-instance sweep)."""
        if self.machines is None:
            return {}
        return self.machines.garbage_collect(now)

    def interruption_source(self) -> InterruptionSource | None:
        """Spot eviction notices, read off the Nodes' ``PreemptionScheduled`` condition."""
        from activities.azure.eviction import PreemptionWatch, deadline_stamper, node_lister

        if self.core_api is None:
            return None
        return PreemptionWatch(
            node_lister(self.core_api), vm_id, stamp_deadline=deadline_stamper(self.core_api)
        )

    def share_unavailable_offerings(self, core_api: Any) -> None:
        """Replicas share what Azure refused through the same ConfigMap as on EC2; the same
        cluster's Nodes carry the spot eviction notices (``interruption_source``)."""
        self.core_api = core_api
        if self.machines is not None:
            from activities.cloud.shared_offerings import ConfigMapRecord

            self.machines.unavailable.share(ConfigMapRecord(core_api))

    def offering_interrupted(self, event: InterruptionEvent, instance_type: str, zone: str) -> bool:
        """A spot eviction keeps the VM's spot offering out for a while, as Karpenter Azure
        does (``eviction.mark_evicted_offering``: evictions only, not advisories)."""
        from activities.azure.eviction import mark_evicted_offering

        if self.machines is None:
            return False
        mark = self.machines.unavailable.mark_unavailable
        return mark_evicted_offering(mark, event, instance_type, zone)

    def unhealthy_instances(self, now: datetime) -> list[Unhealthy]:
        return []  # Azure's scheduled events are not read yet

    def reservation_states(self, ids: Sequence[str]) -> dict[str, str]:
        return {}  # no capacity reservations on Azure yet

    def describe_cluster(self) -> str:
        vms = self._vms("cluster discovery").vms
        return (
            f"AKS cluster {vms.cluster} in {self.region}: VMs in resource group "
            f"{vms.resource_group} of subscription {vms.subscription}"
        )
