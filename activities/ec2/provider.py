"""The EC2 provider assembled: one object per region, the AWS ``CloudProvider``.

Callers outside ``activities/ec2/`` hold it as a ``activities.cloud.provider.CloudProvider``
and call only that interface; the parts (catalog, pricing, instances, launcher, cluster)
are for this package, its tests and the AWS-only CLI commands.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypeVar

from activities.cloud.health import Unhealthy
from activities.cloud.interruption import InterruptionEvent
from activities.cloud.kinds import EC2_NODECLASS, NodeClassKind
from activities.cloud.observe import timed
from activities.cloud.options import ProviderOptions
from activities.cloud.provider import CallObserver, NodeClassStatus
from activities.ec2.capacity_cache import UnavailableOfferings
from activities.ec2.capacity_reservations import ReservationAvailability, list_reservations
from activities.ec2.catalog import InstanceTypeProvider
from activities.ec2.clients import AWSClients
from activities.ec2.cluster import ClusterSource
from activities.ec2.fleet import Launcher
from activities.ec2.instance_profiles import InstanceProfiles
from activities.ec2.instance_status import unhealthy_instances
from activities.ec2.instances import TAG_NODECLASS, Instance, InstanceProvider
from activities.ec2.interruption import InterruptionQueue, mark_interrupted_offering
from activities.ec2.launch_templates import LT_ID_TAG, LaunchTemplateProvider
from activities.ec2.launch_types import LaunchRequest, LaunchResult
from activities.ec2.nodeclass import NodeClassResolver, ResolvedNodeClass
from activities.ec2.nodeclass_cache import ResolvedNodeClasses
from activities.ec2.pricing import PricingProvider
from activities.ec2.reserved_offerings import with_reserved_offerings
from activities.ec2.settings import ClusterInfo, ProviderSettings
from activities.ec2.shared_offerings import ConfigMapRecord
from activities.kubernetes import conditions as cond
from models import conditions
from models import provider_id as aws_ids
from models.ec2nodeclass import CapacityReservationSelectorTerm, EC2NodeClass
from models.instancetype import InstanceType

T = TypeVar("T")
__all__ = ["CallObserver", "EC2Provider", "cluster_info"]


def cluster_info(opts: ProviderOptions) -> tuple[ClusterInfo, bool]:
    """The cluster facts the settings give, and whether EKS must be asked for the rest."""
    given = {
        "endpoint": opts.cluster_endpoint,
        "certificate_authority": opts.cluster_ca_bundle,
        "service_cidr": opts.service_cidr,
        "kubernetes_version": opts.kubernetes_version,
    }
    info = ClusterInfo(opts.cluster, **{k: v for k, v in given.items() if v})
    # EKS_CONTROL_PLANE=false: never DescribeCluster (the worker filled what it could from
    # the API server)
    return info, opts.eks_control_plane is not False and not all(given.values())


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

    @staticmethod
    def from_options(opts: ProviderOptions) -> EC2Provider:
        """The provider the worker runs with (``--provider aws``)."""
        clients = AWSClients.create(opts.region, opts.endpoint_url or None)
        cluster, discover = cluster_info(opts)
        settings = ProviderSettings(
            region=opts.region,
            cluster=cluster,
            interruption_queue=opts.interruption_queue or None,
            discover_cluster=discover,
            manage_instance_profiles=True,
            min_values_policy=opts.min_values_policy,
            isolated_vpc=opts.isolated_vpc,
            vm_memory_overhead_percent=opts.vm_memory_overhead_percent,
            reserved_enis=opts.reserved_enis,
            nodeclass_cache_ttl_seconds=opts.nodeclass_refresh_seconds,
        )
        return EC2Provider.create(settings, clients, use_pricing_api=not opts.endpoint_url)

    # -- CloudProvider: what the activities and the worker call ---------------------------
    @property
    def name(self) -> str:
        return "aws"

    @property
    def nodeclass_kind(self) -> NodeClassKind:
        return EC2_NODECLASS

    def provider_id(self, zone: str, instance_id: str) -> str:
        return aws_ids.provider_id(zone, instance_id)

    def instance_id(self, provider_id: str) -> str:
        return aws_ids.instance_id(provider_id)

    def zone_of(self, provider_id: str) -> str:
        try:
            return aws_ids.parse_provider_id(provider_id)[0]
        except ValueError:
            return ""

    def watch_launches(
        self, launch_failed: Callable[..., None], batch: Callable[..., None]
    ) -> None:
        self.launcher.launch_failed = launch_failed
        self.launcher.observe_batches(batch)

    def loaded_instance_types(self) -> list[InstanceType]:
        return self.catalog.list() if self.catalog.loaded else []

    def load_catalog(self) -> None:
        self.catalog.raw()

    def catalog_snapshot(self) -> object:
        return (self.catalog.raw(), self.pricing.snapshot())

    def adopt_catalog_snapshot(self, snapshot: Any) -> None:
        raw, prices = snapshot
        self.pricing.load(*prices)
        self.catalog.use_raw(raw)

    def nodeclass_status(self, nodeclass: EC2NodeClass) -> NodeClassStatus:
        """Resolve afresh: one condition per selector (Ready is the status writer's), and
        the subnets, security groups, AMIs and instance profile they resolved to."""
        resolved = self.resolve_nodeclass(nodeclass)
        status = resolved.status()
        fields: dict[str, Any] = {
            "subnets": status.subnets,
            "securityGroups": status.security_groups,
            "amis": status.amis,
        }
        if status.instance_profile:
            fields["instanceProfile"] = status.instance_profile
        if nodeclass.spec.capacity_reservation_selector_terms:
            # drift reads it (CapacityReservationDrift): written even when empty
            fields["capacityReservations"] = status.capacity_reservations or []
        return NodeClassStatus(
            [
                cond.Condition(c.type, c.status, c.reason, c.message or "")
                for c in resolved.conditions
                if c.type != conditions.READY
            ],
            fields,
        )

    def find_by_nodeclaim(self, nodeclaim: str) -> Instance | None:
        return self.instances.find_by_nodeclaim(nodeclaim)

    def leaked(
        self, known_nodeclaims: Iterable[str], now: datetime | None, grace: timedelta
    ) -> list[Instance]:
        return self.instances.leaked(known_nodeclaims, now=now, grace=grace)

    def interruption_source(self) -> InterruptionQueue | None:
        return self.interruption_queue()

    def share_unavailable_offerings(self, core_api: Any) -> None:
        """Replicas share what EC2 refused through a ConfigMap (``shared_offerings``)."""
        self.unavailable.share(ConfigMapRecord(core_api))

    def offering_interrupted(self, event: InterruptionEvent, instance_type: str, zone: str) -> bool:
        return mark_interrupted_offering(self.unavailable, event, instance_type, zone)

    def unhealthy_instances(self, now: datetime) -> list[Unhealthy]:
        return unhealthy_instances(self.clients.ec2, now)

    def reservation_states(self, ids: Sequence[str]) -> dict[str, str]:
        terms = [CapacityReservationSelectorTerm(id=i) for i in ids]
        return {r.id: r.state for r in list_reservations(self.clients.ec2, terms)}

    def describe_cluster(self) -> str:
        try:
            info = self.cluster.current()
        except Exception as exc:
            raise RuntimeError(
                f"EKS cluster {self.settings.cluster_name}: discovery failed: {exc}"
            ) from exc
        return (
            f"EKS cluster {info.name}: Kubernetes {info.kubernetes_version}, "
            f"service CIDR {info.service_cidr}, endpoint {info.endpoint}"
        )

    # -- the parts' own API (this package, its tests, the AWS-only CLI) --------------------
    def resolve_nodeclass(self, nodeclass: EC2NodeClass) -> ResolvedNodeClass:
        """Resolve afresh (the NodeClass status controller, the CLI); the answer, if ready,
        also serves the launches that follow."""
        return self.nodeclasses.refresh(nodeclass)

    def _timed(self, method: str, call: Callable[[], T]) -> T:
        """Run ``call`` and report it as Karpenter's cloud provider decorator does (method
        names as Karpenter's CloudProvider interface spells them)."""
        return timed(self.observe, method, call)

    def instance_types(self, nodeclass: EC2NodeClass | None = None) -> list[InstanceType]:
        """The catalog; with a NodeClass, offerings in zones without its subnets are unavailable."""

        def listed() -> list[InstanceType]:
            if nodeclass is None:
                return self.catalog.list(None, None)
            resolved = self.nodeclasses.get(nodeclass)
            zones = {s.zone for s in resolved.subnets}
            group = resolved.placement_group
            base = self.catalog.list(nodeclass, zones, group.strategy if group else "")
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
