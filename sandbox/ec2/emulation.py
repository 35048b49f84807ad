"""What moto does not emulate, added explicitly and in one place.

moto's CreateFleet launches the first override whatever its price, never reports ``Errors``
and ignores ``ClientToken``; its spot price history is one constant. Installing an
:class:`Emulation` patches moto's EC2 *response handlers* (in this process, so it also applies
to a ThreadedMotoServer) so that:

* CreateFleet launches the cheapest override (on-demand: the price table; spot: the seeded spot
  price), the way ``lowest-price`` / ``price-capacity-optimized`` behave when capacity is
  plentiful;
* pools marked with :meth:`Emulation.inject_insufficient_capacity` are skipped and reported in
  ``Errors`` with ``InsufficientInstanceCapacity``, as EC2 does;
* a pool given a capacity with :meth:`Emulation.limit_capacity` launches at most that many
  instances in all and reports the rest of a request in ``Errors`` as
  ``InsufficientInstanceCapacity`` (EC2's partial fulfillment of an instant fleet);
* a repeated ``ClientToken`` returns the first call's answer (EC2's idempotency), and a
  repeated token with other parameters is refused with ``IdempotentParameterMismatch``, as
  EC2 refuses it (moto ignores the token entirely): what an earlier release's launch, with
  the same token and other tags, meets in a retry by this one;
* :meth:`Emulation.hide_from_describe` keeps an instance out of the next DescribeInstances
  answers (by filter) that would list it: EC2's reads are eventually consistent, and a
  just-launched instance can be missing from them for a while (moto's never are);
* :meth:`Emulation.delay_new_instances` makes every instance CreateFleet launches unknown,
  for a few calls each, to CreateTags (``InvalidInstanceID.NotFound``) and to
  DescribeInstances: EC2's eventual consistency right after a launch, which moto never shows
  (its CreateTags even accepts ids that do not exist);
* :meth:`Emulation.refuse_fleets` answers every override of a capacity type's CreateFleet
  with one error code and launches nothing, as EC2 does for account-wide refusals: an account
  that never used Spot and may not create the Spot service-linked role
  (``AuthFailure.ServiceLinkedRoleCreationNotPermitted``), or a fleet quota reached
  (``MaxFleetCountExceeded``);
* :attr:`Emulation.metadata_tags_default` set to ``"enabled"`` is an account whose instance
  metadata defaults expose tags in IMDS: EC2 then refuses a launch whose template leaves
  ``InstanceMetadataTags`` unset while an instance tag key holds a ``/`` (IMDS tag keys may
  not), as real accounts with that default do; GetInstanceMetadataDefaults (which moto lacks)
  reports it as the account-level setting, and nothing when it is EC2's own default;
* placement groups, which moto does not implement at all: CreatePlacementGroup (a fresh id
  per creation), DeletePlacementGroup and DescribePlacementGroups (by name or id, a ``state``
  filter, an unknown name or id answered ``InvalidPlacementGroup.Unknown`` as EC2 does) over
  groups the emulation keeps per region; an instance launched into one shows it in its
  ``Placement``, with the partition EC2 would choose in a partition group
  (:mod:`sandbox.ec2.placement`); it is not placed any differently (there are no racks here);
* launched instances carry ``aws:ec2launchtemplate:id`` / ``:version`` tags, as EC2 adds,
  and the launch template's security groups (DescribeInstances ``SecurityGroups``) and
  instance profile (``IamInstanceProfile``), as EC2 applies them;
* DescribeSpotPriceHistory returns a per-(type, zone) price (a stable fraction of on-demand);
* IAM RemoveRoleFromInstanceProfile of a role the profile lacks answers NoSuchEntity, as IAM
  does (moto fails with an internal error);
* DescribeLaunchTemplates pages with ``MaxResults`` / ``NextToken`` and, without
  ``MaxResults``, returns every template, as EC2 does (moto cuts every answer at 15 and never
  returns a ``NextToken``, so a cluster with more templates silently loses the rest);
* the tags of named resources are looked up by resource id (:func:`_describe_tags`). moto
  reads one resource's tags by scanning every tag of every resource, and every tag filter and
  every answer of DescribeInstances reads each instance's tags that way: a call over N
  instances cost N times all tags, so with 1,000 instances 17 concurrent DescribeInstances
  calls from launches stalled the emulator for minutes. EC2 answers such calls in
  milliseconds; only the cost changes here, never an answer;
* DescribeInstances with a tag filter of exact values (``tag:karpenter.sh/nodeclaim=NAME``,
  every launch's idempotency lookup) or of exact tag keys (``tag-key``, the lookup of a
  batched launch's member tags) evaluates moto's filters only on the instances that carry
  the tag (:func:`_all_reservations`). moto evaluated every filter on every instance,
  compiling each filter value into a pattern per instance: 0.2 s a call at 250 instances and
  1.6 s at 1,000 on this box under load, once per launch. Patterns and other filters go
  through moto's own loop; the answer is the same either way;
* capacity reservations (moto has none): CreateCapacityReservation, DescribeCapacityReservations,
  capacity blocks, and targeted launches counting against a reservation's free places, a full
  one refused with ``ReservationCapacityExceeded`` (:mod:`sandbox.ec2.reservations`);
* instance type offerings in the China and GovCloud regions, where moto's data has none
  (:mod:`sandbox.ec2.partition_regions`);
* a launch template's IPv6 addresses on the instance's primary interface (``Ipv6AddressCount``,
  ``PrimaryIpv6``), and a subnet's auto-assigned one, which moto's CreateFleet leaves out
  (:mod:`sandbox.ec2.ipv6`);
* an ARN of another partition than the request's region refused, as AWS refuses it (moto
  takes any) (:mod:`sandbox.ec2.partition_guard`);
* DescribeInstanceTypes and DescribeInstanceTypeOfferings are serialized once per moto
  version, region and request and kept (:mod:`sandbox.ec2.static_answers`): moto takes
  5-15 s to build each answer, EC2 answers in well under a second.

The provider code never knows; it only sees an EC2 endpoint that behaves more like EC2.
"""

from __future__ import annotations

import copy
import hashlib
import re
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from moto.core.responses import ActionResult
from moto.ec2.exceptions import EC2ClientError
from moto.ec2.models.instances import InstanceBackend
from moto.ec2.models.tags import TagBackend
from moto.ec2.responses import EC2Response
from moto.ec2.utils import filter_reservations, random_fleet_id
from moto.iam.exceptions import NoSuchEntity
from moto.iam.models import IAMBackend

from activities.ec2.pricing import offline_table
from sandbox.ec2 import ipv6, partition_guard, partition_regions, placement, static_answers
from sandbox.ec2.reservations import EXCEEDED, EmulatedReservations

ICE = "InsufficientInstanceCapacity"
TOKEN_MISMATCH = "IdempotentParameterMismatch"
# Query parameters that are not the request's content: a repeat may differ in them.
_NOT_PARAMETERS = frozenset({"Action", "Version", "ClientToken"})
ON_DEMAND = "on-demand"
SPOT = "spot"
# Default region whose public prices stand in for regions the offline table lacks.
FALLBACK_PRICE_REGION = "us-east-1"


@dataclass(frozen=True, slots=True)
class InjectedPool:
    capacity_type: str
    instance_type: str
    zone: str


def default_spot_price(on_demand: float, instance_type: str, zone: str) -> float:
    """A stable 25-45% of on-demand, different per zone so zone choice matters."""
    digest = hashlib.sha256(f"{instance_type}/{zone}".encode()).digest()
    share = 0.25 + (digest[0] / 255) * 0.20
    return round(on_demand * share, 5)


@dataclass
class Emulation:
    """State of the emulated behaviour; one per process, shared by every moto region."""

    on_demand: Mapping[str, Mapping[str, float]] = field(default_factory=offline_table)
    spot_disabled_regions: set[str] = field(default_factory=set)
    insufficient: set[InjectedPool] = field(default_factory=set)
    # Instances a pool has left to give (pools not named here: unlimited).
    capacity_left: dict[InjectedPool, int] = field(default_factory=dict)
    # (region, token) -> the digest of the first call's parameters and its answer.
    _tokens: dict[tuple[str, str], tuple[str, dict[str, Any]]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    fleet_calls: list[dict[str, Any]] = field(default_factory=list)
    # tokens of the CreateFleet calls refused for their parameters, in order
    refused_tokens: list[str] = field(default_factory=list)
    # instance id -> how many more DescribeInstances answers (by filter) leave it out
    hidden: dict[str, int] = field(default_factory=dict)
    # how many reads a just-launched instance stays unknown for (0: known at once, as moto)
    new_instance_delay: int = 0
    # instance id -> how many more CreateTags calls answer InvalidInstanceID.NotFound
    untaggable: dict[str, int] = field(default_factory=dict)
    # capacity type -> (error code, message) every CreateFleet of that type is refused with
    refusals: dict[str, tuple[str, str]] = field(default_factory=dict)
    # the account's instance metadata default for tags ("disabled", EC2's own default)
    metadata_tags_default: str = "disabled"
    # region -> group name -> DescribePlacementGroups entry
    placement_groups: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    reservations: EmulatedReservations = field(default_factory=EmulatedReservations)

    def reset(self) -> None:
        """Back to defaults (the public price table, no injected failures, no tokens)."""
        with self._lock:
            self.on_demand = offline_table()
            self.spot_disabled_regions.clear()
            self.insufficient.clear()
            self.capacity_left.clear()
            self._tokens.clear()
            self.fleet_calls.clear()
            self.refused_tokens.clear()
            self.hidden.clear()
            self.new_instance_delay = 0
            self.untaggable.clear()
            self.refusals.clear()
            self.metadata_tags_default = "disabled"
            self.placement_groups.clear()
        self.reservations.reset()

    # -- knobs for tests and scenarios ---------------------------------------------------
    def inject_insufficient_capacity(
        self, capacity_type: str, instance_type: str, zone: str
    ) -> None:
        with self._lock:
            self.insufficient.add(InjectedPool(capacity_type, instance_type, zone))

    def clear_insufficient_capacity(self) -> None:
        with self._lock:
            self.insufficient.clear()
            self.capacity_left.clear()

    def limit_capacity(self, capacity_type: str, instance_type: str, zone: str, count: int) -> None:
        """The pool launches ``count`` more instances, then reports insufficient capacity."""
        with self._lock:
            self.capacity_left[InjectedPool(capacity_type, instance_type, zone)] = count

    def hide_from_describe(self, instance_id: str, reads: int = 1_000_000) -> None:
        """The next ``reads`` DescribeInstances answers (by filter) that would list the
        instance leave it out, as EC2's eventually consistent reads may just after a launch;
        by default until :meth:`reveal`."""
        with self._lock:
            self.hidden[instance_id] = reads

    def delay_new_instances(self, reads: int) -> None:
        """Every instance launched from now on is unknown to its next ``reads`` CreateTags
        calls and to ``reads`` DescribeInstances answers (by filter) that would list it."""
        with self._lock:
            self.new_instance_delay = reads

    def refuse_fleets(self, capacity_type: str, code: str, message: str = "") -> None:
        """Every CreateFleet of ``capacity_type`` answers ``code`` for each override."""
        with self._lock:
            self.refusals[capacity_type] = (code, message or f"emulated refusal: {code}")

    def refuses_tags(self, instance_ids: list[str]) -> str | None:
        """The first id a CreateTags call names that is not known yet (each use counts)."""
        with self._lock:
            for instance_id in instance_ids:
                left = self.untaggable.get(instance_id, 0)
                if left > 0:
                    self.untaggable[instance_id] = left - 1
                    return instance_id
        return None

    def _launched(self, instance_ids: list[str]) -> None:
        with self._lock:
            if self.new_instance_delay <= 0:
                return
            for instance_id in instance_ids:
                self.untaggable[instance_id] = self.new_instance_delay
                self.hidden[instance_id] = self.new_instance_delay

    def reveal(self, instance_id: str) -> None:
        with self._lock:
            self.hidden.pop(instance_id, None)

    def visible(self, reservations: list[Any]) -> list[Any]:
        """``reservations`` without the hidden instances (each one listed uses up a read)."""
        with self._lock:
            if not self.hidden:
                return reservations
            out = []
            for reservation in reservations:
                kept = []
                for instance in reservation.instances:
                    left = self.hidden.get(instance.id, 0)
                    if left <= 0:
                        kept.append(instance)
                        continue
                    self.hidden[instance.id] = left - 1
                if kept:
                    shallow = copy.copy(reservation)  # the stored one keeps all its instances
                    shallow.instances = kept
                    out.append(shallow)
            return out

    # -- prices ----------------------------------------------------------------------------
    def on_demand_price(self, region: str, instance_type: str) -> float | None:
        table = self.on_demand.get(region) or self.on_demand.get(FALLBACK_PRICE_REGION) or {}
        return table.get(instance_type)

    def spot_price(self, region: str, instance_type: str, zone: str) -> float | None:
        if region in self.spot_disabled_regions:
            return None
        od = self.on_demand_price(region, instance_type)
        return None if od is None else default_spot_price(od, instance_type, zone)

    def price(self, region: str, capacity_type: str, instance_type: str, zone: str) -> float:
        p = (
            self.spot_price(region, instance_type, zone)
            if capacity_type == SPOT
            else self.on_demand_price(region, instance_type)
        )
        return float("inf") if p is None else p

    def is_insufficient(self, capacity_type: str, instance_type: str, zone: str) -> bool:
        pool = InjectedPool(capacity_type, instance_type, zone)
        return pool in self.insufficient or self.capacity_left.get(pool) == 0

    # -- CreateFleet -------------------------------------------------------------------------
    def create_fleet(self, response: Any) -> ActionResult:
        """The patched handler body: choose, launch through moto, report errors."""
        began = time.time()
        region = response.region
        backend = response.ec2_backend
        token = response._get_param("ClientToken")
        digest = _parameters_digest(response.querystring)
        with self._lock:
            earlier = self._tokens.get((region, token)) if token else None
        if earlier is not None:
            if earlier[0] != digest:
                with self._lock:
                    self.refused_tokens.append(token)
                raise EC2ClientError(
                    TOKEN_MISMATCH,
                    f"The client token {token} was used by an earlier request "
                    "with different parameters.",
                )
            return ActionResult(earlier[1])
        target = response._get_param("TargetCapacitySpecification", {})
        capacity_type = target.get("DefaultTargetCapacityType") or ON_DEMAND
        configs = response._get_param("LaunchTemplateConfigs", [])
        errors: list[dict[str, Any]] = []
        best: tuple[float, int, dict[str, Any], dict[str, Any]] | None = None
        order = 0
        refusal = self.refusals.get(capacity_type)
        for cfg in configs:
            for override in cfg.get("Overrides") or [{}]:
                itype = str(override.get("InstanceType", ""))
                zone = _override_zone(backend, override)
                reserved = _targeted_reservation(backend, cfg)
                full = reserved is not None and not self.reservations.take(
                    reserved, itype, zone, backend
                )
                refused = (EXCEEDED, _exceeded(str(reserved))) if full else refusal
                if refused is not None or self.is_insufficient(capacity_type, itype, zone):
                    code, message = refused or (ICE, _insufficient(itype, zone))
                    errors.append(_fleet_error(cfg, override, capacity_type, code, message))
                    continue
                candidate = (self.price(region, capacity_type, itype, zone), order, cfg, override)
                order += 1
                if best is None or candidate[:2] < best[:2]:
                    best = candidate
        if best is not None:
            self._check_metadata_tags(backend, best[2], response)
            target = self._take_capacity(capacity_type, best[2], best[3], target, errors, backend)
            target = self._take_reserved(best[2], best[3], target, errors, backend)
        call: dict[str, Any] = {
            "region": region,
            "capacity_type": capacity_type,
            "token": token,
            "errors": len(errors),
            "count": int(target.get("TotalTargetCapacity", 0)) if best else 0,
            "began": began,  # wall clock, and the seconds the answer took once given
        }
        self.fleet_calls.append(call)
        result: dict[str, Any]
        if best is None:
            result = {"FleetId": random_fleet_id(), "Instances": [], "Errors": errors}
        else:
            _, _, cfg, override = best
            fleet = backend.create_fleet(
                on_demand_options=response._get_param("OnDemandOptions", {}),
                spot_options=response._get_param("SpotOptions", {}),
                target_capacity_specification=target,
                launch_template_configs=[
                    {
                        "LaunchTemplateSpecification": cfg["LaunchTemplateSpecification"],
                        "Overrides": [override],
                    }
                ],
                excess_capacity_termination_policy=response._get_param(
                    "ExcessCapacityTerminationPolicy"
                ),
                replace_unhealthy_instances=response._get_param("ReplaceUnhealthyInstances"),
                terminate_instances_with_expiration=True,
                fleet_type=response._get_param("Type", if_none="maintain"),
                valid_from=None,
                valid_until=None,
                tag_specifications=response._get_param("TagSpecifications", []),
            )
            result = {"FleetId": fleet.id, "Instances": fleet.instances or []}
            _tag_with_template(backend, cfg["LaunchTemplateSpecification"], result["Instances"])
            launched = [i for entry in result["Instances"] for i in entry.get("InstanceIds", [])]
            self._launched(launched)
            reserved = _targeted_reservation(backend, cfg)
            if reserved is not None:
                self.reservations.record(reserved, launched)
            if errors:
                result["Errors"] = errors
        if token:
            with self._lock:
                self._tokens[(region, token)] = (digest, result)
        call["seconds"] = time.time() - began
        return ActionResult(result)

    def _check_metadata_tags(self, backend: Any, cfg: Mapping[str, Any], response: Any) -> None:
        """Refuse the launch as EC2 does when IMDS would serve tags whose keys it cannot."""
        if self.metadata_tags_default != "enabled":
            return
        version = backend._get_template_from_args(dict(cfg["LaunchTemplateSpecification"]))
        options = version.data.get("MetadataOptions") or {}
        if options.get("InstanceMetadataTags") == "disabled":
            return
        for spec in response._get_param("TagSpecifications", []):
            if spec.get("ResourceType") != "instance":
                continue
            for tag in spec.get("Tags") or []:
                if "/" in str(tag.get("Key", "")):
                    raise EC2ClientError(
                        "InvalidParameterValue",
                        f"The tag key {tag['Key']} is not valid when instance metadata tags "
                        "are enabled: tag keys in instance metadata cannot contain '/'",
                    )

    def _take_reserved(
        self,
        cfg: Mapping[str, Any],
        override: Mapping[str, Any],
        target: Mapping[str, Any],
        errors: list[dict[str, Any]],
        backend: Any,
    ) -> dict[str, Any]:
        """A targeted launch gets at most the reservation's free places; the rest is refused."""
        reserved = _targeted_reservation(backend, cfg)
        if reserved is None:
            return dict(target)
        zone = _override_zone(backend, override)
        itype = str(override.get("InstanceType", ""))
        left = self.reservations.take(reserved, itype, zone, backend)
        wanted = int(target.get("TotalTargetCapacity", 1))
        if left < wanted:
            errors.append(_fleet_error(cfg, override, ON_DEMAND, EXCEEDED, _exceeded(reserved)))
        return {**target, "TotalTargetCapacity": min(wanted, left)}

    # -- capacity reservations (moto has none) -----------------------------------------------
    def describe_capacity_reservations(self, response: Any) -> ActionResult:
        ids = list(response._get_param("CapacityReservationIds", []))
        filters = {
            str(f["Name"]): [str(v) for v in f.get("Values") or []]
            for f in response._get_param("Filters", [])
        }
        try:
            found = self.reservations.describe(ids, filters, response.ec2_backend)
        except KeyError as exc:
            raise EC2ClientError(
                "InvalidCapacityReservationId.NotFound",
                f"The capacity reservation ID '{exc.args[0]}' does not exist",
            ) from None
        return ActionResult({"CapacityReservations": found})

    def create_capacity_reservation(self, response: Any) -> ActionResult:
        tags: dict[str, str] = {}
        for spec in response._get_param("TagSpecifications", []):
            for tag in spec.get("Tags") or []:
                tags[str(tag["Key"])] = str(tag.get("Value", ""))
        rid = self.reservations.add(
            str(response._get_param("InstanceType")),
            str(response._get_param("AvailabilityZone")),
            int(response._get_param("InstanceCount")),
            str(response._get_param("InstanceMatchCriteria") or "open"),
            tags=tags,
        )
        found = self.reservations.describe([rid], {}, response.ec2_backend)
        return ActionResult({"CapacityReservation": found[0]})

    def _take_capacity(
        self,
        capacity_type: str,
        cfg: Mapping[str, Any],
        override: Mapping[str, Any],
        target: Mapping[str, Any],
        errors: list[dict[str, Any]],
        backend: Any,
    ) -> dict[str, Any]:
        """The target capacity the chosen pool can give; the shortfall as an error."""
        zone = _override_zone(backend, override)
        pool = InjectedPool(capacity_type, str(override.get("InstanceType", "")), zone)
        wanted = int(target.get("TotalTargetCapacity", 1))
        with self._lock:
            left = self.capacity_left.get(pool)
            if left is None:
                return dict(target)
            given = min(wanted, left)
            self.capacity_left[pool] = left - given
        if given < wanted:
            message = _insufficient(pool.instance_type, zone)
            errors.append(_fleet_error(cfg, override, capacity_type, ICE, message))
        return {**target, "TotalTargetCapacity": given}

    # -- DescribeSpotPriceHistory ------------------------------------------------------------
    def describe_spot_price_history(self, response: Any) -> ActionResult:
        region = response.region
        wanted = response._get_param("InstanceTypes", [])
        filters = response._filters_from_querystring()
        offerings = response.ec2_backend.describe_spot_price_history(wanted, filters)
        history = []
        for o in offerings:
            price = self.spot_price(region, o["InstanceType"], o["Location"])
            if price is None:
                continue
            history.append(
                {
                    "InstanceType": o["InstanceType"],
                    "ProductDescription": "Linux/UNIX",
                    "SpotPrice": f"{price:.5f}",
                    "AvailabilityZone": o["Location"],
                    "Timestamp": "2024-11-06T00:00:00.000Z",
                }
            )
        return ActionResult({"SpotPriceHistory": history})

    # -- placement groups ---------------------------------------------------------------------
    def create_placement_group(self, response: Any) -> ActionResult:
        name = str(response._get_param("GroupName"))
        strategy = str(response._get_param("Strategy", "cluster"))
        group: dict[str, Any] = {
            "GroupName": name,
            # a fresh id per creation, as EC2 gives: a group deleted and made again under
            # its name is another group (Karpenter's PlacementGroupDrift)
            "GroupId": "pg-" + uuid.uuid4().hex[:17],
            "State": "available",
            "Strategy": strategy,
            "GroupArn": "",
        }
        if strategy == "partition":
            group["PartitionCount"] = int(response._get_param("PartitionCount", 2))
        if strategy == "spread":
            group["SpreadLevel"] = str(response._get_param("SpreadLevel", "rack"))
        with self._lock:
            mine = self.placement_groups.setdefault(response.region, {})
            if name in mine:
                raise EC2ClientError(
                    "InvalidPlacementGroup.Duplicate",
                    f"The Placement Group '{name}' already exists.",
                )
            mine[name] = group
        return ActionResult({"PlacementGroup": dict(group)})

    def delete_placement_group(self, response: Any) -> ActionResult:
        name = str(response._get_param("GroupName"))
        with self._lock:
            if self.placement_groups.get(response.region, {}).pop(name, None) is None:
                raise EC2ClientError(
                    "InvalidPlacementGroup.Unknown", f"The Placement Group '{name}' is unknown."
                )
        return ActionResult({})

    def placement_group(self, region: str, group_id: str) -> dict[str, Any] | None:
        with self._lock:
            for group in self.placement_groups.get(region, {}).values():
                if group["GroupId"] == group_id:
                    return dict(group)
        return None

    def describe_placement_groups(self, response: Any) -> ActionResult:
        names = list(response._get_param("GroupNames", []))
        ids = list(response._get_param("GroupIds", []))
        filters = response._filters_from_querystring()
        with self._lock:
            groups = list(self.placement_groups.get(response.region, {}).values())
        for wanted, key in ((names, "GroupName"), (ids, "GroupId")):
            unknown = [w for w in wanted if w not in {g[key] for g in groups}]
            if unknown:
                raise EC2ClientError(
                    "InvalidPlacementGroup.Unknown",
                    f"The Placement Group '{unknown[0]}' is unknown.",
                )
            if wanted:
                groups = [g for g in groups if g[key] in wanted]
        states = (filters or {}).get("state")
        if states:
            groups = [g for g in groups if g["State"] in states]
        return ActionResult({"PlacementGroups": [dict(g) for g in groups]})

    # -- GetInstanceMetadataDefaults ----------------------------------------------------------
    def get_instance_metadata_defaults(self, response: Any) -> ActionResult:
        """The account's IMDS defaults: only what the account set (an unset one is absent)."""
        level = {}
        if self.metadata_tags_default == "enabled":
            level["InstanceMetadataTags"] = "enabled"
        return ActionResult({"AccountLevel": level})

    # -- DescribeLaunchTemplates -------------------------------------------------------------
    def describe_launch_templates(self, response: Any) -> ActionResult:
        templates = response.ec2_backend.describe_launch_templates(
            template_names=response._get_param("LaunchTemplateNames", []),
            template_ids=response._get_param("LaunchTemplateIds", []),
            filters=response._filters_from_querystring(),
        )
        start = int(response._get_param("NextToken") or 0)
        size = response._get_int_param("MaxResults")
        end = len(templates) if size is None else start + int(size)
        page: dict[str, Any] = {
            "LaunchTemplates": [
                {
                    "CreateTime": t.create_time,
                    "CreatedBy": f"arn:{response.partition}:iam::{response.current_account}:root",
                    "DefaultVersionNumber": t.default_version_number,
                    "LatestVersionNumber": t.latest_version_number,
                    "LaunchTemplateId": t.id,
                    "LaunchTemplateName": t.name,
                    "Tags": t.tags,
                }
                for t in templates[start:end]
            ]
        }
        if end < len(templates):
            page["NextToken"] = str(end)
        return ActionResult(page)


def _parameters_digest(querystring: Mapping[str, Any]) -> str:
    """What EC2 compares when a client token comes again: every parameter but the token
    (the query's flattened keys, sorted: the request's own order of lists still counts)."""
    kept = sorted((k, list(v)) for k, v in querystring.items() if k not in _NOT_PARAMETERS)
    return hashlib.sha256(repr(kept).encode()).hexdigest()


def _tag_with_template(backend: Any, spec: Mapping[str, Any], launched: list[Any]) -> None:
    """EC2 tags every instance with the template it came from, puts it in the template's
    security groups, gives it the template's instance profile and its primary interface the
    template's IPv6 addresses; moto's CreateFleet does none of these."""
    version = backend._get_template_from_args(dict(spec))
    tags = {
        "aws:ec2launchtemplate:id": version.template.id,
        "aws:ec2launchtemplate:version": str(version.number),
    }
    groups = list(version.data.get("SecurityGroupIds") or [])
    profile = dict(version.data.get("IamInstanceProfile") or {})
    for entry in launched:
        for instance_id in entry.get("InstanceIds", []):
            backend.get_instance(instance_id).add_tags(tags)
            ipv6.apply_template(backend, version.data, instance_id)
            if _installed is not None:
                placement.apply_template(_installed, backend, version.data, instance_id)
            if groups:
                backend.modify_instance_security_groups(instance_id, groups)
            if profile.get("Name") or profile.get("Arn"):
                backend.associate_iam_instance_profile(
                    instance_id,
                    iam_instance_profile_name=profile.get("Name"),
                    iam_instance_profile_arn=profile.get("Arn"),
                )


def _override_zone(backend: Any, override: Mapping[str, Any]) -> str:
    """The zone a fleet override launches in: its own, or its subnet's."""
    zone = str(override.get("AvailabilityZone") or "")
    if not zone and override.get("SubnetId"):
        zone = backend.get_subnet(override["SubnetId"]).availability_zone
    return zone


def _fleet_error(
    cfg: Mapping[str, Any], override: Mapping[str, Any], lifecycle: str, code: str, message: str
) -> dict[str, Any]:
    """One of CreateFleet's ``Errors``: the override EC2 refused, and why."""
    return {
        "LaunchTemplateAndOverrides": {
            "LaunchTemplateSpecification": _clean_spec(cfg.get("LaunchTemplateSpecification", {})),
            "Overrides": _clean_override(override),
        },
        "Lifecycle": lifecycle,
        "ErrorCode": code,
        "ErrorMessage": message,
    }


def _insufficient(instance_type: str, zone: str) -> str:
    return (
        f"We currently do not have sufficient {instance_type} "
        f"capacity in the Availability Zone you requested ({zone})."
    )


def _exceeded(reservation: str) -> str:
    return f"The capacity reservation {reservation} has no available capacity."


def _clean_spec(spec: Mapping[str, Any]) -> dict[str, Any]:
    return {k: spec[k] for k in ("LaunchTemplateId", "LaunchTemplateName", "Version") if k in spec}


def _clean_override(override: Mapping[str, Any]) -> dict[str, Any]:
    return {
        k: override[k] for k in ("InstanceType", "SubnetId", "AvailabilityZone") if k in override
    }


# What makes a resource-id filter value a pattern rather than one id (fnmatch's specials).
_PATTERN = re.compile(r"[*?\[]")


@dataclass(frozen=True, slots=True)
class _NamedTags:
    """The tags of the named resources only, shaped like the TagBackend moto's code reads."""

    tags: dict[str, dict[str, str]]
    VALID_TAG_FILTERS = TagBackend.VALID_TAG_FILTERS


def _describe_tags(self: Any, filters: dict[str, list[str]] | None = None) -> list[dict[str, str]]:
    """moto's describe_tags, over that resource only when the filter names exactly one.

    That is how moto reads one resource's tags (``get_tags``). Every other filter (key,
    value, resource type) is still applied by moto's own code, on the one resource, so the
    answer is the same; several ids or a pattern scan every resource as before.
    """
    original = _originals["tags:describe_tags"]
    ids = (filters or {}).get("resource-id") or []
    if len(ids) != 1 or _PATTERN.search(ids[0]):
        return original(self, filters)
    store = self.tags
    named = {ids[0]: dict(store[ids[0]])} if ids[0] in store else {}
    return original(_NamedTags(named), filters)


# What makes a filter value a pattern in moto's filters (fnmatch's specials, its escape).
_FILTER_PATTERN = re.compile(r"[*?\[\\]")


def _exact_tag_filters(
    filters: Mapping[str, Any] | None,
) -> tuple[dict[str, set[str]], list[set[str]]]:
    """The ``tag:KEY`` filters whose values are all plain strings, as KEY: values, and the
    ``tag-key`` filters of plain keys, as sets of keys (an instance must carry one of each)."""
    exact: dict[str, set[str]] = {}
    keyed: list[set[str]] = []
    for name, values in (filters or {}).items():
        plain = not any(_FILTER_PATTERN.search(str(v)) for v in values or ())
        if not values or not plain:
            continue
        if name.startswith("tag:"):
            exact[name[4:]] = {str(v) for v in values}
        elif name == "tag-key":
            keyed.append({str(v) for v in values})
    return exact, keyed


def _all_reservations(self: Any, filters: Any = None) -> list[Any]:
    """moto's all_reservations, over the instances carrying the exactly filtered tags only.

    The tag store (resource id to tags) is read once; moto's own filters then run on those
    instances alone, so every other filter still applies as moto applies it.
    """
    exact, keyed = _exact_tag_filters(filters)
    if not exact and not keyed:
        return list(_originals["instances:all_reservations"](self, filters))
    store = dict(self.tags)  # one copy, as moto's scans take one (other threads add tags)
    ids = {
        rid
        for rid, tags in store.items()
        if rid.startswith("i-")
        and all(tags.get(k) in v for k, v in exact.items())
        and all(not keys.isdisjoint(tags) for keys in keyed)
    }
    narrowed = []
    for reservation in self.reservations.copy().values():
        kept = [i for i in reservation.instances if i.id in ids]
        if kept:
            shallow = copy.copy(reservation)  # as moto's own copies: the stored one keeps all
            shallow.instances = kept
            narrowed.append(shallow)
    return list(filter_reservations(narrowed, filters))


_installed: Emulation | None = None
_originals: dict[str, Any] = {}


# EC2 actions the emulation answers instead of moto, each by its method of the same name.
_FORWARDED = (
    "create_fleet",
    "describe_spot_price_history",
    "describe_launch_templates",
    "get_instance_metadata_defaults",
    "create_placement_group",
    "describe_placement_groups",
    "delete_placement_group",
    "describe_capacity_reservations",
    "create_capacity_reservation",
)


def _forward(action: str) -> Callable[[Any], ActionResult]:
    """An ``EC2Response`` handler for ``action`` that the emulation installed when the request
    comes in answers."""

    def handler(self: Any) -> ActionResult:
        assert _installed is not None
        answer: ActionResult = getattr(_installed, action)(self)
        return answer

    handler.__name__ = handler.__qualname__ = action
    return handler


def install(emulation: Emulation | None = None) -> Emulation:
    """Patch moto's EC2 handlers to delegate to ``emulation`` (idempotent; returns it)."""
    global _installed
    emu = emulation or _installed or Emulation()
    if not _originals:
        for action in _FORWARDED:
            _originals[action] = EC2Response.__dict__.get(action)
            setattr(EC2Response, action, _forward(action))
        _originals["create_tags"] = EC2Response.__dict__.get("create_tags")
        inherited_create_tags = EC2Response.create_tags

        def create_tags(self: Any) -> ActionResult:
            assert _installed is not None
            unknown = _installed.refuses_tags(list(self._get_param("Resources", [])))
            if unknown is not None:
                raise EC2ClientError(
                    "InvalidInstanceID.NotFound", f"The instance ID '{unknown}' does not exist"
                )
            return inherited_create_tags(self)

        EC2Response.create_tags = create_tags  # type: ignore[method-assign]
        _originals["iam:remove_role_from_instance_profile"] = (
            IAMBackend.remove_role_from_instance_profile
        )
        IAMBackend.remove_role_from_instance_profile = _remove_role  # type: ignore[method-assign]
        _originals["tags:describe_tags"] = TagBackend.describe_tags
        TagBackend.describe_tags = _describe_tags  # type: ignore[method-assign]
        _originals["instances:all_reservations"] = InstanceBackend.all_reservations
        InstanceBackend.all_reservations = _all_reservations  # type: ignore[method-assign]
        _originals["instances:describe_instances"] = InstanceBackend.describe_instances
        InstanceBackend.describe_instances = _describe_instances  # type: ignore[method-assign]
    static_answers.install()
    partition_regions.install()
    partition_guard.install()
    ipv6.install()
    _installed = emu
    return emu


def _targeted_reservation(backend: Any, cfg: Mapping[str, Any]) -> str | None:
    """The reservation a fleet config's launch template targets, if any."""
    version = backend._get_template_from_args(dict(cfg["LaunchTemplateSpecification"]))
    spec = version.data.get("CapacityReservationSpecification") or {}
    target = spec.get("CapacityReservationTarget") or {}
    rid = target.get("CapacityReservationId")
    return str(rid) if rid else None


def _describe_instances(self: Any, filters: Any = None) -> list[Any]:
    """DescribeInstances by filter, less the instances the emulation hides for now."""
    found = list(_originals["instances:describe_instances"](self, filters))
    return _installed.visible(found) if _installed is not None else found


def _remove_role(self: Any, profile_name: str, role_name: str) -> None:
    """IAM answers NoSuchEntity for a role the profile does not hold; moto fails with a 500."""
    profile = self.get_instance_profile(profile_name)
    if not any(r.name == role_name for r in profile.roles):
        raise NoSuchEntity(f"role {role_name} is not in instance profile {profile_name}")
    _originals["iam:remove_role_from_instance_profile"](self, profile_name, role_name)


def uninstall() -> None:
    """Restore moto's own handlers."""
    global _installed
    for name, original in _originals.items():
        if name.startswith("iam:"):
            setattr(IAMBackend, name.removeprefix("iam:"), original)
        elif name.startswith("tags:"):
            setattr(TagBackend, name.removeprefix("tags:"), original)
        elif name.startswith("instances:"):
            setattr(InstanceBackend, name.removeprefix("instances:"), original)
        elif original is None:
            delattr(EC2Response, name)
        else:
            setattr(EC2Response, name, original)
    _originals.clear()
    static_answers.uninstall()
    partition_regions.uninstall()
    partition_guard.uninstall()
    ipv6.uninstall()
    _installed = None
