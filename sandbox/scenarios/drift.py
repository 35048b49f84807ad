"""``drift``: a NodePool's requirements change under running nodes → nodes rolled in budget.

Four pods that each need a node of their own (required anti-affinity on the hostname) run on
a NodePool of the scenario's own whose disruption budget is ``nodes: "2"``, behind a PDB
(``maxUnavailable: 2``). Once they run, the pool's requirements are changed to exclude the
instance types the nodes have (``node.kubernetes.io/instance-type NotIn [...]``), as an
operator moving off a type would. Every node is now drifted (``RequirementsDrifted``); only
the worker acts from here: its DisruptionWorkflow replaces them, at most the budget at once,
each replacement Initialized before the old node is drained.

On Azure the change is to the pool's own AKSNodeClass instead (its OS disk size:
``NodeClassDrift``, ``sandbox/scenarios/aks_drift.py``), and the replacements must be VMs
with the new OS disk.

The pool's ``consolidateAfter`` is ``0s`` and its policy ``WhenEmpty``: drift is not gated by
``consolidateAfter`` (docs/disruption.md), and the scenario is about drift, not about
consolidating the replacements.

Summary figures beyond the common ones (``nodes`` and ``costPerHour``: the rolled fleet):
``nodesRolled``, ``secondsToRolled`` (from the requirements change until no old NodeClaim
is left and the pods run on new nodes), ``validationDelays``, ``rounds``,
``maxDisrupting`` (most of the pool's nodes tainted or deleting at once, sampled twice a
second) against ``budget``, and ``minPodsRunning`` against ``pdbMinAvailable``. It fails if
the budget or the PDB's promise was broken, or a new node has an excluded instance type.
"""

from __future__ import annotations

import time

from sandbox.scenarios import aks_drift
from sandbox.scenarios.common import Obj, Sandbox, Summary
from sandbox.scenarios.disruption_watch import (
    NODEPOOL_LABEL,
    DisruptionRun,
    DisruptionWatch,
    Sample,
    patch_nodepool,
    steady,
)

NAME = "drift"
POOL = "drift"
APP = "roll"
REPLICAS = 4
BUDGET = 2
MAX_UNAVAILABLE = 2
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"


def run(sandbox: Sandbox, summary: Summary, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    azure = sandbox.cloud.name == "azure"
    if azure:
        aks_drift.own_nodeclass(sandbox, POOL)
    try:
        _run(sandbox, summary, deadline, azure)
    finally:
        if azure:
            aks_drift.delete_nodeclass(sandbox, POOL)


def _run(sandbox: Sandbox, summary: Summary, deadline: float, azure: bool) -> None:
    with DisruptionRun(sandbox, summary, NAME, POOL, APP, deadline) as run:
        run.setup(
            requirements=[],
            disruption={
                "consolidationPolicy": "WhenEmpty",
                "consolidateAfter": "0s",
                "budgets": [{"nodes": str(BUDGET)}],
            },
            max_unavailable=MAX_UNAVAILABLE,
            node_class=POOL if azure else None,
        )
        before = run.start(REPLICAS, "500m", "512Mi", one_per_node=True)
        assert run.watch is not None
        old_types = sorted(_pool_instance_types(sandbox))
        if azure:
            sandbox.log(f"{REPLICAS} pods Running on {len(before.claims)} node(s) of {old_types}")
            changed = run.began = time.monotonic()
            sandbox.log(f"changed {aks_drift.change_nodeclass(sandbox, POOL)}")
        else:
            exclude = {"key": INSTANCE_TYPE_LABEL, "operator": "NotIn", "values": old_types}
            requirements = [*_pool_requirements(sandbox), exclude]
            sandbox.log(
                f"{REPLICAS} pods Running on {len(before.claims)} node(s) of {old_types}; "
                f"changing NodePool {POOL}'s requirements to exclude them"
            )
            changed = run.began = time.monotonic()
            patch_nodepool(
                sandbox, POOL, {"spec": {"template": {"spec": {"requirements": requirements}}}}
            )
        # Until no NodeClaim of before the change is left and the pods run on new nodes.
        final = run.wait_for(
            "every drifted node to be replaced",
            lambda s: s.at > changed and not (s.claims & before.claims) and steady(s, REPLICAS),
            REPLICAS,
        )
        _report(sandbox, summary, run.watch, before, final, changed, set(old_types), azure)
        if azure:
            rolled = {str(n["metadata"]["name"]) for n in _pool_nodes(sandbox)}
            summary.failures.extend(aks_drift.check_rolled(sandbox, rolled))


def _pool_nodes(sandbox: Sandbox) -> list[Obj]:
    return [
        n for n in sandbox.nodes() if n["metadata"].get("labels", {}).get(NODEPOOL_LABEL) == POOL
    ]


def _pool_instance_types(sandbox: Sandbox) -> set[str]:
    return {str(n["metadata"]["labels"].get(INSTANCE_TYPE_LABEL)) for n in _pool_nodes(sandbox)}


def _pool_requirements(sandbox: Sandbox) -> list[dict[str, object]]:
    from activities.kubernetes.resources import NODEPOOL

    pool = sandbox.custom.get_cluster_custom_object(
        NODEPOOL.group, NODEPOOL.version, NODEPOOL.plural, POOL
    )
    return list(pool["spec"]["template"]["spec"].get("requirements") or [])


def _report(
    sandbox: Sandbox,
    summary: Summary,
    watch: DisruptionWatch,
    before: Sample,
    final: Sample,
    changed: float,
    old_types: set[str],
    azure: bool = False,
) -> None:
    samples = [s for s in watch.since(changed) if s.at <= final.at]
    max_disrupting = max(len(s.disrupting) for s in samples)
    min_running = min(s.running for s in samples)
    floor = REPLICAS - MAX_UNAVAILABLE
    new_types = _pool_instance_types(sandbox)
    summary.nodes = len(final.instances)
    summary.costPerHour = final.cost
    summary.extra = {
        "nodesRolled": len(before.claims),
        "secondsToRolled": round(final.at - changed, 1),
        "validationDelays": final.rounds.validations - before.rounds.validations,
        "rounds": final.rounds.rounds - before.rounds.rounds,
        "maxDisrupting": max_disrupting,
        "budget": BUDGET,
        "minPodsRunning": min_running,
        "pdbMinAvailable": floor,
        "costPerHourBefore": round(before.cost, 5),
        "samples": len(samples),
    }
    if max_disrupting > BUDGET:
        summary.failures.append(
            f"{max_disrupting} nodes were disrupting at once; the budget allows {BUDGET}"
        )
    if min_running < floor:
        summary.failures.append(
            f"only {min_running} of {REPLICAS} pods Running at one point; the PDB promises {floor}"
        )
    if new_types & old_types and not azure:  # on Azure, a changed class may keep its types
        summary.failures.append(
            f"replacements of excluded instance type(s) {sorted(new_types & old_types)}"
        )
