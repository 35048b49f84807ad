"""``scale``: one burst of N pending pods that each need a node of their own → all Running.

The full path of ``benchmarks/scale.py --pods``: pods through the real control plane (kwok
nodes), the EC2 emulator and the ``joinery dev`` worker, with whatever boot delay ``joinery
dev`` was given (the benchmark uses 0 s). Each pod requests 2 CPU in a NodePool of m5.large
and m5.xlarge (``spread_fleet.create_nodepool``): it fits only an m5.xlarge (3.92 CPU
allocatable), and two do not fit one, so N pods need exactly N nodes without any
anti-affinity term (which would also time the solver's pairwise checks, not the lifecycles).

``JOINERY_SCALE_PODS`` sets N (default 1000). After one warm-up pod (the catalog load, as
``burst`` does), the summary gives ``secondsToAllRunning`` from creating the Deployment, the
``breakdown`` milestones of ``Sandbox.timeline`` and, per pod, pending-to-Running seconds
(creation to the Ready condition; whole seconds, as Kubernetes stamps them) as p50, p99 and
max, and the CPU seconds over the burst of the worker, the Temporal server and this process
(``cpuSeconds``, and ``cpuSecondsPerNode``), and ``podJourneys``: each pod's way split into
the control plane's stages and Joinery's, with Joinery's own time over the burst
(``sandbox/scenarios/pod_journeys.py``), and ``createFleet``: the EC2 emulator's CreateFleet
calls over the burst and their answer times (``sandbox/scenarios/fleet_answers.py``), and
``lifecycleStages``: where the burst's claims spent their way to a launched instance, from
their lifecycles' histories (``sandbox/scenarios/lifecycle_timeline.py``). Then
the Deployment goes, the empty nodes'
claims are deleted and every instance must be terminated (``retiredSeconds``), unless
``JOINERY_SCALE_RETIRE=0``.
"""

from __future__ import annotations

import json
import os
import time
import uuid

from models import labels as L
from sandbox import api_audit
from sandbox.dev import TemporalDevServer
from sandbox.processes import tree_cpu_seconds
from sandbox.scenarios import (
    api_requests,
    fleet_answers,
    lifecycle_timeline,
    pod_journeys,
    round_timeline,
    spread_fleet,
)
from sandbox.scenarios.common import (
    Sandbox,
    Summary,
    _at,
    _condition_at,
    deployment,
    time_left,
)
from sandbox.scenarios.stats import percentile
from sandbox.temporal_server import ProductionTemporal

NAME = "scale"
PODS_ENV = "JOINERY_SCALE_PODS"
# "0": stop after the burst (a before/after of the provisioning path in a third of the time).
RETIRE_ENV = "JOINERY_SCALE_RETIRE"
APP = "scale"
# Written only by Joinery (its claims, its NodeClasses, its unavailable-offerings record).
JOINERY_RESOURCES = ("nodeclaims", "ec2nodeclasses", "configmaps")
CPU, MEMORY = "2", "1Gi"


def _running(sandbox: Sandbox, namespace: str) -> int:
    """Running pods of the app, counted off the raw list (the emulator shares this process:
    deserializing 1,000 pods twice a second would slow it down)."""
    response = sandbox.core.list_namespaced_pod(
        namespace, label_selector=f"app={APP}", _preload_content=False
    )
    items = json.loads(response.data).get("items") or []
    return sum(1 for p in items if (p.get("status") or {}).get("phase") == "Running")


def _cpu(sandbox: Sandbox) -> dict[str, float]:
    """CPU seconds so far of the worker, the Temporal server (with PostgreSQL for the
    production server) and this process (the EC2 emulator, node simulator and scenario)."""
    stack = sandbox.stack
    temporal: list[int] = []
    if isinstance(stack.temporal, TemporalDevServer):
        temporal = [stack.temporal.process.popen.pid]
    elif isinstance(stack.temporal, ProductionTemporal):
        temporal = [
            p.popen.pid for p in (stack.temporal.server, stack.temporal.postgres.process) if p
        ]
    own = os.times()
    control_plane = stack.cluster.pids() if stack.cluster else {}
    return {
        "worker": tree_cpu_seconds(stack.worker.popen.pid) if stack.worker else 0.0,
        "temporal": sum(tree_cpu_seconds(g) for g in temporal),
        "sandbox": own.user + own.system,
        **{name: tree_cpu_seconds(pid) for name, pid in control_plane.items()},
    }


def _api_requests(sandbox: Sandbox) -> dict[str, float] | None:
    """The API server's request counter now; None (and the figure left out) if unreadable."""
    try:
        return api_requests.snapshot(sandbox.kube.api_client)
    except Exception as exc:
        sandbox.log(f"API server request counter unreadable: {exc}")
        return None


def _burst(
    sandbox: Sandbox, pool: str, replicas: int, deadline: float
) -> tuple[str, float, dict[str, float]]:
    """Create the Deployment; wait until all its pods Run. Returns namespace, seconds and
    when each pod was first marked Unschedulable."""
    namespace = sandbox.namespace(NAME)
    body = deployment(APP, scenario=NAME, replicas=replicas, cpu=CPU, memory=MEMORY)
    body["spec"]["template"]["spec"]["nodeSelector"] = {L.NODEPOOL: pool}
    watch = pod_journeys.UnschedulableWatch(sandbox.core, namespace, f"app={APP}").start()
    began = time.monotonic()
    sandbox.create_deployment(namespace, body)
    count = 0

    def done() -> bool:
        nonlocal count
        count = _running(sandbox, namespace)
        return count >= replicas

    sandbox.wait(
        f"{replicas} pods Running",
        done,
        timeout=time_left(deadline),
        interval=1.0,
        progress=lambda: f"{count}/{replicas} Running",
    )
    seconds = time.monotonic() - began
    return namespace, seconds, watch.stop()


def _retire(sandbox: Sandbox, namespace: str, deadline: float) -> None:
    sandbox.delete_deployments(namespace, [APP])
    sandbox.wait(
        "the pods to go",
        lambda: not sandbox.pods(namespace, f"app={APP}"),
        timeout=time_left(deadline),
    )
    sandbox.remove_empty_nodes(timeout=time_left(deadline))
    sandbox.wait_instances_terminated(timeout=time_left(deadline))
    sandbox.core.delete_namespace(namespace)


def run(sandbox: Sandbox, summary: Summary, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    pods = int(os.environ.get(PODS_ENV, "1000"))
    pool = f"scale-{uuid.uuid4().hex[:6]}"
    spread_fleet.create_nodepool(sandbox.kube, pool)

    warm_ns, warm_seconds, _ = _burst(sandbox, pool, 1, deadline)
    _retire(sandbox, warm_ns, deadline)
    sandbox.log(f"warm-up: one pod Running after {warm_seconds:.1f}s; now {pods} pods")

    created_at = time.time()
    cpu_before = _cpu(sandbox)
    requests_before = _api_requests(sandbox)
    audit_log = sandbox.stack.cluster.audit_log_path if sandbox.stack.cluster else None
    audit_from, burst_began = api_audit.size(audit_log) if audit_log else 0, time.time()
    namespace, seconds, unschedulable = _burst(sandbox, pool, pods, deadline)
    burst_ended = time.time()
    cpu_after = _cpu(sandbox)
    requests_after = _api_requests(sandbox)
    summary.pods = pods
    summary.secondsToAllRunning = seconds
    instances = sandbox.live_instances()
    summary.nodes = len(instances)
    summary.costPerHour = sandbox.cost_per_hour(instances)
    breakdown = sandbox.timeline(namespace, f"app={APP}", created_at)
    breakdown["allRunning"] = seconds
    summary.breakdown = breakdown
    burst_pods = sandbox.pods(namespace, f"app={APP}")
    rows = pod_journeys.journeys(burst_pods, sandbox.nodes(), sandbox.nodeclaims(), unschedulable)
    summary.extra["podJourneys"] = pod_journeys.shares(rows)
    waits = []
    for pod in burst_pods:
        created, ready = _at(pod["metadata"].get("creationTimestamp")), _condition_at(pod, "Ready")
        if created is not None and ready is not None:
            waits.append(ready - created)
    if waits:
        summary.extra["pendingToRunning"] = {
            "p50": percentile(waits, 0.5),
            "p99": percentile(waits, 0.99),
            "max": max(waits),
        }
    # over the burst (create to all Running), per node launched
    summary.extra["cpuSecondsPerNode"] = {
        part: round((cpu_after[part] - cpu_before[part]) / max(1, summary.nodes), 3)
        for part in cpu_after
    }
    summary.extra["cpuSeconds"] = {
        part: round(cpu_after[part] - cpu_before[part], 1) for part in cpu_after
    }
    if requests_before is not None and requests_after is not None:
        served = api_requests.delta(requests_before, requests_after)
        summary.extra["apiRequests"] = {
            "total": sum(served.values()),
            "perNode": round(sum(served.values()) / max(1, summary.nodes), 1),
            "joineryPerNode": api_requests.per_node(served, summary.nodes, JOINERY_RESOURCES),
            "served": served,
        }
    if audit_log is not None:  # by client, from the API server's audit log
        time.sleep(2)  # its batch backend writes a second or so late
        counted = api_audit.by_client(audit_log, audit_from, since=burst_began, until=burst_ended)
        summary.extra["apiClients"] = api_audit.table(counted, summary.nodes)
    summary.extra["createFleet"] = fleet_answers.summarize(
        list(sandbox.emulation.fleet_calls), burst_began, burst_ended
    )
    temporal = sandbox.stack.temporal
    if temporal is not None:
        summary.extra["provisionerActivities"] = round_timeline.provisioner_activities(
            temporal.address, temporal.namespace, sandbox.stack.options.cluster_name, created_at
        )
        claims = {
            c["metadata"]["name"]: created
            for c in sandbox.nodeclaims()
            if (created := _at(c["metadata"].get("creationTimestamp"))) is not None
            and created >= created_at - 1
        }
        summary.extra["lifecycleStages"] = lifecycle_timeline.lifecycle_stages(
            temporal.address, temporal.namespace, sandbox.stack.options.cluster_name, claims
        )
    if summary.nodes != pods:
        summary.failures.append(f"{pods} pods ran on {summary.nodes} instances, not one each")
    sandbox.log(
        f"{pods} pods Running after {seconds:.1f}s on {summary.nodes} node(s); breakdown: "
        + ", ".join(f"{k} {v:.1f}" for k, v in breakdown.items())
    )
    if os.environ.get(RETIRE_ENV, "1") == "0":
        summary.fleetKept = True  # the stack's teardown removes it with the emulator
        return
    began = time.monotonic()
    _retire(sandbox, namespace, deadline)
    summary.extra["retiredSeconds"] = round(time.monotonic() - began, 1)
