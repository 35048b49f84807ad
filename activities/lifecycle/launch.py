"""Launch: one instance for a NodeClaim through the EC2 provider, recorded on the claim.

Idempotent: the provider finds an instance already tagged with the claim and uses the claim
UID as CreateFleet's client token, so a retried or replayed launch never makes a second one.
Insufficient capacity is final for this claim (the provisioner plans again without it).
"""

from __future__ import annotations

from typing import Any

from temporalio.exceptions import ApplicationError

from activities.deps import Deps
from activities.ec2.errors import (
    SPOT_SERVICE_LINKED_ROLE_CODE,
    EC2Error,
    InsufficientCapacity,
    NodeClassNotReady,
)
from activities.ec2.launch_types import LaunchRequest, LaunchResult
from activities.kubernetes import conditions as cond
from activities.kubernetes import events, nodeclaims, nodeclasses
from activities.kubernetes.errors import NotFound
from activities.kubernetes.retries import retry_conflicts
from activities.lifecycle import reads
from activities.lifecycle.types import ClaimSpec, LaunchOutcome
from models import conditions, contract, unimplemented
from models import labels as L
from models.ec2nodeclass import EC2NodeClass
from models.ec2nodeclass_hash import hash_annotations

INSUFFICIENT_CAPACITY = contract.ERR_INSUFFICIENT_CAPACITY
# Karpenter's Launched reason when spot is refused for want of the Spot service-linked role.
SPOT_SLR_CREATION_FAILED = "SpotSLRCreationFailed"


def request_for(claim: ClaimSpec) -> LaunchRequest:
    return LaunchRequest(
        nodeclaim_name=claim.name,
        nodeclaim_uid=claim.uid,
        nodepool_name=claim.nodepool,
        nodeclass_name=claim.nodeclass,
        requirements=claim.requirements,
        resources=claim.resources,
        labels={k: v for k, v in claim.labels.items() if not k.startswith("karpenter.sh/")},
        taints=claim.taints,
        startup_taints=claim.startup_taints,
    )


def _nodeclass(deps: Deps, name: str) -> EC2NodeClass:
    try:
        store = deps.nodeclass_store
        body = store.get(name) if store is not None else nodeclasses.get(deps.kube, name)
    except NotFound:
        raise ApplicationError(
            f"EC2NodeClass {name} not found",
            type=contract.ERR_NODECLASS_NOT_FOUND,
            non_retryable=False,
        ) from None
    if refused := unimplemented.nodeclass_fields(body):
        # Launching without the field would make a node the user did not ask for (no EFA,
        # no placement group); like a NodeClass that is not ready, retried until it is fixed
        # or the launch times out.
        raise ApplicationError(
            f"EC2NodeClass {name}: {unimplemented.message(refused)}",
            type=unimplemented.REASON,
            non_retryable=False,
        )
    return EC2NodeClass.model_validate(body)


def _condition(deps: Deps, name: str, c: cond.Condition) -> None:
    def write() -> None:
        nodeclaims.set_conditions(deps.kube, nodeclaims.get(deps.kube, name), [c])

    try:
        retry_conflicts(write)
    except NotFound:
        return


def launch_annotations(
    result: LaunchResult, nodeclass: EC2NodeClass | None
) -> dict[str, str | None]:
    """What the claim records of its launch for drift: the subnet and security groups its
    instance went into (when the result names them), and the hash of the EC2NodeClass it was
    launched from (``models.ec2nodeclass_hash``)."""
    out: dict[str, str | None] = {
        **L.placement_annotations(result.subnet_id, result.security_group_ids)
    }
    if nodeclass is not None:
        out.update(hash_annotations(nodeclass))
    return out


def record(
    deps: Deps, claim: ClaimSpec, result: LaunchResult, nodeclass: EC2NodeClass | None = None
) -> None:
    """Labels and the launch's annotations (``launch_annotations``) on the claim, then
    providerID, image, capacity and ``Launched=True`` in one status write. Two writes: the
    metadata merge patch needs no read and answers with the claim, whose resourceVersion the
    status write carries (a conflict re-reads it). The labels go first, so a claim showing
    ``Launched=True`` carries them."""
    labels: dict[str, str | None] = dict(result.labels)
    first = False
    current = nodeclaims.patch_metadata(
        deps.kube,
        claim.name,
        labels=labels,
        annotations=launch_annotations(result, nodeclass) or None,
    )
    stale = False

    def write_status() -> dict[str, Any]:
        nonlocal first, current, stale
        if stale:
            current = nodeclaims.get(deps.kube, claim.name)
        first = not cond.is_true(current, conditions.LAUNCHED)
        stale = True  # if this write loses a race, the next attempt reads the claim again
        return nodeclaims.record_launch(
            deps.kube,
            current,
            provider_id=result.provider_id,
            image_id=result.image_id,
            capacity=result.capacity,
            allocatable=result.allocatable,
            launched=cond.Condition(conditions.LAUNCHED, "True", conditions.LAUNCHED),
        )

    reads.claim_written(deps, retry_conflicts(write_status))
    if first:  # a retried launch finds its instance again: count the claim once
        deps.counters.nodeclaim_launched(claim.nodepool)


def _spot_role_missing(deps: Deps, nodepool: str) -> None:
    """Tell the pool's operator why its spot offerings vanished: the account has never used
    Spot and the launcher may not create the service-linked role (docs/deploy.md)."""
    events.record(
        deps.kube,
        kind="NodePool",
        name=nodepool,
        reason=SPOT_SLR_CREATION_FAILED,
        message=(
            "spot launches are refused: the account has no Spot service-linked role and may "
            "not create one; spot offerings are unavailable, on-demand is used. Create it "
            "once: aws iam create-service-linked-role --aws-service-name spot.amazonaws.com"
        ),
        warning=True,
    )


def launch(deps: Deps, claim: ClaimSpec) -> LaunchOutcome:
    provider = deps.provider()
    nodeclass = _nodeclass(deps, claim.nodeclass)
    try:
        result = provider.launch(request_for(claim), nodeclass)
    except InsufficientCapacity as exc:
        reason = INSUFFICIENT_CAPACITY
        if exc.code == SPOT_SERVICE_LINKED_ROLE_CODE:
            reason = SPOT_SLR_CREATION_FAILED
            _spot_role_missing(deps, claim.nodepool)
        _condition(deps, claim.name, cond.Condition(conditions.LAUNCHED, "False", reason, str(exc)))
        raise ApplicationError(str(exc), type=INSUFFICIENT_CAPACITY, non_retryable=True) from exc
    except EC2Error as exc:
        reason = type(exc).__name__
        _condition(deps, claim.name, cond.Condition(conditions.LAUNCHED, "False", reason, str(exc)))
        # A NodeClass that is not ready yet may become ready: keep trying until launch times out.
        final = not exc.retryable and not isinstance(exc, NodeClassNotReady)
        raise ApplicationError(str(exc), type=reason, non_retryable=final) from exc
    record(deps, claim, result, nodeclass)
    return LaunchOutcome(
        provider_id=result.provider_id,
        instance_id=result.instance_id,
        instance_type=result.instance_type,
        zone=result.zone,
        capacity_type=result.capacity_type,
        image_id=result.image_id,
        capacity=dict(result.capacity),
        allocatable=dict(result.allocatable),
    )
