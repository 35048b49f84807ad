"""Launching a command's replacements and watching them initialize.

Replacements are created from the bodies the compute activity built (pool template,
requirements, requests, the template hash annotations) and their lifecycles started the one
way every NodeClaim's is (``activities.lifecycle.start``). Readiness is read from the
claims' conditions: ``Initialized=True`` is ready; a claim that is gone, being deleted or
whose ``Launched`` is False (insufficient capacity) has failed.

Each step tells Karpenter's event for it (``activities.disruption.events``): launching and
waiting on the replacements, terminating on the candidates as they are deleted.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from temporalio.client import Client

from activities.deps import Deps
from activities.disruption import events
from activities.disruption.types import LaunchInput, Readiness
from activities.kubernetes import conditions as cond
from activities.kubernetes import nodeclaims
from activities.kubernetes.errors import NotFound
from activities.lifecycle.start import start_lifecycle
from activities.planning import create
from models import conditions
from models import labels as L


async def launch(client: Client, deps: Deps, task_queue: str, inp: LaunchInput) -> list[str]:
    """Create the replacement NodeClaims as the provisioner does (a retry finds the claims it
    made) and start their lifecycles."""
    reason = inp.reason or "disruption"
    made = await asyncio.to_thread(create.create, deps, inp.replacements, reason)
    for claim in made:
        await asyncio.to_thread(events.launching, deps.kube, claim.name, claim.uid, reason)
        await start_lifecycle(
            client,
            cluster=deps.cluster,
            task_queue=task_queue,
            name=claim.name,
            summary=f"replacement · {claim.summary}",
            search_attributes=inp.search_attributes,
        )
    return [c.name for c in made]


def readiness(deps: Deps, names: list[str]) -> Readiness:
    out = Readiness()
    for name in names:
        try:
            claim = nodeclaims.get(deps.kube, name)
        except NotFound:
            out.failed[name] = "the replacement NodeClaim is gone"
            continue
        launched = cond.find(
            (claim.get("status") or {}).get("conditions") or [], conditions.LAUNCHED
        )
        if claim["metadata"].get("deletionTimestamp"):
            out.failed[name] = "the replacement NodeClaim is being deleted"
        elif launched is not None and launched.get("status") == "False":
            out.failed[name] = f"launch failed: {launched.get('reason')}"
        elif cond.is_true(claim, conditions.INITIALIZED):
            out.initialized.append(name)
        else:
            out.pending.append(name)
            events.waiting_readiness(deps.kube, name)
    return out


def delete(deps: Deps, names: list[str]) -> int:
    """Delete NodeClaims (their lifecycles drain them through PDBs); gone ones count.

    A claim marked for disruption (its ``DisruptionReason`` condition, set by ``mark``) is
    a candidate: deleting it is the disruption Karpenter counts
    (``karpenter_nodeclaims_disrupted_total``) and tells (``DisruptionTerminating``). The
    undo path deletes replacements, which carry no such condition."""
    for name in names:
        with contextlib.suppress(NotFound):
            claim = nodeclaims.get(deps.kube, name)
            disrupting = cond.find(
                (claim.get("status") or {}).get("conditions") or [], conditions.DISRUPTION_REASON
            )
            if disrupting is not None and not claim["metadata"].get("deletionTimestamp"):
                _disrupted(deps, claim, str(disrupting.get("reason") or ""))
            nodeclaims.delete(deps.kube, name)
    return len(names)


def _disrupted(deps: Deps, claim: dict[str, Any], reason: str) -> None:
    meta = claim["metadata"]
    labels = meta.get("labels") or {}
    deps.counters.nodeclaim_disrupted(
        str(labels.get(L.NODEPOOL) or ""), reason, str(labels.get(L.CAPACITY_TYPE) or "")
    )
    node = str((claim.get("status") or {}).get("nodeName") or "")
    subject = events.Subject(node, str(meta["name"]), claim_uid=str(meta.get("uid") or ""))
    events.terminating(deps.kube, subject, reason)
