"""Termination around the drain: start it (delete + taint), wait for volumes, end the
instance, and let go of the Node and the NodeClaim (finalizers)."""

from __future__ import annotations

import contextlib
from datetime import datetime, timedelta
from typing import Any

from activities.cloud.errors import InstanceNotFound
from activities.deps import Deps
from activities.kubernetes import conditions as cond
from activities.kubernetes import events, nodeclaims, nodes, volumes
from activities.kubernetes.errors import NotFound
from activities.kubernetes.retries import retry_conflicts
from activities.lifecycle import events as lifecycle_events
from activities.lifecycle.types import (
    BeginTerminationInput,
    FinalizeInput,
    InstanceInput,
    TerminationStart,
    VolumesInput,
)
from activities.status import registration_health
from activities.timestamps import iso, parse_iso, utc_now
from models import conditions
from models import labels as L
from models.duration import parse_optional_duration

DISRUPTED_TAINT = {"key": L.DISRUPTED_TAINT_KEY, "effect": "NoSchedule"}


def _instance_gone(deps: Deps, node_name: str, provider_id: str | None) -> bool:
    """A dead node: not Ready (its kubelet is silent) and its instance unknown to the cloud."""
    cloud = deps.cloud
    if cloud is None or not provider_id:
        return False
    try:
        if cond.is_true(nodes.get(deps.kube, node_name), "Ready"):
            return False
        instance = cloud.instance_id(provider_id)
        if not instance:
            return False
        cloud.get(instance)
    except (NotFound, InstanceNotFound):
        return True
    return False


def _node_of(deps: Deps, claim: dict[str, Any], provider_id: str | None) -> str | None:
    status = claim.get("status") or {}
    name = status.get("nodeName")
    if name:
        try:
            nodes.get(deps.kube, name)
            return str(name)
        except NotFound:
            return None
    pid = status.get("providerID") or provider_id
    if not pid:
        return None
    node = nodes.by_provider_id(deps.kube, pid)
    return str(node["metadata"]["name"]) if node else None


def begin(deps: Deps, inp: BeginTerminationInput) -> TerminationStart:
    """Delete the claim (the finalizer holds it) and taint its node ``disrupted:NoSchedule``."""
    try:
        claim = nodeclaims.get(deps.kube, inp.name)
    except NotFound:
        return TerminationStart(node_name=None, deletion_time=iso(utc_now()))
    meta = claim["metadata"]
    if not meta.get("deletionTimestamp") and inp.reason in registration_health.FAILURES:
        # A launch or registration timed out: a failure for its pool's NodeRegistrationHealthy.
        registration_health.outcome(claim, False)
    if not meta.get("deletionTimestamp"):
        if inp.reason and inp.reason != "Deleted":
            message = inp.message or f"disrupting NodeClaim: {inp.reason}"

            def mark() -> None:
                current = nodeclaims.get(deps.kube, inp.name)
                nodeclaims.set_conditions(
                    deps.kube,
                    current,
                    [cond.Condition(conditions.DISRUPTION_REASON, "True", inp.reason, message)],
                )

            retry_conflicts(mark)
            labels = meta.get("labels") or {}
            deps.counters.nodeclaim_disrupted(
                str(labels.get(L.NODEPOOL) or ""),
                inp.reason,
                str(labels.get(L.CAPACITY_TYPE) or ""),
            )
            events.record(
                deps.kube,
                kind="NodeClaim",
                name=inp.name,
                uid=str(meta.get("uid") or ""),
                reason="DisruptionTerminating",
                message=message,
            )
        with contextlib.suppress(NotFound):
            nodeclaims.delete(deps.kube, inp.name, uid=inp.uid or None)
        try:
            claim = nodeclaims.get(deps.kube, inp.name)
        except NotFound:
            return TerminationStart(node_name=None, deletion_time=iso(utc_now()))
        meta = claim["metadata"]
    deleted_at = str(meta.get("deletionTimestamp") or iso(utc_now()))
    tgp = (claim.get("spec") or {}).get("terminationGracePeriod")
    seconds = parse_optional_duration(str(tgp)) if tgp else None
    deadline = (
        iso(parse_iso(deleted_at) + timedelta(seconds=seconds)) if seconds is not None else None
    )
    stamped = (meta.get("annotations") or {}).get(L.NODECLAIM_TERMINATION_TIMESTAMP)
    if stamped:
        # Karpenter's termination timestamp, set to now by node repair: the drain deletes
        # pods from then on instead of waiting for evictions.
        with contextlib.suppress(ValueError):
            at = parse_iso(str(stamped))
            if deadline is None or at < parse_iso(deadline):
                deadline = iso(at)
    node_name = _node_of(deps, claim, inp.provider_id)
    if node_name:
        found = node_name

        def taint() -> None:
            nodes.add_taint(deps.kube, nodes.get(deps.kube, found), DISRUPTED_TAINT)

        try:
            retry_conflicts(taint)
        except NotFound:
            node_name = None
    pid = str((claim.get("status") or {}).get("providerID") or inp.provider_id or "")
    if deadline is not None:
        lifecycle_events.grace_expiring(
            deps.kube, node_name, inp.name, str(meta.get("uid") or ""), deadline
        )
    return TerminationStart(
        node_name=node_name,
        deletion_time=deleted_at,
        grace_deadline=deadline,
        instance_gone=bool(node_name) and _instance_gone(deps, str(node_name), pid),
    )


def volumes_attached(deps: Deps, inp: VolumesInput) -> int:
    """VolumeAttachments still bound to the node; sets VolumesDetached accordingly."""
    attached = volumes.attachments(deps.kube, inp.node_name)
    count = len(attached)
    if count:
        names = sorted(str((a.get("metadata") or {}).get("name")) for a in attached)
        lifecycle_events.awaiting_volumes(deps.kube, inp.node_name, names)
    c = (
        cond.Condition(conditions.VOLUMES_DETACHED, "True", conditions.VOLUMES_DETACHED)
        if count == 0
        else cond.Condition(
            conditions.VOLUMES_DETACHED, "False", "AwaitingVolumeDetachment", f"{count} attached"
        )
    )

    def write() -> None:
        claim = nodeclaims.get(deps.kube, inp.nodeclaim)
        current = cond.find((claim.get("status") or {}).get("conditions") or [], c.type)
        if current is None or (current.get("status"), current.get("message")) != (
            c.status,
            c.message,
        ):
            nodeclaims.set_conditions(deps.kube, claim, [c])

    with contextlib.suppress(NotFound):
        retry_conflicts(write)
    return count


def terminate_instance(deps: Deps, inp: InstanceInput) -> bool:
    """Ask the cloud to terminate the claim's instance; True once it is gone (or never
    existed).

    Found by providerID, else by the NodeClaim (EC2: its tag), so a launch whose result was
    never recorded (the worker died between CreateFleet and the status write) is still
    cleaned up.
    """
    provider = deps.provider()
    ids: dict[str, str] = {}  # instance id -> zone
    if inp.provider_id:
        instance = provider.instance_id(inp.provider_id)
        if not instance:
            raise ValueError(f"not an {provider.name} provider id: {inp.provider_id!r}")
        ids[instance] = provider.zone_of(inp.provider_id)
    found = provider.find_by_nodeclaim(inp.nodeclaim)
    if found is not None:
        ids[found.id] = found.zone
    gone = True
    for instance_id, zone in sorted(ids.items()):
        try:
            gone = provider.delete(instance_id) and gone
        except InstanceNotFound:
            continue
        except Exception:  # the activity retries; karpenter_*_termination_failures_total
            deps.counters.termination_failed(zone)
            raise
    if not gone:

        def mark() -> None:
            claim = nodeclaims.get(deps.kube, inp.nodeclaim)
            if not cond.is_true(claim, conditions.INSTANCE_TERMINATING):
                nodeclaims.set_conditions(
                    deps.kube,
                    claim,
                    [
                        cond.Condition(
                            conditions.INSTANCE_TERMINATING, "True", conditions.INSTANCE_TERMINATING
                        )
                    ],
                )

        with contextlib.suppress(NotFound):
            retry_conflicts(mark)
    return gone


def finalize(deps: Deps, inp: FinalizeInput) -> bool:
    """Delete the Node and drop both finalizers; True when the claim was still there."""
    node_meta: dict[str, Any] = {}
    if inp.node_name:
        nodes.delete(deps.kube, inp.node_name)

        def release_node() -> None:
            nonlocal node_meta
            body = nodes.get(deps.kube, inp.node_name or "")
            node_meta = dict(body.get("metadata") or {})
            nodes.remove_finalizer(deps.kube, body)

        with contextlib.suppress(NotFound):
            retry_conflicts(release_node)
    labels: dict[str, str] = {}
    claim_body: dict[str, Any] = {}

    def release_claim() -> bool:
        nonlocal labels, claim_body
        claim = nodeclaims.get(deps.kube, inp.nodeclaim)
        claim_body = claim
        labels = {str(k): str(v) for k, v in (claim["metadata"].get("labels") or {}).items()}
        nodeclaims.remove_finalizer(deps.kube, claim)
        return True

    try:
        existed = retry_conflicts(release_claim)
    except NotFound:
        return False
    pool, zone = labels.get(L.NODEPOOL, ""), labels.get(L.ZONE, "")
    deps.counters.nodeclaim_terminated(
        pool, inp.reason or "Deleted", labels.get(L.CAPACITY_TYPE, ""), zone
    )
    moment = utc_now()
    claim_deleted = _seconds_since(claim_body.get("metadata", {}).get("deletionTimestamp"), moment)
    if claim_deleted is not None:
        terminating = cond.find(
            (claim_body.get("status") or {}).get("conditions") or [],
            conditions.INSTANCE_TERMINATING,
        )
        instance = _seconds_since((terminating or {}).get("lastTransitionTime"), moment)
        deps.counters.nodeclaim_termination_duration(pool, claim_deleted, instance)
    if inp.node_name:
        deps.counters.node_terminated(
            pool,
            zone,
            deleting_seconds=_seconds_since(node_meta.get("deletionTimestamp"), moment),
            lifetime_seconds=_seconds_since(node_meta.get("creationTimestamp"), moment),
        )
    return existed


def _seconds_since(stamp: object, moment: datetime) -> float | None:
    """Seconds from an RFC 3339 ``stamp`` to ``moment``; None when there is none."""
    if not isinstance(stamp, str) or not stamp:
        return None
    try:
        return max(0.0, (moment - parse_iso(stamp)).total_seconds())
    except ValueError:
        return None
