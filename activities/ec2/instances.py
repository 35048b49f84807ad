"""Instances Joinery owns: find by NodeClaim tag, get, list for garbage collection, terminate.

Ownership is by tags (cluster, NodePool, NodeClaim), never by remembering ids, so a worker
that restarts mid-launch can still find what it created.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from activities.ec2.errors import InstanceNotFound, aws_errors
from activities.ec2.launch_types import provider_id
from models import labels as L

TAG_NODEPOOL = L.NODEPOOL
TAG_NODECLAIM = "karpenter.sh/nodeclaim"
TAG_NODECLASS = "karpenter.k8s.aws/ec2nodeclass"
TAG_EKS_CLUSTER = "eks:eks-cluster-name"
ACTIVE_STATES = ("pending", "running", "stopping", "stopped")
GONE_STATES = ("shutting-down", "terminated")


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

    @property
    def provider_id(self) -> str:
        return provider_id(self.zone, self.id)

    @property
    def nodeclaim(self) -> str | None:
        return self.tags.get(TAG_NODECLAIM)

    @staticmethod
    def from_api(raw: dict[str, Any]) -> Instance:
        return Instance(
            id=raw["InstanceId"],
            instance_type=raw.get("InstanceType", ""),
            zone=raw.get("Placement", {}).get("AvailabilityZone", ""),
            capacity_type=L.CAPACITY_TYPE_SPOT
            if raw.get("InstanceLifecycle") == "spot"
            else L.CAPACITY_TYPE_ON_DEMAND,
            state=raw.get("State", {}).get("Name", ""),
            image_id=raw.get("ImageId", ""),
            launch_time=raw.get("LaunchTime"),
            tags={t["Key"]: t["Value"] for t in raw.get("Tags", [])},
            subnet_id=raw.get("SubnetId", ""),
        )


class InstanceProvider:
    def __init__(self, ec2: Any, cluster_name: str) -> None:
        self._ec2 = ec2
        self._cluster = cluster_name

    def _describe(self, **kwargs: Any) -> list[Instance]:
        out: list[Instance] = []
        with aws_errors("DescribeInstances"):
            for page in self._ec2.get_paginator("describe_instances").paginate(**kwargs):
                for reservation in page.get("Reservations", []):
                    out.extend(Instance.from_api(i) for i in reservation.get("Instances", []))
        return out

    def _owned(self, extra: Iterable[dict[str, Any]] = ()) -> list[dict[str, Any]]:
        return [
            {"Name": f"tag:{cluster_tag(self._cluster)}", "Values": ["owned"]},
            {"Name": "instance-state-name", "Values": list(ACTIVE_STATES)},
            *extra,
        ]

    def find_by_nodeclaim(self, nodeclaim_name: str) -> Instance | None:
        """The live instance already launched for this NodeClaim, if any (launch idempotency)."""
        found = self._describe(
            Filters=self._owned([{"Name": f"tag:{TAG_NODECLAIM}", "Values": [nodeclaim_name]}])
        )
        found.sort(key=lambda i: (i.launch_time or datetime.min.replace(tzinfo=UTC), i.id))
        return found[0] if found else None

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
        recording the instance, so a launch in flight is never collected.
        """
        known = set(known_nodeclaims)
        cutoff = (now or datetime.now(UTC)) - grace
        return [
            i
            for i in self.list_owned()
            if i.nodeclaim not in known and (i.launch_time is None or i.launch_time <= cutoff)
        ]

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
