"""Reading a NodeClaim into the small spec its workflow carries, and holding it with the
termination finalizer so it cannot vanish while an instance may exist."""

from __future__ import annotations

from typing import Any

from activities.deps import Deps
from activities.kubernetes import finalizers, nodeclaims
from activities.kubernetes.errors import Conflict, Invalid, NotFound
from activities.kubernetes.retries import retry_conflicts
from activities.lifecycle.types import ClaimSpec
from models import labels as L
from models.duration import parse_optional_duration


def spec_of(claim: dict[str, Any]) -> ClaimSpec:
    meta = claim.get("metadata") or {}
    spec = claim.get("spec") or {}
    status = claim.get("status") or {}
    labels = {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}
    tgp = spec.get("terminationGracePeriod")
    return ClaimSpec(
        name=str(meta["name"]),
        uid=str(meta.get("uid") or ""),
        nodepool=labels.get(L.NODEPOOL, ""),
        nodeclass=str((spec.get("nodeClassRef") or {}).get("name") or ""),
        requirements=list(spec.get("requirements") or []),
        resources=dict((spec.get("resources") or {}).get("requests") or {}),
        labels=labels,
        taints=list(spec.get("taints") or []),
        startup_taints=list(spec.get("startupTaints") or []),
        expire_after_seconds=parse_optional_duration(str(spec.get("expireAfter") or "720h")),
        termination_grace_period_seconds=parse_optional_duration(str(tgp)) if tgp else None,
        created_at=meta.get("creationTimestamp"),
        deleting=bool(meta.get("deletionTimestamp")),
        provider_id=status.get("providerID") or None,
        node_name=status.get("nodeName") or None,
    )


def prepare(deps: Deps, name: str) -> ClaimSpec | None:
    """The claim's spec with our finalizer on it; None when the claim no longer exists.

    One call for a claim just created (no finalizer yet, the provisioner's and disruption's
    claims): a JSON patch that adds the finalizer if, and only if, the claim holds none,
    answering with the claim. Otherwise (ours or another's is there, or it is deleting), the
    claim is read and the finalizer added to the list as read."""
    try:
        return spec_of(nodeclaims.add_first_finalizer(deps.kube, name))
    except NotFound:
        return None
    except (Invalid, Conflict):
        pass

    def write() -> dict[str, Any]:
        claim = nodeclaims.get(deps.kube, name)
        meta = claim["metadata"]
        if meta.get("deletionTimestamp") or finalizers.has(claim, L.TERMINATION_FINALIZER):
            return claim
        return nodeclaims.add_finalizer(deps.kube, claim)

    try:
        claim = retry_conflicts(write)
    except NotFound:
        return None
    return spec_of(claim)
