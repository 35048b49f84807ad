"""NodeClaims whose NodePool is gone or being deleted: deleted, so their lifecycles drain
and terminate them.

Karpenter gets this from Kubernetes' own garbage collector: every NodeClaim carries an owner
reference to its NodePool, and Joinery's claims do too (``activities.planning.plan``), so a
deleted pool's claims normally go at once. This step is the backstop for claims without the
reference (made by hand, by an older Joinery, or left by ``--cascade=orphan`` and a pool
re-created under another UID). Claims are listed before pools, so a pool created while the
claims were read is seen; a claim without the ``karpenter.sh/nodepool`` label is not ours.
"""

from __future__ import annotations

import contextlib
from datetime import datetime

from activities.deps import Deps
from activities.garbage.types import Collected, CollectInput
from activities.kubernetes import nodeclaims, nodepools
from activities.kubernetes.errors import NotFound
from models import labels as L


def collect(deps: Deps, inp: CollectInput, now: datetime) -> Collected:
    del inp, now  # a missing pool is missing at once; no grace applies
    claims, _ = nodeclaims.list_(deps.kube)
    pools, _ = nodepools.list_(deps.kube)
    live = {p["metadata"]["name"] for p in pools if not p["metadata"].get("deletionTimestamp")}
    out = Collected()
    for claim in claims:
        meta = claim["metadata"]
        pool = (meta.get("labels") or {}).get(L.NODEPOOL)
        if not pool or pool in live or meta.get("deletionTimestamp"):
            continue
        with contextlib.suppress(NotFound):
            nodeclaims.delete(deps.kube, meta["name"], uid=meta.get("uid"))
        out.removed.append(meta["name"])
    return out
