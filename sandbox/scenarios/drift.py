"""``drift``: a NodePool's requirements change under running nodes → nodes rolled in budget.

Four pods that each need a node of their own (required anti-affinity on the hostname) run on
a NodePool of the scenario's own whose disruption budget is ``nodes: "2"``, behind a PDB
(``maxUnavailable: 2``). Once they run, the pool's requirements are changed to exclude the
instance types the nodes have (``node.kubernetes.io/instance-type NotIn [...]``), as an
operator moving off a type would. Every node is now drifted (``RequirementsDrifted``); only
the worker acts from here: its DisruptionWorkflow replaces them, at most the budget at once,
each replacement Initialized before the old node is drained.

The pool's ``consolidateAfter`` is ``0s`` and its policy ``WhenEmpty``: the engine applies
``consolidateAfter`` to drifted nodes too (docs/disruption.md), and the scenario is about
drift, not about consolidating the replacements.

Summary figures beyond the common ones (``nodes`` and ``costPerHour``: the rolled fleet):
``nodesRolled``, ``secondsToRolled`` (from the requirements change until no old NodeClaim
is left and the pods run on new nodes), ``validationDelays``, ``rounds``,
``maxDisrupting`` (most of the pool's nodes tainted or deleting at once, sampled twice a
second) against ``budget``, and ``minPodsRunning`` against ``pdbMinAvailable``. It fails if
the budget or the PDB's promise was broken, or a new node has an excluded instance type.
"""

from __future__ import annotations

import time

from sandbox.scenarios.common import (
    SCENARIO_LABEL,
    Sandbox,
    ScenarioFailed,
    Summary,
    deployment,
    time_left,
)
from sandbox.scenarios.disruption_watch import (
    NODEPOOL_LABEL,
    DisruptionWatch,
    Sample,
    create_nodepool,
    delete_nodepool,
    log_plan,
    patch_nodepool,
    pdb,
    round_timeline,
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
    namespace = sandbox.namespace(NAME)
    selector = f"{SCENARIO_LABEL}={NAME}"
    create_nodepool(
        sandbox,
        POOL,
        requirements=[],
        disruption={
            "consolidationPolicy": "WhenEmpty",
            "consolidateAfter": "0s",
            "budgets": [{"nodes": str(BUDGET)}],
        },
    )
    sandbox.kube.policy.create_namespaced_pod_disruption_budget(
        namespace, pdb(APP, APP, MAX_UNAVAILABLE)
    )
    summary.pods = REPLICAS
    watch = DisruptionWatch(sandbox, namespace, selector, POOL)
    began_disruption: float | None = None
    try:
        began = time.monotonic()
        sandbox.create_deployment(
            namespace,
            deployment(
                APP,
                scenario=NAME,
                replicas=REPLICAS,
                cpu="500m",
                memory="512Mi",
                one_per_node=True,
                node_selector={NODEPOOL_LABEL: POOL},
            ),
        )
        sandbox.wait_all_running(namespace, selector, REPLICAS, timeout=time_left(deadline))
        summary.secondsToAllRunning = time.monotonic() - began
        watch.start()
        before = _wait_steady(sandbox, watch, deadline)
        old_types = sorted(_pool_instance_types(sandbox))
        exclude = {"key": INSTANCE_TYPE_LABEL, "operator": "NotIn", "values": old_types}
        requirements = [*_pool_requirements(sandbox), exclude]
        sandbox.log(
            f"{REPLICAS} pods Running on {len(before.claims)} node(s) of {old_types}; "
            f"changing NodePool {POOL}'s requirements to exclude them"
        )
        changed = began_disruption = time.monotonic()
        patch_nodepool(
            sandbox, POOL, {"spec": {"template": {"spec": {"requirements": requirements}}}}
        )
        final = _wait_rolled(sandbox, watch, before, changed, deadline)
        _report(sandbox, summary, watch, before, final, changed, set(old_types))
    finally:
        watch.stop()
        if began_disruption is not None:
            summary.breakdown = round_timeline(watch.since(began_disruption), began_disruption)
        if watch.errors:
            sandbox.log(f"watch read errors (first): {watch.errors[0]}")
        sandbox.delete_deployments(namespace, [APP])
        sandbox.wait(
            "the Deployment's pods to go",
            lambda: not sandbox.pods(namespace, selector),
            timeout=time_left(deadline),
        )
        sandbox.remove_empty_nodes(timeout=time_left(deadline))
        delete_nodepool(sandbox, POOL)
        sandbox.core.delete_namespace(namespace)


def _pool_nodes(sandbox: Sandbox) -> list[dict[str, object]]:
    return [
        n for n in sandbox.nodes() if n["metadata"].get("labels", {}).get(NODEPOOL_LABEL) == POOL
    ]


def _pool_instance_types(sandbox: Sandbox) -> set[str]:
    return {
        str(n["metadata"]["labels"].get(INSTANCE_TYPE_LABEL))  # type: ignore[index]
        for n in _pool_nodes(sandbox)
    }


def _pool_requirements(sandbox: Sandbox) -> list[dict[str, object]]:
    from activities.kubernetes.resources import NODEPOOL

    pool = sandbox.custom.get_cluster_custom_object(
        NODEPOOL.group, NODEPOOL.version, NODEPOOL.plural, POOL
    )
    return list(pool["spec"]["template"]["spec"].get("requirements") or [])


def _steady(s: Sample) -> bool:
    return (
        s.pods == REPLICAS
        and s.running == REPLICAS
        and not s.deleting_claims
        and not s.uninitialized_claims
        and not s.disrupting
        and len(s.instances) == len(s.claims)
    )


def _wait_steady(sandbox: Sandbox, watch: DisruptionWatch, deadline: float) -> Sample:
    found: list[Sample] = []

    def steady() -> bool:
        s = watch.latest()
        if s is not None and _steady(s):
            found.append(s)
        return bool(found)

    sandbox.wait("the fleet to settle", steady, timeout=time_left(deadline))
    return found[0]


def _wait_rolled(
    sandbox: Sandbox, watch: DisruptionWatch, before: Sample, changed: float, deadline: float
) -> Sample:
    """Until no NodeClaim of before the change is left and the pods run on the new ones."""
    found: list[Sample] = []

    def rolled() -> bool:
        s = watch.latest()
        if s is not None and s.at > changed and _steady(s) and not (s.claims & before.claims):
            found.append(s)
        return bool(found)

    def progress() -> str:
        s = watch.latest()
        if s is None:
            return "no sample yet"
        return (
            f"{len(s.claims & before.claims)} old claim(s) left, {len(s.claims)} claims "
            f"({s.deleting_claims} deleting), {len(s.disrupting)} node(s) disrupting, "
            f"{s.running}/{REPLICAS} pods Running; round {s.rounds.rounds} {s.rounds.phase}: "
            f"{s.rounds.last_summary}"
        )

    try:
        sandbox.wait(
            "every drifted node to be replaced",
            rolled,
            timeout=time_left(deadline),
            interval=1.0,
            progress=progress,
        )
    except ScenarioFailed:
        log_plan(sandbox)
        raise
    return found[0]


def _report(
    sandbox: Sandbox,
    summary: Summary,
    watch: DisruptionWatch,
    before: Sample,
    final: Sample,
    changed: float,
    old_types: set[str],
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
    if new_types & old_types:
        summary.failures.append(
            f"replacements of excluded instance type(s) {sorted(new_types & old_types)}"
        )
