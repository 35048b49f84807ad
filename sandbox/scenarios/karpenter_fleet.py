"""A fleet exactly as Karpenter v1.14 leaves it: EC2 instances, NodeClaims and Nodes.

The ``migration`` scenario stages these while no Joinery worker runs, as a cluster looks the
moment Karpenter is scaled to zero: instances tagged as Karpenter's launch and tagging
controller tag them; NodeClaims with Karpenter's labels, its hash annotations (the NodePool
hash is Karpenter's own value, ``models.karpenter_hash``; the EC2NodeClass hash carries
Karpenter's version ``v6``), the ``karpenter.sh/termination`` finalizer, the NodePool as
owner, and a status that is Launched, Registered, Initialized and Ready; Nodes registered
and initialized, carrying the claim's labels and annotations, owned by their claim.

Karpenter's EC2NodeClass hash is not computed here (Joinery re-stamps any foreign version of
it), so its value is a stand-in; every other field is what Karpenter writes.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from models import karpenter_hash
from models import labels as L

Obj = dict[str, Any]
KARPENTER_NODECLASS_HASH_VERSION = "v6"
# A value in the form Karpenter writes (a decimal uint64); see the module docstring.
NODECLASS_HASH_STAND_IN = "10845377226466327457"
# What an m5.large registers with on EKS (AL2023, VPC CNI default max pods).
CAPACITY = {"cpu": "2", "memory": "7910348Ki", "pods": "29", "ephemeral-storage": "20959212Ki"}
ALLOCATABLE = {
    "cpu": "1930m",
    "memory": "7220172Ki",
    "pods": "29",
    "ephemeral-storage": "18242267924",
}
INSTANCE_LABELS = {
    "karpenter.k8s.aws/instance-category": "m",
    "karpenter.k8s.aws/instance-family": "m5",
    "karpenter.k8s.aws/instance-generation": "5",
    "karpenter.k8s.aws/instance-size": "large",
    "karpenter.k8s.aws/instance-cpu": "2",
    "karpenter.k8s.aws/instance-memory": "8192",
    "karpenter.k8s.aws/instance-hypervisor": "nitro",
}
CONDITIONS = ("Launched", "Registered", "Initialized", "Ready")


def node_labels(instance_type: str) -> dict[str, str]:
    """The well-known labels an m5.large offers (what AMI requirements are matched against)."""
    return {
        **INSTANCE_LABELS,
        L.INSTANCE_TYPE: instance_type,
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/os": "linux",
    }


def _admits(requirement: Obj, labels: dict[str, str]) -> bool:
    key, op = requirement.get("key"), requirement.get("operator")
    values = requirement.get("values") or []
    present = key in labels
    if op == "In":
        return present and labels[str(key)] in values
    if op == "NotIn":
        return not present or labels[str(key)] not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    return True


def ami_for(amis: list[Obj], instance_type: str) -> str:
    """The AMI Karpenter launches the type with: the first of the class's resolved AMIs
    (newest first) whose requirements the type's labels meet."""
    labels = node_labels(instance_type)
    for ami in amis:
        if all(_admits(r, labels) for r in ami.get("requirements") or []):
            return str(ami["id"])
    raise ValueError(f"no AMI of the class suits {instance_type}")


def claim_name(pool: str, rng: random.Random) -> str:
    """Karpenter's generated name: the pool's, a dash and five random characters."""
    return f"{pool}-{''.join(rng.choice(string.ascii_lowercase + string.digits) for _ in range(5))}"


@dataclass(frozen=True)
class Placement:
    """Where and what Karpenter launched one claim on."""

    claim: str
    instance_id: str
    zone: str
    instance_type: str
    image_id: str

    @property
    def provider_id(self) -> str:
        return f"aws:///{self.zone}/{self.instance_id}"

    @property
    def node_name(self) -> str:
        # EKS resource-based naming (the sandbox's kubelets name nodes the same way).
        return self.instance_id


def instance_tags(cluster: str, pool: str, nodeclass: str, claim: str, node: str) -> dict[str, str]:
    """Karpenter's static launch tags plus those its tagging controller adds once the node
    registered (Name, karpenter.sh/nodeclaim, eks:eks-cluster-name)."""
    return {
        f"kubernetes.io/cluster/{cluster}": "owned",
        L.NODEPOOL: pool,
        "eks:eks-cluster-name": cluster,
        "karpenter.k8s.aws/ec2nodeclass": nodeclass,
        L.NODECLAIM: claim,
        "Name": node,
    }


def _labels(pool_obj: Obj, nodeclass: str, at: Placement) -> dict[str, str]:
    template_labels = ((pool_obj["spec"]["template"].get("metadata") or {}).get("labels")) or {}
    return {
        **template_labels,
        L.NODEPOOL: pool_obj["metadata"]["name"],
        L.INSTANCE_TYPE: at.instance_type,
        L.ZONE: at.zone,
        L.CAPACITY_TYPE: "on-demand",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/os": "linux",
        "karpenter.k8s.aws/ec2nodeclass": nodeclass,
        **INSTANCE_LABELS,
    }


def hash_annotations(pool_obj: Obj, *, template: Obj | None = None) -> dict[str, str]:
    """The hash annotations Karpenter stamps: its hash of ``template`` (the pool's own now,
    unless an older one is given)."""
    return {
        "karpenter.sh/nodepool-hash": karpenter_hash.nodepool_hash(
            template if template is not None else pool_obj["spec"]["template"]
        ),
        "karpenter.sh/nodepool-hash-version": karpenter_hash.HASH_VERSION,
        "karpenter.k8s.aws/ec2nodeclass-hash": NODECLASS_HASH_STAND_IN,
        "karpenter.k8s.aws/ec2nodeclass-hash-version": KARPENTER_NODECLASS_HASH_VERSION,
        "karpenter.k8s.aws/tagged": "true",
    }


def nodeclaim(pool_obj: Obj, nodeclass: str, at: Placement, notes: dict[str, str]) -> Obj:
    """The NodeClaim Karpenter created (``notes``: its annotations); status apart."""
    tspec = pool_obj["spec"]["template"]["spec"]
    pool = pool_obj["metadata"]["name"]
    spec: Obj = {
        "nodeClassRef": dict(tspec["nodeClassRef"]),
        "requirements": [
            *tspec.get("requirements", []),
            {"key": L.NODEPOOL, "operator": "In", "values": [pool]},
            {"key": L.INSTANCE_TYPE, "operator": "In", "values": [at.instance_type]},
        ],
        "resources": {"requests": {"cpu": "500m", "memory": "512Mi", "pods": "1"}},
        "expireAfter": tspec.get("expireAfter", "720h"),
    }
    for key in ("taints", "startupTaints", "terminationGracePeriod"):
        if tspec.get(key):
            spec[key] = tspec[key]
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodeClaim",
        "metadata": {
            "name": at.claim,
            "labels": _labels(pool_obj, nodeclass, at),
            "annotations": dict(notes),
            "finalizers": [L.TERMINATION_FINALIZER],
            "ownerReferences": [
                {
                    "apiVersion": "karpenter.sh/v1",
                    "kind": "NodePool",
                    "name": pool,
                    "uid": pool_obj["metadata"]["uid"],
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": spec,
    }


def nodeclaim_status(at: Placement, generation: int, now: datetime | None = None) -> Obj:
    stamp = (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "providerID": at.provider_id,
        "imageID": at.image_id,
        "nodeName": at.node_name,
        "capacity": dict(CAPACITY),
        "allocatable": dict(ALLOCATABLE),
        "lastPodEventTime": stamp,
        "conditions": [
            {
                "type": kind,
                "status": "True",
                "reason": kind,
                "message": "",
                "lastTransitionTime": stamp,
                "observedGeneration": generation,
            }
            for kind in CONDITIONS
        ],
    }


def node(claim: Obj, at: Placement, kwok: tuple[str, str]) -> Obj:
    """The Node once Karpenter registered and initialized it: the claim's labels and
    annotations, Karpenter's registered/initialized labels, its finalizer, the claim as owner,
    no ``karpenter.sh/unregistered`` taint left."""
    meta = claim["metadata"]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": at.node_name,
            "labels": {
                **meta["labels"],
                L.NODE_REGISTERED: "true",
                L.NODE_INITIALIZED: "true",
                "kubernetes.io/hostname": at.node_name,
            },
            "annotations": {**meta["annotations"], kwok[0]: kwok[1]},
            "finalizers": [L.TERMINATION_FINALIZER],
            "ownerReferences": [
                {
                    "apiVersion": "karpenter.sh/v1",
                    "kind": "NodeClaim",
                    "name": meta["name"],
                    "uid": meta["uid"],
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {"providerID": at.provider_id, "taints": list(claim["spec"].get("taints") or [])},
        "status": {"capacity": dict(CAPACITY), "allocatable": dict(ALLOCATABLE)},
    }
