"""``smoke``: 20 pods with mixed requests and a zonal spread → nodes → all Running → gone.

Three Deployments (20 pods: 10 small, 6 medium, 4 large), each spread over zones with
``maxSkew: 1``. Joinery must launch nodes for them until every pod is Running. Then the
Deployments are deleted and the emptied nodes removed by deleting their NodeClaims (the
stand-in for consolidation), and every instance must be terminated.
"""

from __future__ import annotations

import time

from sandbox.scenarios.common import (
    SCENARIO_LABEL,
    ZONE_LABEL,
    Sandbox,
    Summary,
    deployment,
    per_zone,
)

NAME = "smoke"
WORKLOADS = (  # name, replicas, cpu, memory
    ("web", 10, "250m", "512Mi"),
    ("api", 6, "1", "2Gi"),
    ("batch", 4, "2", "4Gi"),
)


def run(sandbox: Sandbox, summary: Summary, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    ns = sandbox.namespace(NAME)
    expected = sum(replicas for _, replicas, _, _ in WORKLOADS)
    summary.pods = expected
    selector = f"{SCENARIO_LABEL}={NAME}"

    began = time.monotonic()
    for name, replicas, cpu, memory in WORKLOADS:
        sandbox.create_deployment(
            ns,
            deployment(
                name, scenario=NAME, replicas=replicas, cpu=cpu, memory=memory, zonal_spread=True
            ),
        )
    sandbox.log(f"created {expected} pods in {ns}; waiting for Joinery to launch nodes")
    pods = sandbox.wait_all_running(
        ns, selector, expected, timeout=max(10.0, deadline - time.monotonic())
    )
    summary.secondsToAllRunning = time.monotonic() - began
    instances = sandbox.live_instances()
    summary.nodes = len(instances)
    summary.costPerHour = sandbox.cost_per_hour(instances)
    sandbox.log(
        f"all {expected} pods Running after {summary.secondsToAllRunning:.1f}s on "
        f"{summary.nodes} node(s): "
        + ", ".join(f"{i.instance_type}/{i.capacity_type}/{i.zone}" for i in instances)
        + f" (${summary.costPerHour:.4f}/h)"
    )
    if not instances:
        summary.failures.append("pods are Running but no instance was launched")

    # The kube-scheduler enforces the spread over the zones that have nodes *when each pod
    # binds*, so the final skew depends on which node registered first; what Joinery decides
    # is where to launch, and a zonal spread must make it launch in more than one zone.
    zones = {
        n["metadata"]["name"]: n["metadata"].get("labels", {}).get(ZONE_LABEL, "")
        for n in sandbox.nodes()
    }
    for name, _, _, _ in WORKLOADS:
        mine = [p for p in pods if p["metadata"]["labels"].get("app") == name]
        sandbox.log(f"{name}: pods per zone {per_zone(mine, zones)}")
    used = {i.zone for i in instances}
    if len(used) < 2:
        summary.failures.append(f"a zonal spread launched nodes in {len(used)} zone(s) only")

    sandbox.delete_deployments(ns, [name for name, _, _, _ in WORKLOADS])
    sandbox.wait(
        "the Deployments' pods to go",
        lambda: not sandbox.pods(ns, selector),
        timeout=max(10.0, deadline - time.monotonic()),
    )
    removed = sandbox.remove_empty_nodes(timeout=max(10.0, deadline - time.monotonic()))
    sandbox.log(f"deleted {removed} empty NodeClaim(s); waiting for their instances to go")
    sandbox.core.delete_namespace(ns)
