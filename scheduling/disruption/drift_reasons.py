"""The drift facts: why a managed node no longer matches its NodePool (the method that acts on
them is ``drift_method``).

Three checks, as Karpenter's Drifted condition reasons:

- ``NodePoolDrifted``: the pool's template changed since the claim was launched. The claim's
  ``karpenter.sh/nodepool-hash`` is compared with the pool's current hash only when the claim
  carries Joinery's own hash version; a hash written by Karpenter or another Joinery version
  is re-stamped by the worker, so adopting a fleet never rolls it, except a Karpenter ``v3``
  hash that Karpenter itself would read as drift (``activities.status.claims``).
- ``RequirementsDrifted``: the pool's requirements no longer admit the node's labels.
- ``InstanceTypeNotFound``: the node's instance type, or its zone and capacity type, is no
  longer offered in the catalog; checked only for claims older than an hour, as Karpenter
  checks it (``TYPE_CHECK_AGE``).

Then, for a pool whose EC2NodeClass is known, the AWS provider's reasons
(``nodeclass_drift_reasons``): ``NodeClassDrift``, ``AMIDrift``, ``SecurityGroupDrift``,
``SubnetDrift``; for a pool whose AKSNodeClass is known, the Azure provider's
(``aks_drift_reasons``): ``NodeClassDrift``, ``K8sVersionDrift``, ``ImageDrift``,
``SubnetDrift``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from models import labels as L
from models.instancetype import InstanceType
from models.nodepool import NodePool
from models.nodepool_hash import HASH_ANNOTATION, HASH_VERSION, HASH_VERSION_ANNOTATION
from models.nodepool_hash import template_hash as pool_hash
from models.requirements import Requirements
from scheduling.disruption.aks_drift_reasons import AKSNodeClassFacts, aks_drift_reason
from scheduling.disruption.cluster import ClaimFacts, ClassFacts, ClusterView
from scheduling.disruption.nodeclass_drift_reasons import nodeclass_drift_reason
from scheduling.disruption.types import ManagedNode

# A claim's instance type and offering are held against the catalog only once the claim is
# older than this, as Karpenter does: the catalog is the cloud's answer, not the user's, and a
# type or offering missing from it for a while must not roll nodes just launched.
TYPE_CHECK_AGE = timedelta(hours=1)


def node_drift(
    cluster: ClusterView, node: ManagedNode, pool: NodePool, now: datetime
) -> str | None:
    """``drift_reason`` for a managed node of ``cluster``: its claim, judged against its own
    pool's catalog and EC2NodeClass (as both the round and the claims' conditions judge it)."""
    return drift_reason(
        node,
        cluster.claims[node.name],
        pool,
        cluster.types_of(node.pool),
        now,
        cluster.nodeclass_of(node.pool),
    )


def drift_reason(
    node: ManagedNode,
    claim: ClaimFacts,
    pool: NodePool,
    types: Mapping[str, InstanceType],
    now: datetime,
    nodeclass: ClassFacts | None = None,
) -> str | None:
    """Why ``node`` has drifted from ``pool`` (or from ``nodeclass``, its EC2NodeClass), or
    None. ``now`` dates the claim: its type is checked against the catalog only past
    ``TYPE_CHECK_AGE``."""
    stamped = claim.annotations.get(HASH_ANNOTATION)
    if (
        stamped
        and claim.annotations.get(HASH_VERSION_ANNOTATION) == HASH_VERSION
        and stamped != pool_hash(pool)
    ):
        return f"NodePoolDrifted: nodepool {pool.name}'s template changed since launch"
    wanted = Requirements.from_selector_terms(
        r.to_wire() for r in pool.spec.template.spec.requirements
    )
    conflict = Requirements.from_labels(claim.labels).compatible(wanted)
    if conflict:
        return f"RequirementsDrifted: nodepool {pool.name} no longer admits it ({conflict})"
    it = types.get(node.instance_type)
    if node.created is None or now - node.created > TYPE_CHECK_AGE:
        missing = type_not_found(node, it)
        if missing:
            return missing
    if isinstance(nodeclass, AKSNodeClassFacts):
        return aks_drift_reason(claim.annotations, claim.image_id, claim.kubelet_version, nodeclass)
    if nodeclass is not None:
        return nodeclass_drift_reason(
            claim.annotations, claim.image_id, it, nodeclass, claim.labels
        )
    return None


def type_not_found(node: ManagedNode, it: InstanceType | None) -> str | None:
    """``InstanceTypeNotFound`` when the catalog lacks the node's type (``it`` is None), or
    offers it in neither the node's zone nor its capacity type."""
    if it is None:
        return f"InstanceTypeNotFound: instance type {node.instance_type!r} is no longer offered"
    # a reserved node is an on-demand instance in a reservation: its reservation's end is
    # CapacityReservationDrift's (or the label's flip to on-demand), not this reason's
    sold_as = {node.capacity_type}
    if node.capacity_type == L.CAPACITY_TYPE_RESERVED:
        sold_as.add(L.CAPACITY_TYPE_ON_DEMAND)
    if any(
        (not node.zone or o.zone == node.zone)
        and (not node.capacity_type or o.capacity_type in sold_as)
        for o in it.offerings
    ):
        return None
    return (
        f"InstanceTypeNotFound: {node.instance_type} is no longer offered as "
        f"{node.capacity_type or 'any capacity type'} in {node.zone or 'any zone'}"
    )
