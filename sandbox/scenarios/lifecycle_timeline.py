"""Where a burst's NodeClaims spent their way to a launched instance, from their histories.

The pods' journeys (``pod_journeys``) say how long a claim took to be ``Launched``, not
where that time went inside Joinery. Each NodeClaim's lifecycle history does: when the
workflow started, when its first workflow task reached a worker, when the launch (a local
activity since lifecycle shape 3, recorded as a marker) was scheduled and when it
completed in the worker, and when the task that carried it completed. For ``scale``, per
claim of the burst:

* ``claimToStart``: the claim's creation to its workflow's start (the provisioner's
  ``start_lifecycles`` after its ``plan_and_create``);
* ``startToTask``: the start to the first workflow task starting on a worker (the server's
  dispatch and the worker's workflow-task slots);
* ``taskToLaunch``: that task starting to the launch being scheduled (prepare: the
  finalizer's write);
* ``launch``: the launch in the worker (lookups, the CreateFleet batch, tags, the claim's
  status writes);
* ``launchToRecorded``: the launch's end to its task completing at the server.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from models import contract
from models.contract import NodeClaimActivity
from sandbox.scenarios.stats import percentile

STAGES = ("claimToStart", "startToTask", "taskToLaunch", "launch", "launchToRecorded")
# Histories fetched at once (the dev server answers each in milliseconds).
CONCURRENCY = 16


def _seconds(value: Any) -> float | None:
    """A marker's time: ``{"seconds", "nanos"}`` or RFC 3339 text."""
    if isinstance(value, dict) and "seconds" in value:
        return int(value["seconds"]) + int(value.get("nanos", 0)) / 1e9
    if isinstance(value, str):
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    return None


def launch_path(events: Iterable[Any], claim_created: float) -> dict[str, float] | None:
    """One lifecycle's stages (see the module docstring); None before its launch recorded."""
    started = first_task = None
    for event in events:
        at = event.event_time.ToDatetime().timestamp()
        if started is None and event.HasField("workflow_execution_started_event_attributes"):
            started = at
        elif first_task is None and event.HasField("workflow_task_started_event_attributes"):
            first_task = at
        elif event.HasField("marker_recorded_event_attributes"):
            details = event.marker_recorded_event_attributes.details
            if "data" not in details or not details["data"].payloads:
                continue
            data = json.loads(details["data"].payloads[0].data)
            if data.get("activity_type") != NodeClaimActivity.LAUNCH:
                continue
            scheduled = _seconds(data.get("original_schedule_time"))
            completed = _seconds(data.get("complete_time"))
            if None in (started, first_task, scheduled, completed):
                return None
            assert started is not None and first_task is not None
            assert scheduled is not None and completed is not None
            return {
                "claimToStart": started - claim_created,
                "startToTask": first_task - started,
                "taskToLaunch": scheduled - first_task,
                "launch": completed - scheduled,
                "launchToRecorded": at - completed,
            }
    return None


def summarize(paths: list[dict[str, float]]) -> dict[str, Any]:
    """p50, p99 and max of each stage over the claims whose launch is recorded."""
    out: dict[str, Any] = {"claims": len(paths)}
    for stage in STAGES:
        values = [p[stage] for p in paths]
        if values:
            out[stage] = {
                "p50": round(percentile(values, 0.5), 1),
                "p99": round(percentile(values, 0.99), 1),
                "max": round(max(values), 1),
            }
    return out


async def _paths(
    address: str, namespace: str, cluster: str, claims: dict[str, float]
) -> list[dict[str, float]]:
    from temporalio.client import Client

    client = await Client.connect(address, namespace=namespace)
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(name: str, created: float) -> dict[str, float] | None:
        async with gate:
            handle = client.get_workflow_handle(contract.nodeclaim_id(cluster, name))
            history = await handle.fetch_history()
        return launch_path(history.events, created)

    found = await asyncio.gather(*(one(n, c) for n, c in claims.items()))
    return [p for p in found if p is not None]


def lifecycle_stages(
    address: str, namespace: str, cluster: str, claims: dict[str, float]
) -> dict[str, Any]:
    """The stages of ``claims`` (name: creation time, epoch seconds), summarized."""
    return summarize(asyncio.run(_paths(address, namespace, cluster, claims)))
