"""``smoke``: 20 pods with mixed requests and a zonal spread → nodes → all Running → gone.

Three Deployments (20 pods: 10 small, 6 medium, 4 large), each spread over zones with
``maxSkew: 1``. Joinery must launch nodes for them until every pod is Running. Then the
Deployments are deleted and the emptied nodes removed by deleting their NodeClaims (the
stand-in for consolidation), and every instance must be terminated.
"""

from __future__ import annotations

import time

from sandbox.scenarios.common import (
    ZONE_LABEL,
    Sandbox,
    Summary,
    Workload,
    per_zone,
    remove_workloads,
    start_workloads,
)

NAME = "smoke"
WORKLOADS: tuple[Workload, ...] = (  # name, replicas, cpu, memory
    ("web", 10, "250m", "512Mi"),
    ("api", 6, "1", "2Gi"),
    ("batch", 4, "2", "4Gi"),
)


def run(sandbox: Sandbox, summary: Summary, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    started = start_workloads(
        sandbox, summary, NAME, WORKLOADS, deadline=deadline, zonal_spread=True
    )

    # The kube-scheduler enforces the spread over the zones that have nodes *when each pod
    # binds*, so the final skew depends on which node registered first; what Joinery decides
    # is where to launch, and a zonal spread must make it launch in more than one zone.
    zones = {
        n["metadata"]["name"]: n["metadata"].get("labels", {}).get(ZONE_LABEL, "")
        for n in sandbox.nodes()
    }
    for name, _, _, _ in WORKLOADS:
        mine = [p for p in started.pods if p["metadata"]["labels"].get("app") == name]
        sandbox.log(f"{name}: pods per zone {per_zone(mine, zones)}")
    used = {i.zone for i in started.instances}
    if len(used) < 2:
        summary.failures.append(f"a zonal spread launched nodes in {len(used)} zone(s) only")

    remove_workloads(sandbox, started, WORKLOADS, deadline=deadline)
