"""A NodePool's status, as ``kubectl get nodepools`` shows it in Karpenter.

Conditions: ``ValidationSucceeded`` (the spec passes the checks the CRD cannot express, e.g. a
requirement on a restricted label domain, and asks for nothing Joinery does not implement,
e.g. ``replicas``), ``NodeClassReady`` (the referenced EC2NodeClass
exists and is Ready) and ``Ready`` (both). ``nodes`` and ``resources`` sum the pool's
NodeClaims (what its ``limits`` are checked against). ``NodeRegistrationHealthy`` is set by
the lifecycle's outcomes (``registration_health``); here it is reset to Unknown when the
pool or its NodeClass changes, and ``nodeClassObservedGeneration`` kept. A condition turning
False records a Warning event naming the field, so bad input is visible where users look,
and the planner simply leaves the pool out of provisioning rounds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from activities.kubernetes import conditions as cond
from activities.kubernetes import nodeclaims, nodeclasses, nodepools
from activities.kubernetes.client import Kube
from activities.kubernetes.errors import NotFound
from activities.kubernetes.object_cache import ObjectCache
from activities.kubernetes.resources import EC2NODECLASS, CustomResource
from activities.kubernetes.retries import retry_conflicts
from activities.status import registration_health, reporting
from models import conditions, contract, unimplemented
from models import labels as L
from models.errors import field_error
from models.nodepool import NodePool
from models.resources import add, parse_resources, render

Obj = dict[str, Any]
NODECLASS = conditions.NODECLASS_READY


@dataclass(frozen=True)
class Usage:
    nodes: int
    resources: dict[str, str]


def nodeclass_ref(body: Mapping[str, Any]) -> Mapping[str, Any]:
    """``spec.template.spec.nodeClassRef`` of a NodePool as read, before validation."""
    template = ((body.get("spec") or {}).get("template") or {}).get("spec") or {}
    return template.get("nodeClassRef") or {}


def validation(body: Mapping[str, Any]) -> cond.Condition:
    try:
        NodePool.model_validate(body)
    except ValidationError as exc:
        return cond.Condition(conditions.VALIDATION_SUCCEEDED, "False", "Invalid", field_error(exc))
    return reporting.refusal(unimplemented.nodepool_fields(body))


def nodeclass_readiness(
    body: Mapping[str, Any],
    nodeclass: Mapping[str, Any] | None,
    resource: CustomResource = EC2NODECLASS,
) -> cond.Condition:
    """The pool's NodeClassReady, for the cluster's node class kind (``resource``)."""
    ref = nodeclass_ref(body)
    name = str(ref.get("name") or "")
    kind = resource.kind
    if ref.get("kind") not in (None, kind) or ref.get("group") not in (None, resource.group):
        return cond.Condition(
            NODECLASS,
            "False",
            "UnsupportedNodeClass",
            f"spec.template.spec.nodeClassRef: {ref.get('group')}/{ref.get('kind')} is not "
            f"{resource.group}/{kind}",
        )
    if nodeclass is None:
        return cond.Condition(
            NODECLASS,
            "False",
            contract.ERR_NODECLASS_NOT_FOUND,
            f"{kind} {name} does not exist",
        )
    ready = cond.find((nodeclass.get("status") or {}).get("conditions") or [], conditions.READY)
    if ready is None:
        return cond.Condition(
            NODECLASS, "Unknown", "AwaitingReconciliation", f"{kind} {name} has no status yet"
        )
    if ready.get("status") != "True":
        detail = str(ready.get("message") or ready.get("reason") or "")
        return cond.Condition(
            NODECLASS, "False", "NodeClassNotReady", f"{kind} {name} is not ready: {detail}"
        )
    return cond.Condition(NODECLASS, "True", NODECLASS)


def usage(claims: Sequence[Mapping[str, Any]]) -> Usage:
    live = [c for c in claims if not (c.get("metadata") or {}).get("deletionTimestamp")]
    total = add(*(parse_resources((c.get("status") or {}).get("capacity")) for c in live))
    return Usage(len(live), render(total))


def claims_of(kube: Kube, pool: str, watched: ObjectCache | None = None) -> list[Obj]:
    """The pool's NodeClaims: from the worker's NodeClaim watch while it is synced, else
    listed. A burst reports each pool every couple of seconds, and listing every claim of
    the pool each time was the largest read of a 1,000-node burst, for the API server and
    for this process's JSON parsing (docs/performance.md, session 26)."""
    if watched is not None and watched.synced:
        return [
            c
            for c in watched.items()
            if ((c.get("metadata") or {}).get("labels") or {}).get(L.NODEPOOL) == pool
        ]
    return nodeclaims.list_(kube, nodepool=pool)[0]


def report(
    kube: Kube,
    name: str,
    watched: ObjectCache | None = None,
    resource: CustomResource = EC2NODECLASS,
) -> list[cond.Condition]:
    """Bring ``name``'s status up to date; return the conditions that newly turned False.
    ``watched``: the worker's NodeClaim watch, read instead of listing the pool's claims;
    ``resource``: the cluster's node class kind."""

    def write() -> list[cond.Condition]:
        pool = reporting.live(lambda: nodepools.get(kube, name))
        if pool is None:
            return []
        try:
            nodeclass: Obj | None = nodeclasses.get(
                kube, str(nodeclass_ref(pool).get("name") or ""), resource
            )
        except NotFound:
            nodeclass = None
        wanted = [validation(pool), nodeclass_readiness(pool, nodeclass, resource)]
        unknown, class_generation = registration_health.reset(pool, nodeclass)
        health = unknown or registration_health.TRACKER.wanted(pool)
        if health is not None:
            wanted.append(health)
        status = pool.get("status") or {}
        existing = status.get("conditions") or []
        turned_false = reporting.newly_false(existing, wanted)
        if reporting.needs_write(existing, wanted) or unknown is not None:
            pool = nodepools.set_conditions(kube, pool, wanted)
        if class_generation is not None:
            pool = nodepools.record_nodeclass_generation(kube, pool, class_generation)
        now = usage(claims_of(kube, name, watched))
        old = status.get("resources") or {}
        if (status.get("nodes"), old) != (now.nodes, now.resources):
            gone: dict[str, str | None] = {k: None for k in old if k not in now.resources}
            nodepools.record_usage(kube, pool, nodes=now.nodes, resources=gone | now.resources)
        return turned_false

    turned_false = retry_conflicts(write)
    reporting.warn(kube, "NodePool", name, turned_false, "karpenter.sh/v1")
    return turned_false
