"""The Azure ``CloudProvider`` so far: the catalog (Resource SKUs) and its prices.

What needs VMs (launch, get, list, delete, the interruption source, the cluster) is issue 32;
until then those calls raise ``NotImplementedOnProvider`` naming it, and the worker refuses
``--provider azure`` at start (``worker.running.app``), so only plan-type use (the catalog,
``joinery plan``) runs on Azure.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, NoReturn

from activities.azure.catalog import build_catalog, fetch_skus
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
from activities.cloud.options import AZURE, ProviderOptions
from activities.cloud.provider import CallObserver, NodeClassStatus
from activities.kubernetes import conditions as cond
from models.aksnodeclass import AKSNodeClass, unimplemented_fields, validation_condition
from models.instancetype import InstanceType

# The issue that brings AKS nodes (launch, terminate, list, spot eviction).
VM_ISSUE = "issue 32"
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
    # Offerings Azure refused or took back, by (capacity type, SKU, zone): None until the
    # launch path keeps them.
    mark_unavailable: Callable[[str, str, str], None] | None = None
    # Images, Kubernetes version and subnet of node classes (``nodeclass_resolver``).
    nodeclasses: AKSNodeClassResolver | None = None
    _skus: list[Sku] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @staticmethod
    def from_options(opts: ProviderOptions) -> AzureProvider:
        """The provider ``--provider azure`` builds: ARM (or ``endpoint_url``) for the SKUs,
        the Retail Prices API for prices (the bundled table with an endpoint given)."""
        from activities.azure.clients import compute_client

        if not opts.subscription_id:
            raise ValueError("--provider azure: no subscription (AZURE_SUBSCRIPTION_ID)")
        compute = compute_client(opts.subscription_id, endpoint=opts.endpoint_url or None)
        fetch = None if opts.endpoint_url else url_fetcher()
        return AzureProvider(
            opts.region,
            compute,
            AzurePricing(opts.region, fetch=fetch),
            nodeclasses=resolver_for(opts, compute),
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
        return None  # no launches on Azure yet (issue 32)

    def loaded_instance_types(self) -> list[InstanceType]:
        return []

    # -- catalog and prices ---------------------------------------------------------------
    def _region_skus(self) -> list[Sku]:
        with self._lock:
            if self._skus is None:
                skus = fetch_skus(self.compute, self.region)
                self.pricing.refresh()
                self._skus = skus
            return self._skus

    def instance_types(self, nodeclass: AKSNodeClass | None = None) -> list[InstanceType]:
        params = CatalogParams.for_node_class(nodeclass)
        return build_catalog(self._region_skus(), self.region, self.pricing, params)

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
        (the resolution is cached, so this costs no call per planning round)."""
        if unimplemented_fields(nodeclass.spec):
            return validation_condition(nodeclass.spec).message or "not ready"
        return self.nodeclass_resolver().not_ready(nodeclass)

    def nodeclass_status(self, nodeclass: AKSNodeClass) -> NodeClassStatus:
        """Validation, then the resolver's conditions and ``images`` / ``kubernetesVersion``."""
        c = validation_condition(nodeclass.spec, nodeclass.metadata.generation)
        resolved = self.nodeclass_resolver().status(nodeclass)
        validation = cond.Condition(c.type, c.status, c.reason, c.message or "")
        return NodeClassStatus([*resolved.conditions, validation], resolved.fields)

    # -- what needs VMs: issue 32 -----------------------------------------------------------
    def _vms(self, operation: str) -> NoReturn:
        raise NotImplementedOnProvider(operation, AZURE, VM_ISSUE)

    def launch(self, request: LaunchRequest, nodeclass: AKSNodeClass) -> LaunchResult:
        self._vms("launch")

    def get(self, instance_id: str) -> Instance:
        self._vms("get")

    def find_by_nodeclaim(self, nodeclaim: str) -> Instance | None:
        self._vms("find by NodeClaim")

    def list_owned(self, nodepool: str | None = None) -> Sequence[Instance]:
        self._vms("list")

    def leaked(
        self, known_nodeclaims: Iterable[str], now: datetime | None, grace: timedelta
    ) -> Sequence[Instance]:
        self._vms("list")

    def delete(self, instance_id: str) -> bool:
        self._vms("delete")

    def garbage_collect(
        self,
        live_nodeclasses: list[str] | None = None,
        now: datetime | None = None,
        roles: Mapping[str, str] | None = None,
    ) -> dict[str, list[str]]:
        self._vms("garbage collection")

    def interruption_source(self) -> InterruptionSource | None:
        """Spot eviction notices, read off the Nodes' ``PreemptionScheduled`` condition."""
        from activities.azure.eviction import PreemptionWatch, deadline_stamper, node_lister

        if self.core_api is None:
            return None
        return PreemptionWatch(
            node_lister(self.core_api), vm_id, stamp_deadline=deadline_stamper(self.core_api)
        )

    def share_unavailable_offerings(self, core_api: Any) -> None:
        self.core_api = core_api

    def offering_interrupted(self, event: InterruptionEvent, instance_type: str, zone: str) -> bool:
        from activities.azure.eviction import mark_evicted_offering

        if self.mark_unavailable is None:
            return False
        return mark_evicted_offering(self.mark_unavailable, event, instance_type, zone)

    def unhealthy_instances(self, now: datetime) -> list[Unhealthy]:
        self._vms("instance health")

    def reservation_states(self, ids: Sequence[str]) -> dict[str, str]:
        return {}  # no capacity reservations on Azure yet

    def describe_cluster(self) -> str:
        self._vms("cluster discovery")
