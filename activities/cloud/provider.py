"""The interface every cloud implements, shaped by what its callers use.

The activities (planning, launch, termination, garbage collection, node-class status) and
the worker (catalog warm-up, interruption, metrics) hold a ``CloudProvider`` and call only
this; each cloud's parts (EC2's fleet launcher, pricing, instance tags, launch templates) stay
behind it. Node classes travel as the provider's own model (``NodeClass``), parsed by its kind
(``nodeclass_kind.parse``), so the activities never name EC2NodeClass or AKSNodeClass.

Errors are ``activities.cloud.errors``: each provider classifies its SDK's failures into them
once, in its adapter.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

from activities.cloud.health import Unhealthy
from activities.cloud.instances import Instance
from activities.cloud.interruption import InterruptionEvent, InterruptionSource
from activities.cloud.kinds import NodeClassKind
from activities.cloud.launch import LaunchRequest, LaunchResult
from activities.kubernetes.conditions import Condition
from models.instancetype import InstanceType

# A provider's node-class model (EC2NodeClass, AKSNodeClass), as its kind parses it.
NodeClass = Any
# (method, seconds, error type or None): how the worker's metrics learn of each call, with
# Karpenter's cloud-provider method names (GetInstanceTypes, Create, Get, List, Delete).
CallObserver = Callable[[str, float, str | None], None]


@dataclass
class NodeClassStatus:
    """What a node class's status should say: one condition per resolved part (not Ready:
    the status writer derives it) and the resolved fields to publish (by their wire names)."""

    conditions: list[Condition] = field(default_factory=list)
    fields: dict[str, Any] = field(default_factory=dict)
    # annotations to keep on the class (what its CRD's status has no field for)
    annotations: dict[str, str] = field(default_factory=dict)


class CloudProvider(Protocol):
    """One cloud, for one cluster and region."""

    observe: CallObserver | None

    @property
    def name(self) -> str:
        """``aws`` or ``azure``: the ``--provider`` setting that chose it."""
        ...

    @property
    def nodeclass_kind(self) -> NodeClassKind: ...

    # -- provider ids ---------------------------------------------------------------------
    def provider_id(self, zone: str, instance_id: str) -> str:
        """A Node's ``spec.providerID`` for an instance."""
        ...

    def instance_id(self, provider_id: str) -> str:
        """The instance a provider id names, or "" when it is not this provider's."""
        ...

    def zone_of(self, provider_id: str) -> str:
        """The zone a provider id names ("" when it names none): metrics' ``zone`` label."""
        ...

    # -- catalog, offerings and prices ----------------------------------------------------
    def instance_types(self, nodeclass: NodeClass | None = None) -> list[InstanceType]:
        """The catalog with its offerings (zone, capacity type, price, availability); with a
        node class, as that class sees it (its zones, its images' and kubelet's reserve)."""
        ...

    def load_catalog(self) -> None:
        """Read the catalog and prices now (the worker warms it at start)."""
        ...

    def catalog_snapshot(self) -> object:
        """The catalog and prices as read, picklable: a restarted worker adopts it."""
        ...

    def adopt_catalog_snapshot(self, snapshot: Any) -> None: ...

    # -- node classes ---------------------------------------------------------------------
    def nodeclass_not_ready(self, nodeclass: NodeClass) -> str | None:
        """Why the class cannot launch now (its resolution's message), or None when Ready."""
        ...

    def nodeclass_status(self, nodeclass: NodeClass) -> NodeClassStatus:
        """Resolve the class afresh (the status controller): its conditions and fields."""
        ...

    # -- instances ------------------------------------------------------------------------
    def launch(self, request: LaunchRequest, nodeclass: NodeClass) -> LaunchResult:
        """Launch (or find again: idempotent by the claim) the claim's instance."""
        ...

    def get(self, instance_id: str) -> Instance:
        """Raises ``InstanceNotFound`` for a missing or terminated instance."""
        ...

    def find_by_nodeclaim(self, nodeclaim: str) -> Instance | None:
        """The live instance launched for the claim, if any."""
        ...

    def list_owned(self, nodepool: str | None = None) -> Sequence[Instance]:
        """Live instances this cluster launched (of one NodePool, when named)."""
        ...

    def leaked(
        self, known_nodeclaims: Iterable[str], now: datetime | None, grace: timedelta
    ) -> Sequence[Instance]:
        """Owned instances whose NodeClaim is gone, launched more than ``grace`` ago."""
        ...

    def delete(self, instance_id: str) -> bool:
        """Start termination; True once the instance is gone (idempotent)."""
        ...

    def garbage_collect(
        self,
        live_nodeclasses: list[str] | None = None,
        now: datetime | None = None,
        roles: Mapping[str, str] | None = None,
    ) -> dict[str, list[str]]:
        """Delete what the provider made for launches and nothing uses any more (EC2: launch
        templates, instance profiles of deleted classes or of roles their class, in
        ``roles``, no longer names); what was deleted, by kind."""
        ...

    # -- the worker -----------------------------------------------------------------------
    def interruption_source(self) -> InterruptionSource | None:
        """Where interruption events come from (None when not configured)."""
        ...

    def share_unavailable_offerings(self, core_api: Any) -> None:
        """Share the offerings the cloud refused with the cluster's other workers (through
        a ConfigMap written with this Kubernetes core API)."""
        ...

    def offering_interrupted(self, event: InterruptionEvent, instance_type: str, zone: str) -> bool:
        """An interruption of an instance of ``instance_type`` in ``zone``: mark its offering
        unavailable where the event says the cloud wants that capacity back (Karpenter: a
        spot interruption); returns whether it marked one."""
        ...

    def reservation_states(self, ids: Sequence[str]) -> dict[str, str]:
        """The state of each capacity reservation named (EC2: active, expiring, …); one
        the cloud no longer lists is left out."""
        ...

    def unhealthy_instances(self, now: datetime) -> list[Unhealthy]:
        """The cluster's instances the cloud's own health checks find failing, or due a
        scheduled event (node repair's signal beside the node conditions)."""
        ...

    def watch_launches(
        self, launch_failed: Callable[..., None], batch: Callable[..., None]
    ) -> None:
        """Tell ``launch_failed`` of each refused launch and ``batch`` of each launch batch
        (karpenter_cloudprovider_* and the batcher's metrics)."""
        ...

    def loaded_instance_types(self) -> list[InstanceType]:
        """The catalog as loaded now, empty until it is (a metrics scrape never waits)."""
        ...

    def describe_cluster(self) -> str:
        """One line on the cluster the provider serves (raises when it cannot tell)."""
        ...
