"""NodeClaims whose instance is gone (terminated or unknown to the cloud): deleted.

As Karpenter's core garbage collector, with two guards of our own. Only claims launched more
than the grace period ago are looked at (the cloud's reads are eventually consistent, and a
claim that never launched is the registration timeout's business). An instance missing from
the owned list is confirmed gone by asking the cloud for it by id, so a claim is never
deleted on the word of a tag filter alone. As Karpenter, a claim whose Node is still Ready is
kept: its kubelet is alive, whatever the cloud API says. Deleting the claim hands it to its
lifecycle workflow, which terminates (already done), skips the drain of a dead node and
finalizes.

The pass also records where each live claim's instance was placed, on claims that lack it
(``activities.status.claim_placement``): it has read both lists already.
"""

from __future__ import annotations

import contextlib
from datetime import datetime, timedelta
from typing import Any

from activities.cloud.errors import InstanceNotFound
from activities.deps import Deps
from activities.garbage import reservation_ends
from activities.garbage.types import Collected, CollectInput
from activities.kubernetes import conditions as cond
from activities.kubernetes import nodeclaims, nodes
from activities.kubernetes.errors import NotFound
from activities.status import claim_placement
from activities.timestamps import parse_iso
from models import conditions


def launched_before(claim: dict[str, Any], cutoff: datetime) -> bool:
    launched = cond.find((claim.get("status") or {}).get("conditions") or [], conditions.LAUNCHED)
    if launched is None or launched.get("status") != "True":
        return False
    when = launched.get("lastTransitionTime")
    return not when or parse_iso(str(when)) <= cutoff


def collect(deps: Deps, inp: CollectInput, now: datetime) -> Collected:
    provider = deps.provider()
    claims, _ = nodeclaims.list_(deps.kube)
    owned = provider.list_owned()
    live = {i.id for i in owned}
    cutoff = now - timedelta(seconds=inp.grace_seconds)
    out = Collected()
    for claim in claims:
        meta = claim["metadata"]
        provider_id = str((claim.get("status") or {}).get("providerID") or "")
        instance = provider.instance_id(provider_id)
        if meta.get("deletionTimestamp") or not instance or instance in live:
            continue
        if not launched_before(claim, cutoff):
            continue
        try:
            provider.get(instance)
            continue  # alive, only not tagged as we expect: not ours to judge
        except InstanceNotFound:
            pass
        node = nodes.by_provider_id(deps.kube, provider_id)
        if node is not None and cond.is_true(node, "Ready"):
            out.waiting.append(meta["name"])
            continue
        with contextlib.suppress(NotFound):
            nodeclaims.delete(deps.kube, meta["name"], uid=meta.get("uid"))
        out.removed.append(meta["name"])
    # The same two lists tell where each live claim's instance was placed: recorded on the
    # claims that lack it (adopted ones), for drift.
    claim_placement.backfill(deps.kube, claims, {i.id: i for i in owned}, provider.instance_id)
    # and which reserved claims' reservations have ended or are about to
    reservation_ends.apply(deps.kube, provider, claims)
    return out
