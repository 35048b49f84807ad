"""The EC2 provider assembled: one object per region that callers (activities, CLI) hold."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypeVar

from activities.ec2.capacity_cache import UnavailableOfferings
from activities.ec2.capacity_reservations import ReservationAvailability
from activities.ec2.catalog import InstanceTypeProvider
from activities.ec2.clients import AWSClients
from activities.ec2.cluster import ClusterSource
from activities.ec2.fleet import Launcher
from activities.ec2.instance_profiles import InstanceProfiles
from activities.ec2.instances import TAG_NODECLASS, Instance, InstanceProvider
from activities.ec2.interruption import InterruptionQueue
from activities.ec2.launch_templates import LT_ID_TAG, LaunchTemplateProvider
from activities.ec2.launch_types import LaunchRequest, LaunchResult
from activities.ec2.nodeclass import NodeClassResolver, ResolvedNodeClass
from activities.ec2.nodeclass_cache import ResolvedNodeClasses
from activities.ec2.pricing import PricingProvider
from activities.ec2.reserved_offerings import with_reserved_offerings
from activities.ec2.settings import ProviderSettings
from models.ec2nodeclass import EC2NodeClass
from models.instancetype import InstanceType

T = TypeVar("T")
# (method, seconds, error type or None): how the worker's metrics learn of each call.
CallObserver = Callable[[str, float, str | None], None]


@dataclass
class EC2Provider:
    settings: ProviderSettings
    clients: AWSClients
    unavailable: UnavailableOfferings
    pricing: PricingProvider
    catalog: InstanceTypeProvider
    resolver: NodeClassResolver
    nodeclasses: ResolvedNodeClasses
    templates: LaunchTemplateProvider
    instances: InstanceProvider
    launcher: Launcher
    cluster: ClusterSource
    profiles: InstanceProfiles | None
    observe: CallObserver | None = None
    # NodeClass -> (its catalog list, its reservations' facts, the list with reserved
    # offerings): the same list handed out while neither changes (the solver keeps per list)
    _reserved_views: dict[str, tuple[object, object, list[InstanceType]]] = field(
        default_factory=dict, repr=False
    )

    @staticmethod
    def create(
        settings: ProviderSettings,
        clients: AWSClients,
        clock: Callable[[], float] = time.monotonic,
        use_pricing_api: bool = True,
    ) -> EC2Provider:
        unavailable = UnavailableOfferings(
            settings.unavailable_offerings_ttl_seconds,
            clock,
            sync_seconds=settings.unavailable_offerings_sync_seconds,
        )
        pricing_client = clients.pricing if use_pricing_api and not settings.isolated_vpc else None
        pricing = PricingProvider(settings.region, clients.ec2, pricing_client)
        catalog = InstanceTypeProvider(clients.ec2, settings, pricing, unavailable, clock)
        cluster = ClusterSource(
            settings.cluster,
            clients.eks if settings.discover_cluster else None,
            settings.cluster_refresh_seconds,
            clock,
        )
        profiles = (
            InstanceProfiles(clients.iam, settings.cluster_name, settings.region)
            if settings.manage_instance_profiles and clients.iam is not None
            else None
        )

        def kubernetes_version() -> str:
            return cluster.current().kubernetes_version

        reservations = ReservationAvailability()
        resolver = NodeClassResolver(
            clients.ec2, clients.ssm, kubernetes_version, profiles, reservations
        )
        nodeclasses = ResolvedNodeClasses(
            resolver.resolve, kubernetes_version, settings.nodeclass_cache_ttl_seconds, clock
        )
        templates = LaunchTemplateProvider(clients.ec2, settings.cluster_name)
        instances = InstanceProvider(clients.ec2, settings.cluster_name)
        launcher = Launcher(
            clients.ec2, settings, catalog, nodeclasses, templates, instances, unavailable, cluster
        )
        launcher.reservations = reservations
        return EC2Provider(
            settings,
            clients,
            unavailable,
            pricing,
            catalog,
            resolver,
            nodeclasses,
            templates,
            instances,
            launcher,
            cluster,
            profiles,
        )

    def resolve_nodeclass(self, nodeclass: EC2NodeClass) -> ResolvedNodeClass:
        """Resolve afresh (the NodeClass status controller, the CLI); the answer, if ready,
        also serves the launches that follow."""
        return self.nodeclasses.refresh(nodeclass)

    def _timed(self, method: str, call: Callable[[], T]) -> T:
        """Run ``call`` and report it as Karpenter's cloud provider decorator does (method
        names as Karpenter's CloudProvider interface spells them)."""
        if self.observe is None:
            return call()
        start = time.perf_counter()
        try:
            value = call()
        except Exception as exc:
            self.observe(method, time.perf_counter() - start, type(exc).__name__)
            raise
        self.observe(method, time.perf_counter() - start, None)
        return value

    def instance_types(self, nodeclass: EC2NodeClass | None = None) -> list[InstanceType]:
        """The catalog; with a NodeClass, offerings in zones without its subnets are unavailable."""

        def listed() -> list[InstanceType]:
            if nodeclass is None:
                return self.catalog.list(None, None)
            resolved = self.nodeclasses.get(nodeclass)
            zones = {s.zone for s in resolved.subnets}
            base = self.catalog.list(nodeclass, zones)
            if not resolved.capacity_reservations:
                return base
            facts = tuple(
                (r, self.launcher.reservations.count(r.id)) for r in resolved.capacity_reservations
            )
            seen = self._reserved_views.get(nodeclass.name)
            if seen is not None and seen[0] is base and seen[1] == facts:
                return seen[2]
            view = with_reserved_offerings(
                base, resolved.capacity_reservations, self.launcher.reservations, zones
            )
            self._reserved_views[nodeclass.name] = (base, facts, view)
            return view

        return self._timed("GetInstanceTypes", listed)

    def nodeclass_not_ready(self, nodeclass: EC2NodeClass) -> str | None:
        """Why the NodeClass is not Ready (no subnet, security group or AMI matched its
        selectors), or None when it is; a ready answer is the cached resolution's."""
        cond = self.nodeclasses.get(nodeclass).not_ready_reason()
        return None if cond is None else (cond.message or cond.reason or "not ready")

    def launch(self, request: LaunchRequest, nodeclass: EC2NodeClass) -> LaunchResult:
        return self._timed("Create", lambda: self.launcher.launch(request, nodeclass))

    def get(self, instance_id: str) -> Instance:
        return self._timed("Get", lambda: self.instances.get(instance_id))

    def list_owned(self, nodepool: str | None = None) -> list[Instance]:
        return self._timed("List", lambda: self.instances.list_owned(nodepool))

    def delete(self, instance_id: str) -> bool:
        return self._timed("Delete", lambda: self.instances.terminate(instance_id))

    def interruption_queue(self) -> InterruptionQueue | None:
        if not self.settings.interruption_queue:
            return None
        return InterruptionQueue(
            self.clients.sqs, self.settings.interruption_queue, owned=self.instances.any_owned
        )

    def garbage_collect(
        self,
        live_nodeclasses: list[str] | None = None,
        now: datetime | None = None,
        roles: Mapping[str, str] | None = None,
    ) -> dict[str, list[str]]:
        """Delete launch templates no live instance uses and, given the NodeClasses that
        exist, the instance profiles of the others once none of their instances runs; given
        their ``roles``, also the profiles of roles they no longer name, once unused.
        Returns what was deleted, by kind."""
        owned = self.instances.list_owned()
        in_use = {i.tags[LT_ID_TAG] for i in owned if LT_ID_TAG in i.tags}
        out = {"launchTemplates": self.templates.garbage_collect(in_use, now=now)}
        if live_nodeclasses is not None and self.profiles is not None:
            # A deleted NodeClass's profile stays while its instances run: they use its role.
            running = {i.tags[TAG_NODECLASS] for i in owned if TAG_NODECLASS in i.tags}
            keep = [*live_nodeclasses, *running]
            out["instanceProfiles"] = self.profiles.garbage_collect(
                keep,
                now=now,
                roles=roles,
                in_use={i.instance_profile for i in owned if i.instance_profile},
            )
        return out
