"""Lifecycle throughput at scale: the dev server and the production server (temporal-server on
PostgreSQL) side by side, with 1, 2 and 3 worker replicas.

Each lifecycle is the whole NodeClaim workflow with instant activities (the ones of
``benchmarks/workflows.py``), so the figure is Temporal's and the workflow's own cost, the
part that does not shrink with a faster cloud. Worker replicas are separate processes (as
Deployment replicas are), so their CPU is measured apart from the driver that starts the
workflows and waits for their results. Reported per run: lifecycles/s, start-to-result
latency p50/p99, worker CPU seconds, server CPU seconds (PostgreSQL's too for the production
server), and persistence writes per lifecycle (the server's ``persistence_requests`` metric,
write operations only).

    python benchmarks/scale.py [--count 1000] [--replicas 1,2,3] [--servers dev,production]
        [--events]

``--events`` lists one sample lifecycle's history events (docs/temporal.md explains each).

``--pods 250,500,1000`` times the full path instead: per size and server, one ``joinery dev
--scenario scale --boot-delay 0 --exit`` (a fresh stack: Temporal, real control plane with kwok
nodes, EC2 emulator, ``joinery worker``), one burst of that many pending pods that each need
a node of their own, until all are Running; then the workload goes and the nodes are
retired (``sandbox/scenarios/scale.py``). It prints each pod's way split into the control
plane's stages and Joinery's own time. ``--control-plane-rates sandbox,upstream`` runs each
size with the sandbox's raised control-plane client rates and with the upstream defaults in
turn (``sandbox/control_plane_rates.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from temporalio.api.enums.v1 import EventType  # noqa: E402
from temporalio.api.history.v1 import HistoryEvent  # noqa: E402
from temporalio.client import Client  # noqa: E402

from benchmarks import process_tree  # noqa: E402
from models import contract  # noqa: E402
from sandbox.processes import ChildProcess, free_ports, tree_cpu_seconds, wait_for  # noqa: E402
from sandbox.scenarios import lifecycle_timeline  # noqa: E402
from workflows.nodeclaim.state import NodeClaimInput  # noqa: E402
from workflows.nodeclaim.workflow import NodeClaimWorkflow  # noqa: E402

WRITE_PREFIXES = ("Create", "Update", "Append", "Delete", "Put", "Set", "Complete", "Upsert")


def persistence_writes(metrics_url: str) -> float:
    with urllib.request.urlopen(metrics_url, timeout=5) as response:
        text = response.read().decode()
    total = 0.0
    for line in text.splitlines():
        if not line.startswith("persistence_requests{"):
            continue
        labels, _, value = line.rpartition(" ")
        for part in labels[labels.index("{") + 1 : -1].split(","):
            name, _, raw = part.partition("=")
            if name == "operation" and raw.strip('"').startswith(WRITE_PREFIXES):
                total += float(value)
    return total


@dataclass
class Server:
    kind: str
    address: str
    groups: list[int]  # processes whose trees' CPU counts as the server's
    metrics_url: str


@contextlib.contextmanager
def server(kind: str, workdir: Path) -> Iterator[Server]:
    if kind == "dev":
        from sandbox.dev import TemporalDevServer

        port, ui_port = free_ports(2)
        dev = TemporalDevServer.start(
            port=port,
            ui_port=ui_port,
            namespace="default",
            db_path=None,
            log_path=workdir / "temporal-dev.log",
            log=lambda _m: None,
        )
        try:
            yield Server(kind, dev.address, [dev.process.popen.pid], "")
        finally:
            dev.stop()
    else:
        from sandbox.temporal_server import ProductionTemporal

        with ProductionTemporal.start(log=lambda _m: None) as prod:
            assert prod.server is not None and prod.postgres.process is not None
            groups = [prod.server.popen.pid, prod.postgres.process.popen.pid]
            yield Server(kind, prod.address, groups, prod.metrics_url)


def spawn_workers(address: str, queue: str, replicas: int, workdir: Path) -> list[ChildProcess]:
    out = []
    for i in range(replicas):
        args = [sys.executable, __file__, "--worker", "--address", address, "--queue", queue]
        out.append(ChildProcess.spawn(f"worker-{i}", args, workdir / f"worker-{i}.log"))
    return out


def event_label(event: HistoryEvent) -> str:
    """One history event in a few words: its type, and for a marker or an activity what it was
    (a local activity's type, a patch's id, a regular activity's type)."""
    label = EventType.Name(event.event_type).removeprefix("EVENT_TYPE_").lower()
    if event.HasField("marker_recorded_event_attributes"):
        marker = event.marker_recorded_event_attributes
        for key in ("data", "patch-data"):
            if key in marker.details and marker.details[key].payloads:
                detail = json.loads(marker.details[key].payloads[0].data)
                return f"{marker.marker_name} {detail.get('activity_type') or detail.get('id')}"
        return f"marker {marker.marker_name}"
    if event.HasField("activity_task_scheduled_event_attributes"):
        return f"{label} {event.activity_task_scheduled_event_attributes.activity_type.name}"
    if event.HasField("upsert_workflow_search_attributes_event_attributes"):
        fields = event.upsert_workflow_search_attributes_event_attributes.search_attributes
        return f"{label} {','.join(fields.indexed_fields)}"
    return label


async def history_shape(client: Client, workflow_id: str) -> dict[str, Any]:
    """One lifecycle's history: events, workflow tasks, activity tasks, local-activity markers."""
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    kinds = [e.event_type for e in history.events]
    return {
        "events": len(kinds),
        "workflow_tasks": kinds.count(EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED),
        "activity_tasks": kinds.count(EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED),
        "markers": kinds.count(EventType.EVENT_TYPE_MARKER_RECORDED),
        "event_list": [event_label(e) for e in history.events],
    }


async def drive(address: str, queue: str, count: int, concurrency: int) -> dict[str, Any]:
    client = await Client.connect(address)
    gate = asyncio.Semaphore(concurrency)
    latencies: list[float] = []
    run_id = uuid.uuid4().hex[:6]

    async def one(i: int) -> None:
        async with gate:
            name = f"scale-{run_id}-{i}"
            t0 = time.perf_counter()
            result = await client.execute_workflow(
                NodeClaimWorkflow.run,
                NodeClaimInput(name, shape=contract.NODECLAIM_SHAPE),
                id=contract.nodeclaim_id("scale", name),
                task_queue=queue,
            )
            assert result == "Terminated", result
            latencies.append(time.perf_counter() - t0)

    await asyncio.gather(*(one(i) for i in range(20)))  # warm-up: caches, sticky queues
    latencies.clear()
    run_id = uuid.uuid4().hex[:6]
    began = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(count)))
    elapsed = time.perf_counter() - began
    latencies.sort()
    shape = await history_shape(client, contract.nodeclaim_id("scale", f"scale-{run_id}-0"))
    return {
        **shape,
        "seconds": elapsed,
        "p50": latencies[len(latencies) // 2],
        "p99": latencies[max(0, int(len(latencies) * 0.99) - 1)],
    }


def measure(kind: str, replicas: int, count: int, concurrency: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="joinery-scale-") as tmp, server(kind, Path(tmp)) as s:
        queue = f"scale-{uuid.uuid4().hex[:6]}"
        workers = spawn_workers(s.address, queue, replicas, Path(tmp))
        try:
            for w in workers:
                wait_for(
                    f"{w.name} polling",
                    lambda w=w: "polling" in w.log_tail(5),  # type: ignore[misc]
                    timeout=60,
                    watch=(w,),
                )
            cpu0_w = sum(tree_cpu_seconds(w.popen.pid) for w in workers)
            cpu0_s = sum(tree_cpu_seconds(g) for g in s.groups)
            writes0 = persistence_writes(s.metrics_url) if s.metrics_url else 0.0
            timing = asyncio.run(drive(s.address, queue, count, concurrency))
            cpu_w = sum(tree_cpu_seconds(w.popen.pid) for w in workers) - cpu0_w
            cpu_s = sum(tree_cpu_seconds(g) for g in s.groups) - cpu0_s
            writes = (persistence_writes(s.metrics_url) - writes0) if s.metrics_url else None
        finally:
            for w in workers:
                w.stop()
    return {
        "server": kind,
        "replicas": replicas,
        "lifecycles": count,
        "concurrency": concurrency,
        "lifecycles_per_second": round(count / timing["seconds"], 1),
        "p50_seconds": round(timing["p50"], 2),
        "p99_seconds": round(timing["p99"], 2),
        "worker_cpu_seconds": round(cpu_w, 1),
        "server_cpu_seconds": round(cpu_s, 1),
        "writes_per_lifecycle": round(writes / count, 1) if writes is not None else None,
        "history_events": timing["events"],
        "workflow_tasks": timing["workflow_tasks"],
        "activity_tasks": timing["activity_tasks"],
        "markers": timing["markers"],
        "event_list": timing["event_list"],
    }


def run_worker(address: str, queue: str) -> None:
    """One worker replica: the NodeClaim workflow with instant activities."""
    from temporalio.worker import Worker

    from benchmarks.workflows import ACTIVITIES
    from worker.running import tuning

    async def main() -> None:
        client = await Client.connect(address)
        async with Worker(
            client,
            task_queue=queue,
            workflows=[NodeClaimWorkflow],
            activities=ACTIVITIES,
            # the slots a `joinery worker` has, with threads for 200 activities at once
            **tuning.worker_options(threads=200),
        ):
            print("polling", flush=True)
            await asyncio.Event().wait()

    asyncio.run(main())


# --servers names as `joinery dev --temporal` spells them
DEV_TEMPORAL = {"dev": "dev", "production": "server"}


def full_path(
    pods: int,
    timeout: float,
    kind: str,
    retire: bool = True,
    rates: str = "sandbox",
    audit: bool = False,
) -> None:
    """One ``joinery dev --scenario scale`` run with ``pods`` pods; prints its figures.
    ``rates``: the control plane's client rates, ``sandbox`` or ``upstream``
    (``sandbox/control_plane_rates.py``); ``audit``: the API server's requests by client too,
    from its audit log (``sandbox/api_audit.py``; the log costs the API server CPU)."""
    from benchmarks.e2e import run_once
    from sandbox import api_audit, control_plane_rates

    os.environ[control_plane_rates.ENV] = rates
    os.environ[api_audit.ENV] = "1" if audit else "0"
    os.environ["JOINERY_SCALE_PODS"] = str(pods)  # sandbox.scenarios.scale.PODS_ENV
    os.environ["JOINERY_SCALE_RETIRE"] = "1" if retire else "0"  # .RETIRE_ENV
    r = run_once(0.0, timeout, cold=False, scenario="scale", temporal=DEV_TEMPORAL[kind])
    waits = r.get("pendingToRunning") or {}
    breakdown = ", ".join(f"{k} {v:.0f}" for k, v in (r.get("breakdown") or {}).items())
    cpu = ", ".join(f"{k} {v}" for k, v in (r.get("cpuSeconds") or {}).items())
    per_node = ", ".join(f"{k} {v}" for k, v in (r.get("cpuSecondsPerNode") or {}).items())
    print(
        f"{kind} server, {rates} control-plane rates, {pods} pods: all Running after "
        f"{r.get('secondsToAllRunning')} s on "
        f"{r.get('nodes')} node(s); pending-to-Running p50 {waits.get('p50')} s, "
        f"p99 {waits.get('p99')} s, max {waits.get('max')} s; "
        f"retired in {r.get('retiredSeconds')} s; "
        f"{'ok' if r.get('ok') else 'FAILED'}; load {r['loadBefore']}->{r['loadAfter']}"
        f"\n  breakdown (s from the create): {breakdown}"
        f"\n  CPU s over the burst: {cpu}; per node: {per_node}",
        flush=True,
    )
    journeys = r.get("podJourneys") or {}
    if journeys.get("burstSeconds") is not None:
        print(
            f"  Joinery's own time {journeys['joineryOwn']:.0f} s (pods waiting on Joinery: "
            f"Unschedulable to Launched, Node to Registered); pods waiting for a usable Node "
            f"{journeys['untilUsable']:.0f} s (first Unschedulable to last usable "
            f"{journeys['joinerySpan']:.0f} s, longest one pod waited "
            f"{journeys['joineryWaitMax']:.0f} s); "
            f"control plane only {journeys['controlPlaneOnly']:.0f} s; burst "
            f"{journeys['burstSeconds']:.0f} s (first create to last Running); "
            f"{journeys['podsTimed']}/{journeys['pods']} pods timed",
            flush=True,
        )
    api = r.get("apiRequests") or {}
    if api:
        mine = api.get("joineryPerNode") or {}
        print(
            f"  API server requests over the burst: {api['total']} ({api['perNode']} per node); "
            f"per node on nodeclaims/ec2nodeclasses/configmaps "
            f"{round(sum(mine.values()), 2)}: "
            + ", ".join(f"{k} {v}" for k, v in mine.items())
            + "\n  all served: "
            + ", ".join(f"{k} {v}" for k, v in list((api.get("served") or {}).items())[:40]),
            flush=True,
        )
    for client, c in (r.get("apiClients") or {}).items():
        rows = ", ".join(f"{k} {v}" for k, v in list(c["requests"].items())[:14])
        print(f"  by client: {client} {c['total']} ({c['perNode']} per node): {rows}", flush=True)
    fleet = r.get("createFleet") or {}
    if fleet.get("calls"):
        print(
            f"  EC2 emulator over the burst: {fleet['calls']} CreateFleet calls for "
            f"{fleet['instances']} instances; answer p50 {fleet['answerP50']} s, "
            f"p99 {fleet['answerP99']} s, max {fleet['answerMax']} s; some call being answered "
            f"{fleet['busySeconds']} s (part of claimToLaunched, not Joinery's)",
            flush=True,
        )
    stages = r.get("lifecycleStages") or {}
    for stage in lifecycle_timeline.STAGES:
        if stage in stages:
            st = stages[stage]
            print(
                f"  lifecycle {stage:<17} p50 {st['p50']} s, p99 {st['p99']} s, "
                f"max {st['max']} s ({stages['claims']} claims' histories)",
                flush=True,
            )
    for label, st in (journeys.get("stages") or {}).items():
        print(
            f"  {label:<24} ({st['whose']}): p50 {st['p50']:.0f} s, p99 {st['p99']:.0f} s, "
            f"max {st['max']:.0f} s ({st['pods']} pods)",
            flush=True,
        )
    for a in r.get("provisionerActivities") or []:
        print(
            f"  provisioner: {a['activity']} scheduled at {a['at']} s, waited {a['waited']} s, "
            f"ran {a['ran']} s (attempt {a['attempt']}), result {a['resultBytes']} bytes"
            + (
                f": {a['created']} claim(s) for {a['pendingPods']} pending pod(s)"
                f" ({a.get('ontoInFlight', 0)} onto in-flight claims, "
                f"{a.get('ontoNodes', 0)} onto Nodes)"
                if "created" in a
                else ""
            ),
            flush=True,
        )
    for failure in r.get("failures") or []:
        print(f"  failure: {failure}", flush=True)
    for line in r.get("stderrTail") or []:
        print(f"  {line}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=1000)
    parser.add_argument("--replicas", default="1,2,3")
    parser.add_argument("--servers", default="dev,production")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--events", action="store_true", help="list one sample lifecycle's history events"
    )
    parser.add_argument("--pods", help="full path: comma-separated burst sizes, e.g. 250,1000")
    parser.add_argument("--timeout", type=float, default=900.0, help="full path: per run")
    parser.add_argument(
        "--no-retire", action="store_true", help="full path: stop once all pods Run"
    )
    parser.add_argument(
        "--control-plane-rates",
        default="sandbox",
        help="full path: comma-separated, each run in turn: sandbox (raised), upstream",
    )
    parser.add_argument(
        "--audit",
        action="store_true",
        help="full path: the API server's requests by client (its audit log, which costs CPU)",
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--address", help=argparse.SUPPRESS)
    parser.add_argument("--queue", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        run_worker(args.address, args.queue)
        return
    if args.pods:
        for pods in (int(n) for n in args.pods.split(",")):
            for kind in args.servers.split(","):
                for rates in args.control_plane_rates.split(","):
                    full_path(pods, args.timeout, kind, not args.no_retire, rates, args.audit)
        return
    header = (
        "server      replicas  lifecycles/s  p50 s  p99 s  worker CPU s  server CPU s"
        "  writes/lifecycle  events  WFTs  activities  markers"
    )
    if not args.json:
        print(header, flush=True)
    for kind in args.servers.split(","):
        for replicas in (int(r) for r in args.replicas.split(",")):
            r = measure(kind, replicas, args.count, args.concurrency)
            if args.json:
                print(json.dumps(r), flush=True)
                continue
            writes = "-" if r["writes_per_lifecycle"] is None else r["writes_per_lifecycle"]
            print(
                f"{kind:<11} {replicas:>8}  {r['lifecycles_per_second']:>12}  "
                f"{r['p50_seconds']:>5}  {r['p99_seconds']:>5}  {r['worker_cpu_seconds']:>12}  "
                f"{r['server_cpu_seconds']:>12}  {writes:>16}  {r['history_events']:>6}  "
                f"{r['workflow_tasks']:>4}  {r['activity_tasks']:>10}  {r['markers']:>7}",
                flush=True,
            )
            if args.events:
                for i, label in enumerate(r["event_list"], 1):
                    print(f"  {i:>3} {label}", flush=True)


if __name__ == "__main__":
    # a SIGTERM (a time limit) unwinds through the servers' and workers' `finally`s
    with process_tree.exit_on_termination():
        main()
