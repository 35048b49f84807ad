"""``burst``: 100 pods with mixed requests created at once → nodes → all Running → gone.

The figure this scenario exists for is ``secondsToAllRunning``: how long 100 pending pods
take to all run, from creating the Deployments (``benchmarks/e2e.py`` runs it with
``--boot-delay 0``; figures in docs/performance.md). Three Deployments, smoke's mix five
times over (web 50 of 250m/512Mi, api 30 of 1/2Gi, batch 20 of 2/4Gi), no spread
constraints, created one right after the other.

A worker that has just started is still loading the instance-type catalog (tens of seconds
against the emulator on 2 cores), so the scenario first warms up as a long-running worker
would be: one pod, its node, then the pod and the node removed again. The burst then starts
from no nodes at all. ``JOINERY_BURST_WARMUP=0`` skips the warm-up (the cold figure).

The summary's ``breakdown`` gives, in seconds from the first create and good to about 1 s
(Kubernetes timestamps have whole seconds): the last pod created (ReplicaSets create pods
at the controller-manager's API rate), the first and last NodeClaim created, all launched,
registered, their Nodes Ready, all initialized, the first and last pod scheduled, all
Running; and ``warmup``, the warm-up pod's own time to Running. Then the Deployments are
deleted, the emptied nodes removed by deleting their NodeClaims (the stand-in for
consolidation), and every instance must be terminated.
"""

from __future__ import annotations

import os
import time

from sandbox.scenarios import smoke
from sandbox.scenarios.common import Sandbox, Summary, Workload, remove_workloads, start_workloads

NAME = "burst"
# smoke's mix of requests five times over, without its zonal spread: 100 pods.
WORKLOADS: tuple[Workload, ...] = tuple(
    (name, replicas * 5, cpu, memory) for name, replicas, cpu, memory in smoke.WORKLOADS
)
WARMUP: tuple[Workload, ...] = (("warmup", 1, "250m", "512Mi"),)
WARMUP_ENV = "JOINERY_BURST_WARMUP"


def run(sandbox: Sandbox, summary: Summary, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    breakdown: dict[str, float] = {}
    if os.environ.get(WARMUP_ENV, "1") != "0":
        warm = Summary(scenario=f"{NAME}-warmup")
        warmed = start_workloads(sandbox, warm, warm.scenario, WARMUP, deadline=deadline)
        remove_workloads(sandbox, warmed, WARMUP, deadline=deadline)
        summary.failures += [f"warm-up: {failure}" for failure in warm.failures]
        if warm.secondsToAllRunning is not None:
            breakdown["warmup"] = warm.secondsToAllRunning
    else:
        sandbox.log(f"{WARMUP_ENV}=0: no warm-up, the burst pays for the catalog load")

    started = start_workloads(sandbox, summary, NAME, WORKLOADS, deadline=deadline)
    breakdown |= sandbox.timeline(started.namespace, started.selector, started.created_at)
    if summary.secondsToAllRunning is not None:
        breakdown["allRunning"] = summary.secondsToAllRunning
    summary.breakdown = breakdown
    sandbox.log(
        "breakdown (s from the first create): "
        + ", ".join(f"{k} {v:.1f}" for k, v in breakdown.items())
    )
    remove_workloads(sandbox, started, WORKLOADS, deadline=deadline)
