"""NodeClaim status Karpenter keeps that no lifecycle phase owns: the template hash
annotations on claims stamped by someone else, and ``status.lastPodEventTime``.

- A claim whose ``karpenter.sh/nodepool-hash-version`` is not Joinery's (made by Karpenter,
  or by another Joinery hash version) is re-stamped with its pool's current hash: it is
  never treated as drifted, so adopting a fleet or upgrading Joinery rolls nothing. A claim
  carrying Joinery's version keeps its hash: a difference from the pool's is drift.
- ``lastPodEventTime`` moves when a pod is bound to or leaves the claim's node;
  ``consolidateAfter`` counts from it. Like Karpenter, writes are deduplicated
  (``POD_EVENT_DEDUPE``), so a burst of pods costs one write.
"""

from __future__ import annotations

from typing import Any

from activities.kubernetes import custom_objects, nodeclaims
from activities.kubernetes.client import Kube
from activities.kubernetes.resources import NODECLAIM
from models.nodepool import NodePool
from models.nodepool_hash import HASH_VERSION, HASH_VERSION_ANNOTATION, hash_annotations

POD_EVENT_DEDUPE = 10.0  # seconds

Obj = dict[str, Any]


def needs_stamp(claim: Obj) -> bool:
    annotations = (claim.get("metadata") or {}).get("annotations") or {}
    return annotations.get(HASH_VERSION_ANNOTATION) != HASH_VERSION


def restamp(kube: Kube, claim: Obj, pool: Obj) -> bool:
    """Stamp ``claim`` with ``pool``'s current hash unless it carries Joinery's version."""
    if not needs_stamp(claim) or (claim.get("metadata") or {}).get("deletionTimestamp"):
        return False
    wanted = hash_annotations(NodePool.model_validate(pool))
    nodeclaims.patch_metadata(kube, str(claim["metadata"]["name"]), annotations=wanted)
    return True


def record_pod_event(kube: Kube, claim: str, at: str) -> None:
    """Set ``status.lastPodEventTime`` (RFC 3339) on ``claim``."""
    custom_objects.merge_patch(
        kube, NODECLAIM, claim, {"status": {"lastPodEventTime": at}}, status=True
    )
