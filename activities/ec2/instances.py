"""Instances Joinery owns: find by NodeClaim tag, get, list for garbage collection, terminate.

Ownership is by tags (cluster, NodePool, NodeClaim), never by remembering ids, so a worker
that restarts mid-launch can still find what it created: by the claim's tag, or, for an
instance of a batched launch not yet tagged with its claim, by its member tag and the
batch's pairing rule (:mod:`activities.ec2.launch_batches`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from activities.ec2.errors import InstanceNotFound, TransientError, aws_errors
from activities.ec2.launch_batches import member_tag, members_of, recover
from activities.ec2.launch_types import provider_id
from models import labels as L
from models.nodeclaim import LAUNCH_TTL

TAG_NODEPOOL = L.NODEPOOL
TAG_NODECLAIM = "karpenter.sh/nodeclaim"
TAG_NODECLASS = "karpenter.k8s.aws/ec2nodeclass"
TAG_EKS_CLUSTER = "eks:eks-cluster-name"
ACTIVE_STATES = ("pending", "running", "stopping", "stopped")
GONE_STATES = ("shutting-down", "terminated")
# Pauses before each new try of CreateTags on an instance EC2 does not know yet (about 6 s
# in all): EC2's reads and CreateTags are eventually consistent just after a launch.
NEW_INSTANCE_TAG_BACKOFF = (0.2, 0.4, 0.8, 1.6, 3.2)
# Values in one DescribeInstances filter (EC2 takes up to 200).
LOOKUP_CHUNK = 100
# How long an untagged instance of a batched launch is kept for a member claim that may still
# pair with it: a launch's whole time to live and a minute more.
BATCH_RECOVERY_GRACE = LAUNCH_TTL + timedelta(minutes=1)


def cluster_tag(cluster_name: str) -> str:
    return f"kubernetes.io/cluster/{cluster_name}"


@dataclass(frozen=True)
class Instance:
    id: str
    instance_type: str
    zone: str
    capacity_type: str
    state: str
    image_id: str
    launch_time: datetime | None
    tags: dict[str, str] = field(default_factory=dict)
    subnet_id: str = ""
    security_group_ids: tuple[str, ...] = ()
    instance_profile: str = ""  # its name (the ARN's last part), "" without one
    # a reserved instance's reservation and its type (default | capacity-block)
    capacity_reservation_id: str = ""
    capacity_reservation_type: str = ""
    # the partition of a partition placement group EC2 put it in (0: none, or not said yet)
    partition: int = 0

    @property
    def provider_id(self) -> str:
        return provider_id(self.zone, self.id)

    @property
    def nodeclaim(self) -> str | None:
        return self.tags.get(TAG_NODECLAIM)

    @staticmethod
    def from_api(raw: dict[str, Any]) -> Instance:
        lifecycle = raw.get("InstanceLifecycle")
        # as Karpenter reads it: in a reservation it was launched targeted at (an instance
        # that only found room in an open ODCR stays on-demand)
        preference = (raw.get("CapacityReservationSpecification") or {}).get(
            "CapacityReservationPreference"
        )
        reservation = str(raw.get("CapacityReservationId") or "")
        reserved = bool(reservation) and preference == "capacity-reservations-only"
        if lifecycle == "spot":
            capacity_type = L.CAPACITY_TYPE_SPOT
        elif reserved:
            capacity_type = L.CAPACITY_TYPE_RESERVED
        else:
            capacity_type = L.CAPACITY_TYPE_ON_DEMAND
        return Instance(
            id=raw["InstanceId"],
            instance_type=raw.get("InstanceType", ""),
            zone=raw.get("Placement", {}).get("AvailabilityZone", ""),
            capacity_type=capacity_type,
            state=raw.get("State", {}).get("Name", ""),
            image_id=raw.get("ImageId", ""),
            launch_time=raw.get("LaunchTime"),
            tags={t["Key"]: t["Value"] for t in raw.get("Tags", [])},
            subnet_id=raw.get("SubnetId", ""),
            security_group_ids=tuple(
                sorted(g["GroupId"] for g in raw.get("SecurityGroups") or [] if g.get("GroupId"))
            ),
            instance_profile=str((raw.get("IamInstanceProfile") or {}).get("Arn", "")).rsplit(
                "/", 1
            )[-1],
            capacity_reservation_id=reservation if reserved else "",
            partition=int((raw.get("Placement") or {}).get("PartitionNumber") or 0),
            capacity_reservation_type=(
                ("capacity-block" if lifecycle == "capacity-block" else "default")
                if reserved
                else ""
            ),
        )


class InstanceProvider:
    def __init__(
        self, ec2: Any, cluster_name: str, sleep: Callable[[float], None] = time.sleep
    ) -> None:
        self._ec2 = ec2
        self._cluster = cluster_name
        self._sleep = sleep

    def _describe(self, **kwargs: Any) -> list[Instance]:
        out: list[Instance] = []
        with aws_errors("DescribeInstances"):
            for page in self._ec2.get_paginator("describe_instances").paginate(**kwargs):
                for reservation in page.get("Reservations", []):
                    out.extend(Instance.from_api(i) for i in reservation.get("Instances", []))
        return out

    def _owned(
        self, extra: Iterable[dict[str, Any]] = (), *, live: bool = True
    ) -> list[dict[str, Any]]:
        states = [{"Name": "instance-state-name", "Values": list(ACTIVE_STATES)}] if live else []
        return [
            {"Name": f"tag:{cluster_tag(self._cluster)}", "Values": ["owned"]},
            *states,
            *extra,
        ]

    def find_by_nodeclaim(self, nodeclaim_name: str) -> Instance | None:
        """The live instance already launched for this NodeClaim, if any (launch idempotency)."""
        return self.find_by_nodeclaims([nodeclaim_name]).get(nodeclaim_name)

    def find_by_nodeclaims(self, names: Iterable[str]) -> dict[str, Instance]:
        """Each NodeClaim's live instance, for those that have one: tagged with the claim,
        or paired with it by a batched launch the claim's tag never reached."""
        wanted = sorted(set(names))
        found: dict[str, Instance] = {}
        for chunk in _chunks(wanted):
            tagged = self._describe(
                Filters=self._owned([{"Name": f"tag:{TAG_NODECLAIM}", "Values": chunk}])
            )
            for instance in sorted(tagged, key=_launch_order):
                found.setdefault(instance.tags[TAG_NODECLAIM], instance)
        missing = [n for n in wanted if n not in found]
        for chunk in _chunks(missing):
            keys = [member_tag(n) for n in chunk]
            batched = self._describe(
                Filters=self._owned([{"Name": "tag-key", "Values": keys}], live=False)
            )
            by_id = {i.id: i for i in batched}
            pairs = [(i.id, i.tags) for i in batched]
            for name in chunk:
                live = [
                    by_id[i]
                    for i in recover(name, pairs)
                    if by_id[i].state in ACTIVE_STATES and by_id[i].nodeclaim in (None, name)
                ]
                if live:
                    found[name] = min(live, key=_launch_order)
        return found

    def gone_for(self, nodeclaim_name: str) -> Instance | None:
        """An instance tagged with the NodeClaim that is terminated or terminating, if any:
        what an earlier launch of the claim made and something has ended since."""
        gone = self._describe(
            Filters=self._owned(
                [
                    {"Name": f"tag:{TAG_NODECLAIM}", "Values": [nodeclaim_name]},
                    {"Name": "instance-state-name", "Values": list(GONE_STATES)},
                ],
                live=False,
            )
        )
        return min(gone, key=_launch_order) if gone else None

    def any_owned(self, instance_ids: Sequence[str]) -> bool:
        """Whether any of these instances is this cluster's (in any state): an interruption
        about one deserves a retry until its NodeClaim is known; about another, none."""
        if not instance_ids:
            return False
        found = self._describe(
            Filters=self._owned([{"Name": "instance-id", "Values": list(instance_ids)}], live=False)
        )
        return bool(found)

    def tag(self, instance_id: str, tags: dict[str, str]) -> None:
        """Add ``tags`` to the instance (CreateTags: existing keys get the new values)."""
        with aws_errors("CreateTags"):
            self._ec2.create_tags(
                Resources=[instance_id], Tags=[{"Key": k, "Value": v} for k, v in tags.items()]
            )

    def tag_new(self, instance_id: str, tags: dict[str, str]) -> None:
        """Tag an instance CreateFleet has just named. EC2 may not know it yet for a few
        seconds (``InvalidInstanceID.NotFound``, eventual consistency): that answer is waited
        out here, and if it lasts, raised as retryable, since the instance exists and the
        retried launch finds it by its member tag. Never "not found", which would end the
        claim and leave a running instance to garbage collection."""
        for pause in (*NEW_INSTANCE_TAG_BACKOFF, None):
            try:
                self.tag(instance_id, tags)
                return
            except InstanceNotFound as exc:
                if pause is None:
                    raise TransientError(
                        f"{exc} (just launched: EC2 does not list it yet)", exc.code
                    ) from exc
                self._sleep(pause)

    def get(self, instance_id: str) -> Instance:
        """Raises InstanceNotFound for a missing or terminated instance."""
        found = self._describe(InstanceIds=[instance_id])
        if not found or found[0].state in GONE_STATES:
            raise InstanceNotFound(f"instance {instance_id} not found or terminated")
        return found[0]

    def list_owned(self, nodepool: str | None = None) -> list[Instance]:
        """Live instances this cluster's Joinery launched (tagged with a NodePool)."""
        extra = [
            {"Name": f"tag:{TAG_NODEPOOL}", "Values": [nodepool]}
            if nodepool
            else {"Name": "tag-key", "Values": [TAG_NODEPOOL]}
        ]
        return sorted(self._describe(Filters=self._owned(extra)), key=lambda i: i.id)

    def leaked(
        self,
        known_nodeclaims: Iterable[str],
        now: datetime | None = None,
        grace: timedelta = timedelta(seconds=30),
    ) -> list[Instance]:
        """Owned instances whose NodeClaim no longer exists, past a grace period.

        The grace period covers the window between CreateFleet returning and the NodeClaim
        recording the instance, so a launch in flight is never collected. An instance of a
        batched launch not yet tagged with its claim, while a member of its batch exists
        without an instance, waits BATCH_RECOVERY_GRACE instead: that member's retried
        launch (a worker died before the tags) may still pair with it while launches run.
        """
        known = set(known_nodeclaims)
        owned = self.list_owned()
        settled = {i.nodeclaim for i in owned if i.nodeclaim}
        members = {member_tag(n) for n in known - settled}  # claims still without an instance
        at = now or datetime.now(UTC)
        out: list[Instance] = []
        for i in owned:
            if i.nodeclaim in known:
                continue
            waits = grace
            if i.nodeclaim is None and not members.isdisjoint(members_of(i.tags)):
                waits = max(grace, BATCH_RECOVERY_GRACE)
            if i.launch_time is None or i.launch_time <= at - waits:
                out.append(i)
        return out

    def terminate(self, instance_id: str) -> bool:
        """Start termination; True when the instance was already gone (idempotent delete)."""
        try:
            current = self.get(instance_id)
        except InstanceNotFound:
            return True
        if current.state in GONE_STATES:
            return True
        try:
            with aws_errors("TerminateInstances"):
                self._ec2.terminate_instances(InstanceIds=[instance_id])
        except InstanceNotFound:
            return True
        return False


def _launch_order(instance: Instance) -> tuple[datetime, str]:
    return (instance.launch_time or datetime.min.replace(tzinfo=UTC), instance.id)


def _chunks(names: list[str]) -> list[list[str]]:
    return [names[i : i + LOOKUP_CHUNK] for i in range(0, len(names), LOOKUP_CHUNK)]
