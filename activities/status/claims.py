"""NodeClaim status Karpenter keeps that no lifecycle phase owns: the template hash
annotations on claims stamped by someone else, and ``status.lastPodEventTime``.

- A claim whose ``karpenter.sh/nodepool-hash-version`` is not Joinery's (made by Karpenter,
  or by another Joinery hash version) is re-stamped with its pool's current hash, so
  adopting a fleet or upgrading Joinery rolls nothing. Two exceptions, as Karpenter itself
  would judge them: a claim carrying Karpenter's current version (``v3``) whose hash is not
  Karpenter's hash of the pool's template now (``models.karpenter_hash``) was launched from
  a template that has changed since; it is stamped with a hash no template has
  (``KARPENTER_DRIFTED``), which the drift check reads as ``NodePoolDrifted``. And one
  stamped by an older Joinery that is already ``Drifted`` gets the new version but keeps its
  old hash, so it stays drifted, as Karpenter's hash controller treats its own version bumps.
  A claim carrying Joinery's version keeps its hash: a difference from the pool's is drift.
- The same for ``karpenter.k8s.aws/ec2nodeclass-hash-version`` and its EC2NodeClass's hash
  (``models.ec2nodeclass_hash``), for a claim that carries a foreign version, or none once
  launched (an older Joinery launched it). A claim not launched yet is left alone: its launch
  stamps it. Karpenter's nodeclass hash controller re-stamps the same way, except that it
  keeps the old hash of a claim already Drifted (whose version then matches); Joinery keeps
  none (a drift it cannot read is not drift).
- ``lastPodEventTime`` moves when a pod is bound to or leaves the claim's node;
  ``consolidateAfter`` counts from it. Like Karpenter, writes are deduplicated
  (``POD_EVENT_DEDUPE``), so a burst of pods costs one write.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from activities.kubernetes import custom_objects, nodeclaims
from activities.kubernetes.client import Kube
from activities.kubernetes.resources import NODECLAIM
from models import aksnodeclass_hash, karpenter_hash
from models import ec2nodeclass_hash as nodeclass_hash
from models.aksnodeclass import KIND as AKS_KIND
from models.aksnodeclass import AKSNodeClass
from models.conditions import DRIFTED
from models.ec2nodeclass import EC2NodeClass
from models.nodepool import NodePool
from models.nodepool_hash import (
    HASH_ANNOTATION,
    HASH_VERSION,
    HASH_VERSION_ANNOTATION,
    JOINERY_VERSION_PREFIX,
    hash_annotations,
)

POD_EVENT_DEDUPE = 10.0  # seconds
# The pool hash a claim gets when Karpenter's own hash says its template changed since
# launch: never equal to a Joinery hash (16 hex digits), so the claim reads as drifted.
KARPENTER_DRIFTED = "karpenter-v3-drifted"

Obj = dict[str, Any]


def _annotations(claim: Obj) -> dict[str, str]:
    return (claim.get("metadata") or {}).get("annotations") or {}


def needs_pool_stamp(claim: Obj) -> bool:
    return _annotations(claim).get(HASH_VERSION_ANNOTATION) != HASH_VERSION


def _keeps_pool_hash(claim: Obj) -> bool:
    """Stamped by an older Joinery and already Drifted: whether it still is cannot be told
    from a hash of another version, so it stays drifted (Karpenter's rule)."""
    version = _annotations(claim).get(HASH_VERSION_ANNOTATION) or ""
    drifted = any(
        c.get("type") == DRIFTED and c.get("status") == "True"
        for c in (claim.get("status") or {}).get("conditions") or []
    )
    return version.startswith(JOINERY_VERSION_PREFIX) and drifted


def needs_nodeclass_stamp(claim: Obj) -> bool:
    """A foreign nodeclass hash version, or none on a launched claim (an AKSNodeClass's
    hash, ``models.aksnodeclass_hash``, the same way as an EC2NodeClass's)."""
    annotations = _annotations(claim)
    if annotations.get(aksnodeclass_hash.HASH_VERSION_ANNOTATION) == (
        aksnodeclass_hash.HASH_VERSION
    ):
        return False
    version = annotations.get(nodeclass_hash.HASH_VERSION_ANNOTATION)
    if version == nodeclass_hash.HASH_VERSION:
        return False
    foreign = version or annotations.get(aksnodeclass_hash.HASH_VERSION_ANNOTATION)
    return foreign is not None or bool((claim.get("status") or {}).get("providerID"))


def _nodeclass_stamp(nodeclass: Obj) -> dict[str, str | None]:
    """The hash annotations for ``nodeclass`` by its kind; a class that does not validate
    gets its version alone (no hash, so no static drift, and no stamp again)."""
    if nodeclass.get("kind") == AKS_KIND:
        try:
            return dict(aksnodeclass_hash.hash_annotations(AKSNodeClass.model_validate(nodeclass)))
        except ValidationError:
            return {
                aksnodeclass_hash.HASH_ANNOTATION: None,
                aksnodeclass_hash.HASH_VERSION_ANNOTATION: aksnodeclass_hash.HASH_VERSION,
            }
    try:
        return dict(nodeclass_hash.hash_annotations(EC2NodeClass.model_validate(nodeclass)))
    except ValidationError:
        return {
            nodeclass_hash.HASH_ANNOTATION: None,
            nodeclass_hash.HASH_VERSION_ANNOTATION: nodeclass_hash.HASH_VERSION,
        }


def karpenter_drifted(claim: Obj, pool: Obj) -> bool:
    """``claim`` carries Karpenter's current hash version and a hash other than Karpenter's
    hash of ``pool``'s template now (a template Joinery cannot read is no evidence)."""
    annotations = _annotations(claim)
    if annotations.get(HASH_VERSION_ANNOTATION) != karpenter_hash.HASH_VERSION:
        return False
    stamped = annotations.get(HASH_ANNOTATION)
    template = (pool.get("spec") or {}).get("template")
    if not stamped or not isinstance(template, dict):
        return False
    try:
        return stamped != karpenter_hash.nodepool_hash(template)
    except (ValueError, TypeError, AttributeError):
        return False


def needs_stamp(claim: Obj) -> bool:
    return needs_pool_stamp(claim) or needs_nodeclass_stamp(claim)


def restamp(kube: Kube, claim: Obj, pool: Obj, nodeclass: Obj | None = None) -> bool:
    """Stamp ``claim`` with ``pool``'s current hash, and ``nodeclass``'s (when known), where
    it does not carry Joinery's version; one write. A NodeClass that does not validate gets
    its version stamped alone: no hash, so no static drift, and no stamp again."""
    if (claim.get("metadata") or {}).get("deletionTimestamp"):
        return False
    wanted: dict[str, str | None] = {}
    if needs_pool_stamp(claim):
        wanted.update(hash_annotations(NodePool.model_validate(pool)))
        if karpenter_drifted(claim, pool):
            wanted[HASH_ANNOTATION] = KARPENTER_DRIFTED
        elif _keeps_pool_hash(claim):
            del wanted[HASH_ANNOTATION]
    if nodeclass is not None and needs_nodeclass_stamp(claim):
        wanted.update(_nodeclass_stamp(nodeclass))
    if not wanted:
        return False
    nodeclaims.patch_metadata(kube, str(claim["metadata"]["name"]), annotations=wanted)
    return True


def record_pod_event(kube: Kube, claim: str, at: str) -> None:
    """Set ``status.lastPodEventTime`` (RFC 3339) on ``claim``."""
    custom_objects.merge_patch(
        kube, NODECLAIM, claim, {"status": {"lastPodEventTime": at}}, status=True
    )
