"""Karpenter's label, taint, annotation and finalizer keys, and the rules about which label
keys may be selected (condition types are in ``models.conditions``)."""

from __future__ import annotations

from collections.abc import Iterable

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
ARCH = "kubernetes.io/arch"
OS = "kubernetes.io/os"
WINDOWS_BUILD = "node.kubernetes.io/windows-build"
CAPACITY_TYPE = "karpenter.sh/capacity-type"
NODEPOOL = "karpenter.sh/nodepool"
NODECLAIM = "karpenter.sh/nodeclaim"
NODE_INITIALIZED = "karpenter.sh/initialized"
NODE_REGISTERED = "karpenter.sh/registered"
DO_NOT_DISRUPT = "karpenter.sh/do-not-disrupt"
# When a deleted NodeClaim's drain stops waiting and deletes its pods (Karpenter sets it to
# now for a node repaired as unhealthy; otherwise the deletion plus terminationGracePeriod).
NODECLAIM_TERMINATION_TIMESTAMP = "karpenter.sh/nodeclaim-termination-timestamp"
# On a Node, set by the kubelet from the launch's labels: its taints are the launch's to
# manage, so registration does not re-add the claim's (a DaemonSet may already have lifted a
# startup taint); Karpenter's provider sets it for every AMI family but Custom.
DO_NOT_SYNC_TAINTS = "karpenter.sh/do-not-sync-taints"
TERMINATION_FINALIZER = "karpenter.sh/termination"
# Joinery's own: on a NodeClaim, the provisioning round that created it, so a retried round
# finds the claims its earlier attempt made instead of making them again.
PROVISIONING_ROUND = "joinery.dev/provisioning-round"
# Joinery's own: on a NodeClaim, the subnet and security groups (ids, sorted, comma-joined) its
# instance was launched into, written with its labels at launch, so drift can compare them
# with the EC2NodeClass's resolved ones without asking EC2 (Karpenter asks DescribeInstances).
SUBNET_ID_ANNOTATION = "joinery.dev/subnet-id"
SECURITY_GROUP_IDS_ANNOTATION = "joinery.dev/security-group-ids"
# On a node (claim): the placement group it was launched into (Karpenter's label).
PLACEMENT_GROUP_ID = "karpenter.k8s.aws/placement-group-id"
# Joinery's own: on an EC2NodeClass, the id of the placement group its selector resolves to
# now ("" for none), written with its status, so drift can compare it with a node's
# ``PLACEMENT_GROUP_ID`` without asking EC2 (Karpenter's PlacementGroupDrift asks it). The
# CRD's status has no field for it (Karpenter's does not publish the group).
NODECLASS_PLACEMENT_GROUP_ANNOTATION = "joinery.dev/placement-group-id"

# Put on a node once Joinery has decided to take it away, so nothing new lands there.
DISRUPTED_TAINT_KEY = "karpenter.sh/disrupted"
# Put on a node launched but not yet initialized.
UNREGISTERED_TAINT_KEY = "karpenter.sh/unregistered"
# Taints a booting node carries until the kubelet, cloud provider or Karpenter lifts them.
EPHEMERAL_TAINT_KEYS = frozenset(
    {
        UNREGISTERED_TAINT_KEY,
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
        "node.cloudprovider.kubernetes.io/uninitialized",
    }
)

CAPACITY_TYPE_SPOT = "spot"
CAPACITY_TYPE_ON_DEMAND = "on-demand"
CAPACITY_TYPE_RESERVED = "reserved"
# On a reserved node: its capacity reservation, the reservation's type and whether it is
# interruptible (Karpenter's AWS provider sets all three).
CAPACITY_RESERVATION_ID = "karpenter.k8s.aws/capacity-reservation-id"
CAPACITY_RESERVATION_TYPE = "karpenter.k8s.aws/capacity-reservation-type"
CAPACITY_RESERVATION_INTERRUPTIBLE = "karpenter.k8s.aws/capacity-reservation-interruptible"
RESERVATION_LABELS = (
    CAPACITY_RESERVATION_ID,
    CAPACITY_RESERVATION_TYPE,
    CAPACITY_RESERVATION_INTERRUPTIBLE,
)

# AWS provider labels, well known to Karpenter once the AWS provider registers them.
AWS_LABEL_PREFIX = "karpenter.k8s.aws/"
AWS_LABELS = frozenset(
    AWS_LABEL_PREFIX + suffix
    for suffix in (
        "instance-category",
        "instance-family",
        "instance-generation",
        "instance-size",
        "instance-cpu",
        "instance-cpu-manufacturer",
        "instance-cpu-sustained-clock-speed-mhz",
        "instance-memory",
        "instance-ebs-bandwidth",
        "instance-network-bandwidth",
        "instance-gpu-name",
        "instance-gpu-manufacturer",
        "instance-gpu-count",
        "instance-gpu-memory",
        "instance-accelerator-name",
        "instance-accelerator-manufacturer",
        "instance-accelerator-count",
        "instance-hypervisor",
        "instance-encryption-in-transit-supported",
        "instance-local-nvme",
        "instance-capability-flex",
        "instance-tenancy",
        "placement-group-id",
        "placement-group-partition",
    )
) | {"topology.k8s.aws/zone-id"}

WELL_KNOWN_LABELS = frozenset(
    {ZONE, REGION, INSTANCE_TYPE, ARCH, OS, WINDOWS_BUILD, CAPACITY_TYPE, NODEPOOL} | AWS_LABELS
)

# Deprecated label keys and the keys they mean today.
NORMALIZED_LABELS = {
    "beta.kubernetes.io/arch": ARCH,
    "beta.kubernetes.io/os": OS,
    "beta.kubernetes.io/instance-type": INSTANCE_TYPE,
    "failure-domain.beta.kubernetes.io/zone": ZONE,
    "failure-domain.beta.kubernetes.io/region": REGION,
}

RESTRICTED_LABEL_DOMAINS = ("kubernetes.io", "k8s.io", "karpenter.sh", "karpenter.k8s.aws")
LABEL_DOMAIN_EXCEPTIONS = ("kops.k8s.io", "node.kubernetes.io", "node-restriction.kubernetes.io")
RESTRICTED_LABELS = frozenset({HOSTNAME, NODE_INITIALIZED, NODE_REGISTERED})


def normalize(key: str) -> str:
    return NORMALIZED_LABELS.get(key, key)


def label_domain(key: str) -> str:
    return key.split("/", 1)[0] if "/" in key else ""


def is_restricted_node_label(key: str) -> bool:
    """Keys a NodePool may not set or require: they belong to Kubernetes or Karpenter."""
    if key in WELL_KNOWN_LABELS:
        return True
    domain = label_domain(key)
    if any(domain.endswith(exc) for exc in LABEL_DOMAIN_EXCEPTIONS):
        return False
    if any(domain.endswith(d) for d in RESTRICTED_LABEL_DOMAINS):
        return True
    return key in RESTRICTED_LABELS


def restricted_selector_reason(
    key: str, well_known: frozenset[str] = WELL_KNOWN_LABELS
) -> str | None:
    """Why a pod may not select on this key, or None when it may (Karpenter's IsRestrictedLabel)."""
    if key in well_known:
        return None
    if is_restricted_node_label(key):
        return f"label {key!r} is restricted; pods cannot select on it"
    return None


def joined_ids(ids: Iterable[str]) -> str:
    """``SECURITY_GROUP_IDS_ANNOTATION``'s value: the ids, sorted, comma-joined."""
    return ",".join(sorted({i for i in ids if i}))


def placement_annotations(subnet_id: str, security_group_ids: Iterable[str]) -> dict[str, str]:
    """The annotations that record where an instance was placed (``SUBNET_ID_ANNOTATION``,
    ``SECURITY_GROUP_IDS_ANNOTATION``), each only when known."""
    out: dict[str, str] = {}
    if subnet_id:
        out[SUBNET_ID_ANNOTATION] = subnet_id
    groups = joined_ids(security_group_ids)
    if groups:
        out[SECURITY_GROUP_IDS_ANNOTATION] = groups
    return out


def split_ids(value: str) -> frozenset[str]:
    """The ids of a ``joined_ids`` value (empty for an empty value)."""
    return frozenset(i.strip() for i in value.split(",") if i.strip())
