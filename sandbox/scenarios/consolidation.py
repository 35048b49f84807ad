"""``consolidation``: a Deployment scaled from 40 pods to 4 behind a PDB → a cheaper fleet.

40 pods (1 CPU, 1 GiB each; 250m and 512 MiB on Azure, whose emulated region has only small
D sizes) make Joinery launch a fleet; then the Deployment is scaled to 4 and the NodePool's
``consolidateAfter`` set to ``0s`` (so the scenario does not sit out the default pool's
minute). From then on only the worker acts: its DisruptionWorkflow deletes the
nodes whose pods fit elsewhere and replaces the others by cheaper ones, draining through the
PDB (``maxUnavailable: 1``). A :class:`~sandbox.scenarios.disruption_watch.DisruptionWatch`
samples the cluster twice a second meanwhile.

The fleet has settled when nothing is in flight (every NodeClaim initialized, none being
deleted, the pods Running) and the DisruptionWorkflow has begun a round since then that found
nothing to disrupt, or has stayed idle for 35 s; ``joinery plan --disruption`` must then
agree that there is nothing left to do.

Summary figures beyond the common ones (``costPerHour`` and ``nodes`` are the fleet's after
consolidation; ``secondsToAllRunning`` is the 40 pods' scale-up):

- ``costPerHourBefore``, ``nodesBefore``: the fleet when the scale-down was made;
- ``secondsToCheaperFleet``: from the scale-down until the live instances were the final
  ones (the last old instance terminated, the last replacement running);
- ``validationDelaySeconds``: the 15 s validation delays the rounds waited in that time,
  ``validationDelays`` of them (Karpenter's, a durable timer here);
- ``joinerySeconds``: the first minus the second, Joinery's own time;
- ``rounds``: the disruption rounds that ran in that time;
- ``minPodsRunning`` (lowest count of the 4 pods Running, sampled), ``pdbMinAvailable`` (what
  the PDB promises: 3) and ``podsAlwaysRunning`` (all 4 in every sample);
- ``maxDisrupting``: most of the pool's nodes tainted or deleting at once, and
  ``budgetExceeded``: samples where that was above the pool's budget (10% of its nodes).

- ``fixpoint``: ``joinery plan --disruption`` on the settled cluster proposes nothing, and
  ``remaining``: what it says of each node left (why it is blocked or kept).

It fails when the fleet is not cheaper or not a fixpoint, the PDB's promise or the budget
was broken, or the fleet did not settle in time.
"""

from __future__ import annotations

import math
import os
import time

from sandbox.scenarios.common import Sandbox, Summary
from sandbox.scenarios.disruption_watch import (
    DisruptionRun,
    DisruptionWatch,
    Sample,
    explain,
    last_change,
    plan_disruption,
    steady,
)

NAME = "consolidation"
POOL = "consolidation"
APP = "web"
REPLICAS_UP = 40
REPLICAS_DOWN = 4
CPU, MEMORY = "1", "1Gi"
# The emulated Azure region's D sizes of at most 8 vCPUs have 2 or 4: 1-CPU pods would need
# about 30 VMs there. Smaller pods make a fleet of the EC2 run's shape (a handful of nodes).
AZURE_CPU, AZURE_MEMORY = "250m", "512Mi"
# Nodes of at most 8 vCPUs, so 40 pods spread over several of them.
MAX_NODE_CPUS = 8
MAX_UNAVAILABLE = 1
BUDGET_PERCENT = 10  # Karpenter's default budget: the pool sets none
VALIDATION_DELAY_SECONDS = 15.0  # workflows.disruption.state.VALIDATION_DELAY
# With nothing in flight and no round for this long (the debounce's 30 s at most), the fleet
# is taken as settled; the fixpoint check then says whether Joinery left anything undone.
QUIET_SECONDS = 35.0
CONSOLIDATE_AFTER_ENV = "JOINERY_CONSOLIDATION_CONSOLIDATE_AFTER"


def run(sandbox: Sandbox, summary: Summary, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    with DisruptionRun(sandbox, summary, NAME, POOL, APP, deadline) as run:
        run.setup(
            requirements=[sandbox.cloud.max_cpu_requirement(MAX_NODE_CPUS)],
            disruption={
                "consolidationPolicy": "WhenEmptyOrUnderutilized",
                "consolidateAfter": os.environ.get(CONSOLIDATE_AFTER_ENV, "0s"),
            },
            max_unavailable=MAX_UNAVAILABLE,
        )
        azure = sandbox.cloud.name == "azure"
        cpu, memory = (AZURE_CPU, AZURE_MEMORY) if azure else (CPU, MEMORY)
        before = run.start(REPLICAS_UP, cpu, memory)
        sandbox.log(
            f"{REPLICAS_UP} pods Running on {len(before.instances)} node(s) "
            f"(${before.cost:.4f}/h); scaling to {REPLICAS_DOWN}"
        )
        scaled = run.began = time.monotonic()
        sandbox.apps.patch_namespaced_deployment_scale(
            APP, run.namespace, {"spec": {"replicas": REPLICAS_DOWN}}
        )
        watch = run.watch
        assert watch is not None
        final = run.wait_for(
            "the fleet to consolidate and settle",
            lambda _: _consolidated(watch.since(scaled)),
            REPLICAS_DOWN,
        )
        _report(summary, watch, before, final, scaled)
        _check_fixpoint(sandbox, summary)


def _steady_since(samples: list[Sample]) -> Sample | None:
    """The first of the trailing samples in which nothing was in flight (None if the last
    one has something in flight)."""
    first = None
    for s in reversed(samples):
        if not steady(s, REPLICAS_DOWN):
            break
        first = s
    return first


def _consolidated(samples: list[Sample]) -> bool:
    """Whether the fleet has settled after the scale-down (see the module's docstring)."""
    if not samples:
        return False
    s = samples[-1]
    change = last_change(samples, lambda x: (x.claims, x.instances))
    calm = _steady_since(samples)
    if change is None or change is samples[0] or calm is None:
        return False
    # A round that began once nothing was in flight found nothing to do (a round begun
    # earlier may have read a passing state: a node still going, a pod not yet Ready);
    # or, if no round came, the workflow stayed idle for longer than its debounce.
    confirmed = s.rounds.rounds > calm.rounds.rounds and s.rounds.idle_with_nothing_to_do
    quiet = s.rounds.phase == "Idle" and s.at - calm.at >= QUIET_SECONDS
    return confirmed or quiet


def _check_fixpoint(sandbox: Sandbox, summary: Summary) -> None:
    """The settled fleet must be one ``joinery plan --disruption`` would leave alone: a round
    that found nothing only because of something passing (a pod not yet Ready) must not be
    taken for the end."""
    decision = plan_disruption(sandbox)
    summary.extra["fixpoint"] = not decision["commands"]
    # why each remaining node stays (or what would still be done), as an operator would ask
    summary.extra["remaining"] = explain(decision)
    if decision["commands"]:
        summary.failures.append(
            "settled, but joinery plan --disruption still proposes: "
            + "; ".join(line for line in explain(decision) if line.startswith("command"))
        )


def budget_excess(samples: list[Sample], percent: int) -> int:
    """Samples where more of the pool's nodes were being disrupted than ``percent`` of its
    initialized nodes allow (rounded up, as Karpenter counts)."""
    over = 0
    for s in samples:
        total = len(s.claims) + s.deleting_claims - s.uninitialized_claims
        if len(s.disrupting) > math.ceil(total * percent / 100):
            over += 1
    return over


def _report(
    summary: Summary, watch: DisruptionWatch, before: Sample, final: Sample, scaled: float
) -> None:
    samples = watch.since(scaled)
    fleet = last_change(samples, lambda s: s.instances)
    assert fleet is not None
    seconds = fleet.at - scaled
    validations = fleet.rounds.validations - before.rounds.validations
    delays = validations * VALIDATION_DELAY_SECONDS
    # The PDB's promise holds from the moment the scale-down took effect.
    first_down = next((i for i, s in enumerate(samples) if s.pods == REPLICAS_DOWN), 0)
    available = samples[first_down:]
    min_running = min(s.running for s in available)
    floor = REPLICAS_DOWN - MAX_UNAVAILABLE
    excess = budget_excess(samples, BUDGET_PERCENT)
    summary.nodes = len(final.instances)
    summary.costPerHour = final.cost
    summary.extra = {
        "podsAfter": final.running,
        "nodesBefore": len(before.instances),
        "costPerHourBefore": round(before.cost, 5),
        "secondsToCheaperFleet": round(seconds, 1),
        "validationDelays": validations,
        "validationDelaySeconds": delays,
        "joinerySeconds": round(seconds - delays, 1),
        "rounds": fleet.rounds.rounds - before.rounds.rounds,
        "minPodsRunning": min_running,
        "pdbMinAvailable": floor,
        "podsAlwaysRunning": min_running == REPLICAS_DOWN,
        "maxDisrupting": max(len(s.disrupting) for s in samples),
        "budgetExceeded": excess,
        "samples": len(samples),
    }
    if final.cost >= before.cost:
        summary.failures.append(
            f"the fleet is not cheaper: ${final.cost:.4f}/h after, ${before.cost:.4f}/h before"
        )
    if min_running < floor:
        summary.failures.append(
            f"only {min_running} of {REPLICAS_DOWN} pods Running at one point; the PDB promises "
            f"{floor}"
        )
    if excess:
        summary.failures.append(
            f"{excess} sample(s) with more nodes disrupting than the {BUDGET_PERCENT}% budget"
        )
