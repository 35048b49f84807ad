"""Resolve an EC2NodeClass to concrete subnets, security groups and AMIs, and say why not.

The result doubles as the NodeClass ``status``: each selector gets a condition, and Ready is
False with the first failing reason, so a NodeClass that matches nothing is visible in
``kubectl get ec2nodeclass`` instead of failing launches one by one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from activities.ec2.amis import AMIResolver, ResolvedAMI
from activities.ec2.capacity_reservations import (
    CapacityReservation,
    ReservationAvailability,
    list_reservations,
)
from activities.ec2.errors import EC2Error, NodeClassNotReady
from activities.ec2.instance_profiles import InstanceProfiles
from activities.ec2.placement_groups import PlacementGroup, describe, resolve_placement_group
from activities.ec2.securitygroups import SecurityGroup, resolve_security_groups
from activities.ec2.selectors import describe_term
from activities.ec2.subnets import Subnet, resolve_subnets
from models.ec2nodeclass import EC2NodeClass, EC2NodeClassStatus
from models.nodeclaim import Condition

SUBNETS_READY = "SubnetsReady"
SECURITY_GROUPS_READY = "SecurityGroupsReady"
AMIS_READY = "AMIsReady"
INSTANCE_PROFILE_READY = "InstanceProfileReady"
PLACEMENT_GROUP_READY = "PlacementGroupReady"
CAPACITY_RESERVATIONS_READY = "CapacityReservationsReady"
READY = "Ready"


@dataclass
class ResolvedNodeClass:
    name: str
    subnets: list[Subnet] = field(default_factory=list)
    security_groups: list[SecurityGroup] = field(default_factory=list)
    amis: list[ResolvedAMI] = field(default_factory=list)
    capacity_reservations: list[CapacityReservation] = field(default_factory=list)
    instance_profile: str | None = None
    conditions: list[Condition] = field(default_factory=list)
    placement_group: PlacementGroup | None = None

    @property
    def ready(self) -> bool:
        return all(c.status == "True" for c in self.conditions if c.type == READY)

    def not_ready_reason(self) -> Condition | None:
        return next((c for c in self.conditions if c.type == READY and c.status != "True"), None)

    def require_ready(self) -> None:
        cond = self.not_ready_reason()
        if cond is not None:
            raise NodeClassNotReady(f"EC2NodeClass {self.name}: {cond.message}", cond.reason)

    def status(self) -> EC2NodeClassStatus:
        return EC2NodeClassStatus(
            subnets=[s.to_status() for s in self.subnets],
            security_groups=[g.to_status() for g in self.security_groups],
            amis=[a.to_status() for a in self.amis],
            capacity_reservations=[r.to_status() for r in self.capacity_reservations] or None,
            instance_profile=self.instance_profile,
            conditions=self.conditions,
        )


def _condition(type_: str, ok: bool, reason: str, message: str, now: str) -> Condition:
    return Condition(
        type=type_,
        status="True" if ok else "False",
        reason=type_ if ok else reason,
        message="" if ok else message,
        last_transition_time=now,
    )


def _terms(terms: list[Any]) -> str:
    return ", ".join(describe_term(t) for t in terms)


class NodeClassResolver:
    def __init__(
        self,
        ec2: Any,
        ssm: Any,
        kubernetes_version: Callable[[], str],
        profiles: InstanceProfiles | None = None,
        availability: ReservationAvailability | None = None,
    ) -> None:
        """Without ``profiles`` (the offline catalog), the profile is taken as named.
        ``availability`` learns each resolved reservation's free count."""
        self._profiles = profiles
        self._availability = availability
        self._ec2 = ec2
        self._version = kubernetes_version
        self._amis = AMIResolver(ec2, ssm, kubernetes_version)

    def resolve(self, nodeclass: EC2NodeClass) -> ResolvedNodeClass:
        """Never raises for bad selectors or for AWS refusals another try will not change
        (access denied...): those become the condition's message. Failures a retry may fix
        (throttling, 5xx, timeouts that outlived boto3's retries) propagate, typed."""
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        spec = nodeclass.spec
        out = ResolvedNodeClass(nodeclass.name)
        subnet_problem = sg_problem = ""
        try:
            out.subnets = resolve_subnets(self._ec2, spec.subnet_selector_terms)
        except EC2Error as exc:
            if exc.retryable:
                raise
            subnet_problem = f"subnetSelectorTerms: {exc}"
        try:
            out.security_groups = resolve_security_groups(
                self._ec2, spec.security_group_selector_terms
            )
        except EC2Error as exc:
            if exc.retryable:
                raise
            sg_problem = f"securityGroupSelectorTerms: {exc}"
        ami_problem = ""
        try:
            out.amis = self._amis.resolve(spec.ami_selector_terms)
        except NodeClassNotReady as exc:
            ami_problem = str(exc)
        except EC2Error as exc:
            if exc.retryable:
                raise
            ami_problem = f"amiSelectorTerms: {exc}"
        if not out.amis and not ami_problem:
            ami_problem = f"amiSelectorTerms matched no AMIs: {_terms(spec.ami_selector_terms)}"
            if any(t.alias for t in spec.ami_selector_terms):
                ami_problem += f" (none published for Kubernetes {self._version()})"
        checks = [
            (
                SUBNETS_READY,
                bool(out.subnets),
                "SubnetsNotFound",
                subnet_problem
                or f"subnetSelectorTerms matched no subnets: {_terms(spec.subnet_selector_terms)}",
            ),
            (
                SECURITY_GROUPS_READY,
                bool(out.security_groups),
                "SecurityGroupsNotFound",
                sg_problem
                or "securityGroupSelectorTerms matched no security groups: "
                f"{_terms(spec.security_group_selector_terms)}",
            ),
            (AMIS_READY, not ami_problem, "AMINotFound", ami_problem),
            self._instance_profile(nodeclass, out),
            self._placement_group(nodeclass, out),
        ]
        if spec.capacity_reservation_selector_terms:
            checks.append(self._capacity_reservations(nodeclass, out))
        out.conditions = [_condition(t, ok, r, m, now) for t, ok, r, m in checks]
        failed = [c for c in out.conditions if c.status != "True"]
        ready_message = "; ".join(c.message for c in failed)
        out.conditions.append(
            _condition(READY, not failed, failed[0].reason if failed else "", ready_message, now)
        )
        return out

    def _placement_group(
        self, nodeclass: EC2NodeClass, out: ResolvedNodeClass
    ) -> tuple[str, bool, str, str]:
        """True without a selector, as Karpenter reports it; False when none is found."""
        selector = nodeclass.spec.placement_group_selector
        if selector is None:
            return (PLACEMENT_GROUP_READY, True, "", "")
        try:
            out.placement_group = resolve_placement_group(self._ec2, selector)
        except EC2Error as exc:
            if exc.retryable:
                raise
            why = f"placementGroupSelector: {exc}"
            return (PLACEMENT_GROUP_READY, False, "PlacementGroupResolutionFailed", why)
        if out.placement_group is None:
            why = f"Placement group {describe(selector)!r} not found"
            return (PLACEMENT_GROUP_READY, False, "PlacementGroupNotFound", why)
        return (PLACEMENT_GROUP_READY, True, "", "")

    def _capacity_reservations(
        self, nodeclass: EC2NodeClass, out: ResolvedNodeClass
    ) -> tuple[str, bool, str, str]:
        """Karpenter's condition is True whether or not any reservation matched (finding none
        is not an error: the pool falls back to on-demand); only a refused call fails it."""
        try:
            out.capacity_reservations = list_reservations(
                self._ec2, nodeclass.spec.capacity_reservation_selector_terms
            )
        except EC2Error as exc:
            if exc.retryable:
                raise
            return (
                CAPACITY_RESERVATIONS_READY,
                False,
                "CapacityReservationError",
                f"capacityReservationSelectorTerms: {exc}",
            )
        if self._availability is not None:
            self._availability.sync(out.capacity_reservations)
        return (CAPACITY_RESERVATIONS_READY, True, "", "")

    def _instance_profile(
        self, nodeclass: EC2NodeClass, out: ResolvedNodeClass
    ) -> tuple[str, bool, str, str]:
        if self._profiles is None:
            out.instance_profile = nodeclass.spec.instance_profile
            return (INSTANCE_PROFILE_READY, True, "", "")
        try:
            state = self._profiles.ensure(nodeclass)
        except EC2Error as exc:
            if exc.retryable:
                raise
            return (INSTANCE_PROFILE_READY, False, "InstanceProfileError", f"IAM: {exc}")
        out.instance_profile = state.name
        return (INSTANCE_PROFILE_READY, state.ready, state.reason, state.message)
