"""Launch: one instance for a NodeClaim through the cloud provider, recorded on the claim.

Idempotent: the provider finds an instance already launched for the claim (EC2: by its tag,
with the claim UID as CreateFleet's client token), so a retried or replayed launch never
makes a second one. Insufficient capacity is final for this claim (the provisioner plans
again without it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from temporalio.exceptions import ApplicationError

from activities.cloud.errors import CloudError, InsufficientCapacity, NodeClassNotReady, PoolWarning
from activities.cloud.launch import LaunchRequest, LaunchResult
from activities.cloud.provider import NodeClass
from activities.deps import Deps
from activities.kubernetes import conditions as cond
from activities.kubernetes import events, nodeclaims, nodeclasses
from activities.kubernetes.errors import NotFound
from activities.kubernetes.retries import retry_conflicts
from activities.lifecycle import reads
from activities.lifecycle.types import ClaimSpec, LaunchOutcome
from models import conditions, contract, unimplemented
from models import labels as L

INSUFFICIENT_CAPACITY = contract.ERR_INSUFFICIENT_CAPACITY


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


def _nodeclass(deps: Deps, name: str) -> NodeClass:
    kind = deps.provider().nodeclass_kind
    try:
        store = deps.nodeclass_store
        body = (
            store.get(name)
            if store is not None
            else nodeclasses.get(deps.kube, name, kind.resource)
        )
    except NotFound:
        raise ApplicationError(
            f"{kind.kind} {name} not found",
            type=contract.ERR_NODECLASS_NOT_FOUND,
            non_retryable=False,
        ) from None
    if refused := unimplemented.nodeclass_fields(body):
        # Launching without the field would make a node the user did not ask for (no EFA,
        # no placement group); like a node class that is not ready, retried until it is
        # fixed or the launch times out.
        raise ApplicationError(
            f"{kind.kind} {name}: {unimplemented.message(refused)}",
            type=unimplemented.REASON,
            non_retryable=False,
        )
    return kind.parse(body)


def _condition(deps: Deps, name: str, c: cond.Condition) -> None:
    def write() -> None:
        nodeclaims.set_conditions(deps.kube, nodeclaims.get(deps.kube, name), [c])

    try:
        retry_conflicts(write)
    except NotFound:
        return


def launch_annotations(
    result: LaunchResult, nodeclass_hash: Mapping[str, str] | None = None
) -> dict[str, str | None]:
    """What the claim records of its launch for drift: the subnet and security groups its
    instance went into (when the result names them), and the hash of the node class it was
    launched from (its kind's ``hash_annotations``: ``models.ec2nodeclass_hash`` for EC2)."""
    out: dict[str, str | None] = {
        **L.placement_annotations(result.subnet_id, result.security_group_ids)
    }
    out.update(nodeclass_hash or {})
    return out


def record(
    deps: Deps, claim: ClaimSpec, result: LaunchResult, nodeclass: NodeClass | None = None
) -> None:
    """Labels and the launch's annotations (``launch_annotations``) on the claim, then
    providerID, image, capacity and ``Launched=True`` in one status write. Two writes: the
    metadata merge patch needs no read and answers with the claim, whose resourceVersion the
    status write carries (a conflict re-reads it). The labels go first, so a claim showing
    ``Launched=True`` carries them."""
    labels: dict[str, str | None] = dict(result.labels)
    first = False
    stamp = (
        None if nodeclass is None else deps.provider().nodeclass_kind.hash_annotations(nodeclass)
    )
    current = nodeclaims.patch_metadata(
        deps.kube,
        claim.name,
        labels=labels,
        annotations=launch_annotations(result, stamp) or None,
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
        deps.counters.nodeclaim_launched(claim.nodepool, claim.nodeclass)


def _warn_pool(deps: Deps, nodepool: str, warning: PoolWarning) -> None:
    """Tell the pool's operator what they must fix (EC2: the account has never used Spot and
    the launcher may not create the service-linked role, docs/deploy.md)."""
    events.record(
        deps.kube,
        kind="NodePool",
        name=nodepool,
        reason=warning.reason,
        message=warning.message,
        warning=True,
    )


def launch(deps: Deps, claim: ClaimSpec) -> LaunchOutcome:
    provider = deps.provider()
    nodeclass = _nodeclass(deps, claim.nodeclass)
    try:
        result = provider.launch(request_for(claim), nodeclass)
    except InsufficientCapacity as exc:
        reason = exc.reason
        if exc.warning is not None:
            _warn_pool(deps, claim.nodepool, exc.warning)
        _condition(deps, claim.name, cond.Condition(conditions.LAUNCHED, "False", reason, str(exc)))
        raise ApplicationError(str(exc), type=INSUFFICIENT_CAPACITY, non_retryable=True) from exc
    except CloudError as exc:
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
