"""Launch one instance for a NodeClaim with CreateFleet (instant), cheapest pools first.

Claims launched at once with the same request (a burst's claims share a shape, templates and
tags) go out as one CreateFleet for all of them, as Karpenter batches CreateFleet; so do their
idempotency lookups (:mod:`activities.ec2.batcher`). Each claim's instance is then tagged with
its claim.

Idempotent twice over: an instance already launched for the NodeClaim (tagged with it, or
paired with it by a batched launch, :mod:`activities.ec2.launch_batches`) is returned as is,
and the fleet's ClientToken is derived from its claims' UIDs, so EC2 itself answers a repeated
call with the first call's instances.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from botocore.exceptions import ClientError

from activities.cloud.offering_choice import choose_capacity_type, usable_offerings
from activities.ec2.amis import ResolvedAMI
from activities.ec2.batcher import Batcher
from activities.ec2.capacity import EFA
from activities.ec2.capacity_cache import UnavailableOfferings
from activities.ec2.capacity_reservations import (
    RESERVATION_FULL,
    CapacityReservation,
    ReservationAvailability,
)
from activities.ec2.catalog import InstanceTypeProvider
from activities.ec2.cluster import ClusterSource
from activities.ec2.errors import (
    CAPACITY_TYPE_WIDE_CODES,
    LAUNCH_TEMPLATE_NOT_FOUND_CODES,
    UNFULFILLABLE_CAPACITY_CODES,
    EC2Error,
    InsufficientCapacity,
    LaunchFailed,
    LaunchTemplateNotFound,
    Pool,
    Throttled,
    TokenReused,
    TransientError,
    aws_errors,
    classify,
)
from activities.ec2.families import CUSTOM, family_of
from activities.ec2.instances import (
    LOOKUP_CHUNK,
    TAG_EKS_CLUSTER,
    TAG_NODECLAIM,
    TAG_NODECLASS,
    TAG_NODEPOOL,
    Instance,
    InstanceProvider,
    cluster_tag,
)
from activities.ec2.launch_batches import (
    assign,
    batch_token,
    member_capacity,
    member_tag,
)
from activities.ec2.launch_templates import LaunchTemplateInput, LaunchTemplateProvider
from activities.ec2.launch_types import LaunchRequest, LaunchResult, provider_id
from activities.ec2.nodeclass import ResolvedNodeClass
from activities.ec2.nodeclass_cache import ResolvedNodeClasses
from activities.ec2.reserved_offerings import reservation_labels, with_reserved_offerings
from activities.ec2.settings import IPV6, ProviderSettings
from activities.ec2.subnets import best_subnet_per_zone
from activities.ec2.type_labels import NODECLASS, PLACEMENT_GROUP_ID, TENANCY, ZONE_ID
from activities.ec2.type_match import CompatibleTypes
from activities.ec2.userdata import Bootstrap
from activities.ec2.userdata import render as render_user_data
from models import labels as L
from models.ec2nodeclass import EC2NodeClass, KubeletConfiguration
from models.instancetype import InstanceType, Offering
from models.policies import STRICT
from models.requirements import Requirement, Requirements
from models.resources import parse_resources, render
from scheduling.targets import min_values_shortfall

log = logging.getLogger(__name__)
UNREGISTERED_TAINT = {"key": L.UNREGISTERED_TAINT_KEY, "effect": "NoExecute"}
# The CreateFleet batching window: a batch goes out once no claim has joined it for
# BATCH_IDLE seconds, or BATCH_MAX_WAIT after it opened. Karpenter waits 35 ms; a burst's
# launches here come from Python threads sharing one GIL with the workflows, spaced wider on
# a loaded worker, and a lone launch's extra 0.1 s is nothing beside EC2's answer. Lookups
# batch the same way, as many claims as one DescribeInstances filter takes (LOOKUP_CHUNK).
BATCH_IDLE = 0.1
BATCH_MAX_WAIT = 1.0


@dataclass(frozen=True)
class FleetKey:
    """What makes two claims' CreateFleet requests the same: the request without its token,
    count and per-claim tags (JSON, keys sorted), and the subnets' zones to read it by."""

    request: str
    zones: str


@dataclass(frozen=True)
class Member:
    nodeclaim: str
    uid: str


@dataclass(frozen=True)
class Launched:
    """One instance of a CreateFleet answer."""

    instance_id: str
    instance_type: str
    zone: str
    capacity_type: str
    template: str
    subnet_id: str = ""


@dataclass(frozen=True)
class Candidate:
    """An instance type that fits the claim, with its usable offerings of the chosen kind."""

    instance_type: InstanceType
    offerings: tuple[Offering, ...]

    @property
    def price(self) -> float:
        return min(o.price for o in self.offerings)


def rank_candidates(
    types: list[InstanceType], reqs: Requirements, capacity_type: str, limit: int
) -> list[Candidate]:
    cands = [
        Candidate(it, offs) for it in types if (offs := usable_offerings(it, reqs, capacity_type))
    ]
    if capacity_type == L.CAPACITY_TYPE_SPOT and not min_values_of(reqs):
        # (Karpenter keeps dear spot types when minValues asks for flexibility.)
        # Spot dearer than the cheapest compatible on-demand is not worth its interruptions.
        od = [
            o.price for it in types for o in usable_offerings(it, reqs, L.CAPACITY_TYPE_ON_DEMAND)
        ]
        if od:
            ceiling = min(od)
            cheaper = [c for c in cands if c.price <= ceiling]
            cands = cheaper or cands
    cands.sort(key=lambda c: (c.price, c.instance_type.name))
    return cands[:limit]


def min_values_of(reqs: Requirements) -> dict[str, int]:
    return {key: r.min_values for key, r in reqs.items() if r.min_values}


def launch_min_values_shortfall(candidates: list[Candidate], reqs: Requirements) -> str | None:
    """Whether the types a launch kept (available offerings of the chosen capacity type,
    the cheapest ``max_fleet_instance_types``) still give the claim's minValues, as
    Karpenter checks when it truncates the list for CreateFleet; None when they do."""
    wanted = min_values_of(reqs)
    if not wanted:
        return None
    return min_values_shortfall([c.instance_type for c in candidates], reqs, wanted)


def pick_ami(amis: list[ResolvedAMI], it: InstanceType) -> ResolvedAMI | None:
    for ami in amis:
        if it.requirements.compatible(ami.requirement_set()) is None:
            return ami
    return None


class Launcher:
    def __init__(
        self,
        ec2: Any,
        settings: ProviderSettings,
        catalog: InstanceTypeProvider,
        nodeclasses: ResolvedNodeClasses,
        templates: LaunchTemplateProvider,
        instances: InstanceProvider,
        unavailable: UnavailableOfferings,
        cluster: ClusterSource,
    ) -> None:
        self._ec2 = ec2
        self._settings = settings
        self._catalog = catalog
        self._nodeclasses = nodeclasses
        self._templates = templates
        self._instances = instances
        self._unavailable = unavailable
        self._cluster = cluster
        # free places per capacity reservation (the provider shares it with the resolver)
        self.reservations = ReservationAvailability()
        # In a burst every claim of a round has the same shape: match the catalog once.
        self._compatible = CompatibleTypes()
        self._lookups: Batcher[None, str, Instance | None] = Batcher(
            self._lookup_batch,
            idle=BATCH_IDLE,
            max_wait=BATCH_MAX_WAIT,
            max_items=LOOKUP_CHUNK,
            name="describe_instances",
        )
        self._fleets: Batcher[FleetKey, Member, Launched] = Batcher(
            self._fleet_batch,
            idle=BATCH_IDLE,
            max_wait=BATCH_MAX_WAIT,
            max_items=member_capacity(0),
            name="create_fleet",
        )
        # told (zone, zone id, capacity type, error code) for each offering EC2 refused
        self.launch_failed: Callable[[str, str, str, str], None] | None = None

    def observe_batches(self, observe: Callable[[str, float, int], None]) -> None:
        """``karpenter_cloudprovider_batcher_*``: each batch as it is sent."""
        self._lookups.observe = observe
        self._fleets.observe = observe

    def launch(self, request: LaunchRequest, nodeclass: EC2NodeClass) -> LaunchResult:
        existing = self._lookups.submit(None, request.nodeclaim_name)
        if existing is not None:
            if existing.nodeclaim is None:  # a batched launch that ended before its tags
                self._instances.tag(existing.id, self.claim_tags(request))
            return self._result_for_existing(existing, nodeclass)
        resolved = self._nodeclasses.get(nodeclass)
        resolved.require_ready()
        self._unavailable.sync()  # other replicas' refusals, before choosing pools
        zones = {s.zone for s in resolved.subnets}
        group = resolved.placement_group
        types = with_reserved_offerings(
            self._catalog.list(nodeclass, zones, group.strategy if group else ""),
            resolved.capacity_reservations,
            self.reservations,
            zones,
        )
        reqs = request.requirement_set()
        requests = parse_resources(request.resources)
        compatible = self._compatible(types, reqs, requests)
        capacity_type = choose_capacity_type(compatible, reqs)
        if capacity_type == L.CAPACITY_TYPE_RESERVED:
            try:
                return self._launch_reserved(request, nodeclass, resolved, compatible, reqs)
            except InsufficientCapacity:
                # the reservation is full: fall back to what else the claim allows
                reqs = _without_reserved(reqs)
                capacity_type = choose_capacity_type(compatible, reqs)
                if capacity_type is None:
                    raise
        if capacity_type is None:
            raise InsufficientCapacity(
                f"NodeClaim {request.nodeclaim_name}: no available offering among "
                f"{len(compatible)} compatible instance types"
            )
        candidates = rank_candidates(
            compatible, reqs, capacity_type, self._settings.max_fleet_instance_types
        )
        short = launch_min_values_shortfall(candidates, reqs)
        if short is not None and self._settings.min_values_policy == STRICT:
            # Karpenter's Strict policy fails the launch as insufficient capacity: the claim
            # is deleted and its pods planned again.
            raise InsufficientCapacity(
                f"NodeClaim {request.nodeclaim_name}: {short} once narrowed to the "
                f"{len(candidates)} available, cheapest {capacity_type} types to launch"
            )
        configs, images = self._launch_template_configs(
            request, nodeclass, resolved, candidates, capacity_type
        )
        if not configs:
            raise InsufficientCapacity(
                f"NodeClaim {request.nodeclaim_name}: no AMI of EC2NodeClass {nodeclass.name} "
                "suits the compatible instance types"
            )
        try:
            launched = self._fleets.submit(
                self._fleet_key(request, nodeclass, capacity_type, configs, resolved),
                Member(request.nodeclaim_name, request.nodeclaim_uid),
                limit=member_capacity(len(self.shared_tags(request, nodeclass))),
            )
        except TokenReused as exc:
            return self._adopt_earlier(request, nodeclass, exc)
        except (InsufficientCapacity, Throttled):
            raise
        except EC2Error as exc:
            if isinstance(exc, LaunchTemplateNotFound):
                # refused as a whole (not per override): the next try creates them again
                for cfg in configs:
                    self._templates.invalidate(
                        cfg["LaunchTemplateSpecification"]["LaunchTemplateName"]
                    )
            # A subnet, security group or AMI the cached resolution named may be gone: the
            # retry resolves the NodeClass afresh.
            self._nodeclasses.invalidate(nodeclass.name)
            raise
        # Outside the launch's error handling: a CreateTags that fails after botocore's
        # retries (throttled: it shares EC2's mutating-call budget with CreateFleet) is
        # retryable, and the retry finds the instance by its member tag and tags it.
        self._instances.tag_new(launched.instance_id, self.claim_tags(request))
        by_name = {c.instance_type.name: c.instance_type for c in candidates}
        result = self._result(
            launched.instance_id,
            launched.instance_type,
            launched.zone,
            launched.capacity_type,
            images.get(launched.template, ""),
            by_name.get(launched.instance_type),
            request,
        )
        # The override it came from names its subnet; every template names the same groups.
        result.subnet_id = launched.subnet_id
        result.security_group_ids = sorted({g.id for g in resolved.security_groups})
        zone_id = next((s.zone_id for s in resolved.subnets if s.zone == launched.zone), "")
        if zone_id:
            result.labels[ZONE_ID] = zone_id
        if resolved.placement_group is not None:
            result.labels[PLACEMENT_GROUP_ID] = resolved.placement_group.id
        return result

    def _launch_reserved(
        self,
        request: LaunchRequest,
        nodeclass: EC2NodeClass,
        resolved: ResolvedNodeClass,
        compatible: list[InstanceType],
        reqs: Requirements,
    ) -> LaunchResult:
        """A targeted launch into the one reservation of the cheapest reserved candidate (a
        launch template targets a single reservation); a full one is marked so and answers
        InsufficientCapacity."""
        cands = rank_candidates(
            compatible, reqs, L.CAPACITY_TYPE_RESERVED, self._settings.max_fleet_instance_types
        )
        chosen = min(cands[0].offerings, key=lambda o: o.price).reservation_id
        reservation = next(r for r in resolved.capacity_reservations if r.id == chosen)
        only = [
            Candidate(c.instance_type, offs)
            for c in cands
            if (offs := tuple(o for o in c.offerings if o.reservation_id == chosen))
        ]
        configs, images = self._launch_template_configs(
            request, nodeclass, resolved, only, L.CAPACITY_TYPE_RESERVED, reservation
        )
        try:
            launched = self._fleets.submit(
                self._fleet_key(request, nodeclass, L.CAPACITY_TYPE_ON_DEMAND, configs, resolved),
                # its own token: a fallback to on-demand after a refusal is another request
                Member(request.nodeclaim_name, _reserved_token(request.nodeclaim_uid, chosen)),
                limit=member_capacity(len(self.shared_tags(request, nodeclass))),
            )
        except TokenReused as exc:
            return self._adopt_earlier(request, nodeclass, exc)
        except InsufficientCapacity:
            log.info("capacity reservation %s is full: marked unavailable", chosen)
            self.reservations.mark_unavailable(chosen)
            raise
        self.reservations.mark_launched(chosen)
        self._instances.tag_new(launched.instance_id, self.claim_tags(request))
        by_name = {c.instance_type.name: c.instance_type for c in only}
        result = self._result(
            launched.instance_id,
            launched.instance_type,
            launched.zone,
            L.CAPACITY_TYPE_RESERVED,
            images.get(launched.template, ""),
            by_name.get(launched.instance_type),
            request,
        )
        result.labels.update(reservation_labels(reservation))
        result.subnet_id = launched.subnet_id
        result.security_group_ids = sorted({g.id for g in resolved.security_groups})
        return result

    def _adopt_earlier(
        self, request: LaunchRequest, nodeclass: EC2NodeClass, refusal: TokenReused
    ) -> LaunchResult:
        """EC2 refused the claim's token: an earlier request used it with other parameters
        (the previous release's launch, one CreateFleet a claim with its tags in the request,
        or an earlier attempt's with other overrides). Its instance is the claim's: adopt
        it, found by claim or member tag; if EC2's reads do not list it yet, retry later; if
        it is terminated, the claim has lost its instance and fails (it is planned again)."""
        earlier = self._lookups.submit(None, request.nodeclaim_name)
        if earlier is None and (gone := self._instances.gone_for(request.nodeclaim_name)):
            # it launched and has ended since: the claim's instance is gone, re-plan
            raise LaunchFailed(
                f"NodeClaim {request.nodeclaim_name}: {refusal}; the instance {gone.id} the "
                f"earlier request launched is {gone.state}",
                refusal.code,
            )
        if earlier is None:
            raise TransientError(
                f"NodeClaim {request.nodeclaim_name}: {refusal}; the instance of the earlier "
                "request with this token is not listed yet",
                refusal.code,
            )
        log.info(
            "NodeClaim %s: adopting %s, launched by an earlier request with its client token",
            request.nodeclaim_name,
            earlier.id,
        )
        if earlier.nodeclaim is None:
            self._instances.tag(earlier.id, self.claim_tags(request))
        return self._result_for_existing(earlier, nodeclass)

    # -- building the fleet request ----------------------------------------------------------
    def _launch_template_configs(
        self,
        request: LaunchRequest,
        nodeclass: EC2NodeClass,
        resolved: ResolvedNodeClass,
        candidates: list[Candidate],
        capacity_type: str,
        reservation: CapacityReservation | None = None,
    ) -> tuple[list[dict[str, Any]], dict[str, str]]:
        """One config per (AMI, max pods, EFA interfaces) with overrides = its types x zones
        (best subnet). A claim that requests EFA gets every EFA interface its type has, one
        per network card, as Karpenter's templates do; the others get none."""
        family = family_of(nodeclass)
        kubelet = (
            KubeletConfiguration.model_validate(request.kubelet)
            if request.kubelet is not None
            else nodeclass.spec.kubelet
        )
        kubelet_wire = kubelet.to_wire() if kubelet else {}
        subnets = best_subnet_per_zone(resolved.subnets)
        groups: dict[tuple[str, int, int], list[Candidate]] = {}
        wants_efa = EFA in request.resources
        for cand in candidates:
            ami = pick_ami(resolved.amis, cand.instance_type)
            if ami is None:
                continue
            pods = cand.instance_type.capacity.get("pods", 0) // 1000
            efa = cand.instance_type.capacity.get(EFA, 0) // 1000 if wants_efa else 0
            groups.setdefault((ami.id, pods, efa), []).append(cand)
        labels = {
            **request.labels,
            L.NODEPOOL: request.nodepool_name,
            L.CAPACITY_TYPE: capacity_type,
        }
        if reservation is not None:
            labels.update(reservation_labels(reservation))
        if family.name != CUSTOM:
            # the kubelet registers the taints itself: registration must not re-add them
            labels[L.DO_NOT_SYNC_TAINTS] = "true"
        taints = (*request.taints, *request.startup_taints, UNREGISTERED_TAINT)
        configs: list[dict[str, Any]] = []
        images: dict[str, str] = {}
        cluster = self._cluster.current()
        for (image_id, pods, efa), cands in groups.items():
            bootstrap = Bootstrap(
                cluster=cluster,
                labels=labels,
                taints=tuple(taints),
                max_pods=pods,
                kubelet=kubelet_wire,
                custom=nodeclass.spec.user_data,
                instance_store_policy=nodeclass.spec.instance_store_policy,
            )
            spec = LaunchTemplateInput.build(
                nodeclass,
                family,
                image_id,
                render_user_data(family.name, bootstrap),
                [g.id for g in resolved.security_groups],
                resolved.instance_profile,
                ipv6=cluster.ip_family == IPV6,
                efa_interfaces=efa,
                placement_group_id=resolved.placement_group.id if resolved.placement_group else "",
            )
            if reservation is not None:
                spec = replace(
                    spec,
                    capacity_reservation_id=reservation.id,
                    capacity_reservation_type=reservation.reservation_type,
                )
            name = self._templates.ensure(spec)
            images[name] = image_id
            overrides = [
                {
                    "InstanceType": c.instance_type.name,
                    "SubnetId": subnets[o.zone].id,
                    "AvailabilityZone": o.zone,
                }
                for c in cands
                for o in c.offerings
                if o.zone in subnets
            ]
            if overrides:
                configs.append(
                    {
                        "LaunchTemplateSpecification": {
                            "LaunchTemplateName": name,
                            "Version": "$Latest",
                        },
                        "Overrides": overrides,
                    }
                )
        return configs, images

    def shared_tags(self, request: LaunchRequest, nodeclass: EC2NodeClass) -> dict[str, str]:
        """The tags every instance of the claim's request gets at launch. User tags first, so
        they can never overwrite the tags ownership depends on."""
        cluster = self._settings.cluster_name
        return {
            **nodeclass.spec.tags,
            **request.tags,
            TAG_NODEPOOL: request.nodepool_name,
            TAG_NODECLASS: nodeclass.name,
            cluster_tag(cluster): "owned",
            TAG_EKS_CLUSTER: cluster,
        }

    @staticmethod
    def claim_tags(request: LaunchRequest) -> dict[str, str]:
        """The claim's own tags, added to its instance once the answer names it."""
        return {
            "Name": f"{request.nodepool_name}/{request.nodeclaim_name}",
            TAG_NODECLAIM: request.nodeclaim_name,
        }

    def tags(self, request: LaunchRequest, nodeclass: EC2NodeClass) -> dict[str, str]:
        """Every tag the claim's instance ends up with."""
        return {**self.shared_tags(request, nodeclass), **self.claim_tags(request)}

    def _fleet_key(
        self,
        request: LaunchRequest,
        nodeclass: EC2NodeClass,
        capacity_type: str,
        configs: list[dict[str, Any]],
        resolved: ResolvedNodeClass,
    ) -> FleetKey:
        tags = [{"Key": k, "Value": v} for k, v in self.shared_tags(request, nodeclass).items()]
        params: dict[str, Any] = {
            "Type": "instant",
            "TargetCapacitySpecification": {"DefaultTargetCapacityType": capacity_type},
            "LaunchTemplateConfigs": configs,
            "TagSpecifications": [
                {"ResourceType": r, "Tags": tags} for r in ("instance", "volume", "fleet")
            ],
        }
        if nodeclass.spec.context:
            # EC2NodeClass.spec.context: the reserved-capacity context EC2 Fleet launches in.
            params["Context"] = nodeclass.spec.context
        if capacity_type == L.CAPACITY_TYPE_SPOT:
            params["SpotOptions"] = {"AllocationStrategy": "price-capacity-optimized"}
        else:
            params["OnDemandOptions"] = {"AllocationStrategy": "lowest-price"}
        zones = {s.id: s.zone for s in resolved.subnets}
        return FleetKey(json.dumps(params, sort_keys=True), json.dumps(zones, sort_keys=True))

    # -- batches -------------------------------------------------------------------------
    def _lookup_batch(self, _: None, names: list[str]) -> list[Instance | None]:
        found = self._instances.find_by_nodeclaims(names)
        return [found.get(n) for n in names]

    def _fleet_batch(self, key: FleetKey, members: list[Member]) -> Sequence[Launched | EC2Error]:
        """One CreateFleet for ``members``; each gets its instance or the error for it."""
        uids = {m.nodeclaim: m.uid for m in members}
        token = batch_token(uids.values())
        params: dict[str, Any] = json.loads(key.request)
        params["ClientToken"] = token
        params["TargetCapacitySpecification"]["TotalTargetCapacity"] = len(uids)
        for spec in params["TagSpecifications"]:
            if spec["ResourceType"] == "instance":
                spec["Tags"] += [{"Key": member_tag(n), "Value": token} for n in sorted(uids)]
        with aws_errors("CreateFleet"):
            response: dict[str, Any] = self._ec2.create_fleet(**params)
        zone_of_subnet: dict[str, str] = json.loads(key.zones)
        capacity_type = params["TargetCapacitySpecification"]["DefaultTargetCapacityType"]
        pools = self._record_errors(response.get("Errors", []), zone_of_subnet, capacity_type)
        launched = {i.instance_id: i for i in _instances(response, zone_of_subnet, capacity_type)}
        paired = assign(uids, launched)
        short: EC2Error | None = None
        if len(paired) < len(uids):
            short = (
                self._no_instance_error(response, pools)
                if response.get("Errors")
                else TransientError(f"CreateFleet launched {len(paired)} of {len(uids)} instances")
            )
        answers: list[Launched | EC2Error] = []
        for m in members:
            if m.nodeclaim in paired:
                answers.append(launched[paired[m.nodeclaim]])
            else:
                assert short is not None
                answers.append(short)
        return answers

    # -- reading the answer ------------------------------------------------------------------
    def _no_instance_error(self, response: dict[str, Any], pools: list[Pool]) -> EC2Error:
        """Why a claim got no instance from this answer, from its errors."""
        errors = response.get("Errors", [])
        codes = sorted({e.get("ErrorCode", "") for e in errors})
        if any(c in LAUNCH_TEMPLATE_NOT_FOUND_CODES for c in codes):
            for e in errors:
                spec = e.get("LaunchTemplateAndOverrides", {}).get(
                    "LaunchTemplateSpecification", {}
                )
                self._templates.invalidate(spec.get("LaunchTemplateName", ""))
            return LaunchTemplateNotFound("CreateFleet: launch template not found", codes[0])
        if not errors or all(c in UNFULFILLABLE_CAPACITY_CODES for c in codes):
            why = ", ".join(codes) or "no instances"
            return InsufficientCapacity(
                f"CreateFleet: no capacity in {len(pools)} pools ({why})",
                tuple(pools),
                codes[0] if codes else "",
            )
        first = next(e for e in errors if e.get("ErrorCode") not in UNFULFILLABLE_CAPACITY_CODES)
        return classify(_as_client_error(first), "CreateFleet")

    def _record_errors(
        self, errors: list[dict[str, Any]], zone_of_subnet: Mapping[str, str], capacity_type: str
    ) -> list[Pool]:
        """Put every refused pool in the unavailable-offerings cache; return them."""
        pools: list[Pool] = []
        for e in errors:
            code = e.get("ErrorCode", "")
            if code not in UNFULFILLABLE_CAPACITY_CODES or code == RESERVATION_FULL:
                continue  # a full reservation says nothing of the on-demand pool
            ct = e.get("Lifecycle") or capacity_type
            override = e.get("LaunchTemplateAndOverrides", {}).get("Overrides", {})
            zone = override.get("AvailabilityZone") or zone_of_subnet.get(
                override.get("SubnetId", ""), ""
            )
            if self.launch_failed is not None:
                self.launch_failed(zone, "", ct, code)
            if code in CAPACITY_TYPE_WIDE_CODES:
                self._unavailable.mark_capacity_type_unavailable(ct)
                continue
            pool = Pool(ct, override.get("InstanceType", ""), zone)
            self._unavailable.mark_unavailable(pool.capacity_type, pool.instance_type, pool.zone)
            pools.append(pool)
            log.info("insufficient capacity: %s %s %s (%s)", ct, pool.instance_type, zone, code)
        return pools

    def _result(
        self,
        instance_id: str,
        itype: str,
        zone: str,
        capacity_type: str,
        image_id: str,
        it: InstanceType | None,
        request: LaunchRequest | None,
        reused: bool = False,
    ) -> LaunchResult:
        labels: dict[str, str] = {}
        if it is not None:
            labels.update(it.requirements.labels())
        labels.update({L.INSTANCE_TYPE: itype, L.ZONE: zone, L.CAPACITY_TYPE: capacity_type})
        labels[TENANCY] = "default"  # Joinery launches shared tenancy only
        if request is not None:
            labels.update(request.labels)
            labels[L.NODEPOOL] = request.nodepool_name
            labels[NODECLASS] = request.nodeclass_name
        capacity = dict(it.capacity) if it else {}
        allocatable = dict(it.allocatable) if it else {}
        if request is None or EFA not in request.resources:
            # launched without EFA interfaces (only a claim asking for EFA gets them), so
            # the node will not advertise the type's EFA: neither does the claim
            capacity.pop(EFA, None)
            allocatable.pop(EFA, None)
        return LaunchResult(
            instance_id=instance_id,
            provider_id=provider_id(zone, instance_id),
            instance_type=itype,
            zone=zone,
            capacity_type=capacity_type,
            image_id=image_id,
            capacity=render(capacity),
            allocatable=render(allocatable),
            labels=labels,
            reused=reused,
        )

    def _result_for_existing(self, inst: Instance, nodeclass: EC2NodeClass) -> LaunchResult:
        types = {it.name: it for it in self._catalog.list(nodeclass)}
        result = self._result(
            inst.id,
            inst.instance_type,
            inst.zone,
            inst.capacity_type,
            inst.image_id,
            types.get(inst.instance_type),
            None,
            reused=True,
        )
        result.subnet_id = inst.subnet_id
        result.security_group_ids = list(inst.security_group_ids)
        if inst.capacity_reservation_id:
            result.labels[L.CAPACITY_RESERVATION_ID] = inst.capacity_reservation_id
            result.labels[L.CAPACITY_RESERVATION_TYPE] = inst.capacity_reservation_type
            result.labels[L.CAPACITY_RESERVATION_INTERRUPTIBLE] = "false"
        if inst.tags.get(TAG_NODEPOOL):
            result.labels[L.NODEPOOL] = inst.tags[TAG_NODEPOOL]
        result.labels[NODECLASS] = nodeclass.name
        return result


def _reserved_token(uid: str, reservation_id: str) -> str:
    """The client token of a claim's launch into a reservation (at most 64 characters)."""
    token = f"{uid}.{reservation_id}"
    return token if len(token) <= 64 else hashlib.sha256(token.encode()).hexdigest()


def _without_reserved(reqs: Requirements) -> Requirements:
    """The claim's requirements less the reserved capacity type."""
    allowed = reqs.get_or_exists(L.CAPACITY_TYPE)
    rest = [ct for ct in (L.CAPACITY_TYPE_SPOT, L.CAPACITY_TYPE_ON_DEMAND) if allowed.has(ct)]
    return reqs.with_requirements([Requirement.create(L.CAPACITY_TYPE, "In", rest)])


def _as_client_error(error: Mapping[str, Any]) -> Exception:
    return ClientError(
        {"Error": {"Code": error.get("ErrorCode", ""), "Message": error.get("ErrorMessage", "")}},
        "CreateFleet",
    )


def _instances(
    response: Mapping[str, Any], zone_of_subnet: Mapping[str, str], capacity_type: str
) -> list[Launched]:
    """Every instance a CreateFleet answer names, with the pool it came from."""
    out: list[Launched] = []
    for entry in response.get("Instances", []):
        lto = entry.get("LaunchTemplateAndOverrides", {})
        override = lto.get("Overrides", {})
        zone = override.get("AvailabilityZone") or zone_of_subnet.get(
            override.get("SubnetId", ""), ""
        )
        for instance_id in entry.get("InstanceIds") or []:
            out.append(
                Launched(
                    instance_id,
                    entry.get("InstanceType") or override.get("InstanceType", ""),
                    zone,
                    entry.get("Lifecycle") or capacity_type,
                    lto.get("LaunchTemplateSpecification", {}).get("LaunchTemplateName", ""),
                    override.get("SubnetId", ""),
                )
            )
    return out
