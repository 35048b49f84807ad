"""Launching a command's replacements and watching them initialize.

Replacements are created from the bodies the compute activity built (pool template,
requirements, requests, the template hash annotations) and their lifecycles started the one
way every NodeClaim's is (``activities.lifecycle.start``). Readiness is read from the
claims' conditions: ``Initialized=True`` is ready; a claim that is gone, being deleted or
whose ``Launched`` is False (insufficient capacity) has failed.
"""

from __future__ import annotations

import asyncio
import contextlib

from temporalio.client import Client

from activities.disruption.types import LaunchInput, Readiness
from activities.kubernetes import conditions as cond
from activities.kubernetes import nodeclaims
from activities.kubernetes.errors import NotFound
from activities.lifecycle.common import Deps
from activities.lifecycle.start import start_lifecycle
from activities.planning import create
from models import conditions


async def launch(client: Client, deps: Deps, task_queue: str, inp: LaunchInput) -> list[str]:
    """Create the replacement NodeClaims as the provisioner does (a retry finds the claims it
    made) and start their lifecycles."""
    made = await asyncio.to_thread(create.create, deps, inp.replacements)
    for claim in made:
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
    return out


def delete(deps: Deps, names: list[str]) -> int:
    """Delete NodeClaims (their lifecycles drain them through PDBs); gone ones count."""
    for name in names:
        with contextlib.suppress(NotFound):
            nodeclaims.delete(deps.kube, name)
    return len(names)
