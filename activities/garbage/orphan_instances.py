"""Instances launched for this cluster whose NodeClaim does not exist: terminated.

As Karpenter's AWS garbage collector: an instance is an orphan when no NodeClaim has its name
(EC2: the ``karpenter.sh/nodeclaim`` tag) nor its provider id, and it was launched more than the
grace period ago. Joinery creates a claim before launching its instance, so listing claims
first is safe: an instance whose claim appeared after that list was launched even later, and
is inside the grace period. Its Node, if one registered, is deleted too, so the scheduler
stops counting it at once, and let go of: no lifecycle holds it any more (the instance is
terminating, there is nothing left to drain to).
"""

from __future__ import annotations

import contextlib
from datetime import datetime, timedelta
from typing import Any

from activities.deps import Deps
from activities.garbage.types import Collected, CollectInput
from activities.kubernetes import nodeclaims, nodes
from activities.kubernetes.errors import NotFound
from activities.kubernetes.retries import retry_conflicts


def collect(deps: Deps, inp: CollectInput, now: datetime) -> Collected:
    provider = deps.provider()
    claims, _ = nodeclaims.list_(deps.kube)
    names = {c["metadata"]["name"] for c in claims}
    claimed = {
        provider.instance_id(str((c.get("status") or {}).get("providerID") or "")) for c in claims
    }
    grace = timedelta(seconds=inp.grace_seconds)
    out = Collected()
    for instance in provider.leaked(names, now=now, grace=grace):
        if instance.id in claimed:
            continue
        provider.delete(instance.id)
        node = nodes.by_provider_id(deps.kube, instance.provider_id)
        if node is not None:
            release(deps, node)
        out.removed.append(instance.id)
    return out


def release(deps: Deps, node: dict[str, Any]) -> None:
    meta = node["metadata"]
    nodes.delete(deps.kube, meta["name"], uid=meta.get("uid"))

    def let_go() -> None:
        with contextlib.suppress(NotFound):
            nodes.remove_finalizer(deps.kube, nodes.get(deps.kube, meta["name"]))

    retry_conflicts(let_go)
