"""A burst of N pending pods, real Karpenter and Joinery side by side, interleaved.

    python -m benchmarks.side_by_side_burst --shape packed|one-per-node|two-cpu --pods N
        [--pairs K] [--timeout S] [--json] [--scale-down [--quiet S]] [--no-audit]

Each run starts a fresh sandbox control plane (``sandbox/cluster.py``) and one autoscaler on
it: Karpenter v1.14.1's kwok provider (``benchmarks/karpenter_kwok/``) or ``joinery dev``'s
stack (Temporal dev server, EC2 emulator, ``joinery worker``; 0 s boot delay). The runs go
Karpenter, Joinery, Karpenter, Joinery, … so a change in the machine's load falls on both.
Both choose from one catalog: Karpenter's instance-types file is written from the catalog the
EC2 emulator serves Joinery; the NodePools have the same requirements (amd64, on-demand, and
for ``two-cpu`` only m5.large and m5.xlarge, as ``joinery dev --scenario scale``) and
``consolidateAfter: Never``.

Before the burst each side runs one warm-up pod (100m CPU) in a NodePool of its own (the
same requirements) until it is Running, as ``joinery dev --scenario scale`` does: Joinery
loads its catalog on the first provisioning, Karpenter its instance types at start-up. The
warm-up pod and its node stay; the burst's pods select the burst's NodePool, so neither is
counted.

Shapes: ``packed`` (1-CPU pods, any type), ``one-per-node`` (1-CPU pods with hostname
anti-affinity), ``two-cpu`` (the scale scenario's 2-CPU pods: one m5.xlarge each).
Per run: seconds from creating the Deployment to all pods Running (polled each second),
pending→Running p50/p99 (creation to the Ready condition, Kubernetes' whole-second stamps),
nodes and their $/h at the catalog's prices, and CPU seconds over the burst of the autoscaler
(Karpenter's process; Joinery's worker and Temporal server apart), of kube-apiserver and of
the rest of the control plane (etcd, scheduler, controller-manager, kwok) and of this process
(for Joinery it hosts the EC2 emulator and the simulated kubelets); then per pair the ratio
Joinery / Karpenter, and the medians.

``--scale-down``: once all pods Run, a PDB (``maxUnavailable: 1``), the Deployment scaled to a
tenth and the NodePool set to ``consolidateAfter: 0s`` (default budgets); each side's
consolidation then runs until no NodeClaim has changed for ``--quiet`` seconds
(``benchmarks/scale_down.py`` says what is counted: the last disruption, nodes and $/h at the
end, pods evicted, the PDB held).

API requests (unless ``--no-audit``): both control planes write the API server's audit log,
and each phase (the burst; the scale-down) reports the requests the autoscaler's own
clients made per node (the burst's nodes; the nodes the scale-down removed) apart from the
rest's (``benchmarks/side_by_side_requests.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from models import labels as L
from sandbox.scenarios.stats import percentile

SIDES = ("karpenter", "joinery")
TWO_CPU_TYPES = ("m5.large", "m5.xlarge")
APP = "burst"


@dataclass(frozen=True)
class Shape:
    cpu: str
    one_per_node: bool
    instance_types: tuple[str, ...] | None  # None: any type of the catalog


SHAPES = {
    "packed": Shape("1", False, None),
    "one-per-node": Shape("1", True, None),
    "two-cpu": Shape("2", False, TWO_CPU_TYPES),
}


def _positive(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {value!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more: {n}")
    return n


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.side_by_side_burst", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--shape", choices=sorted(SHAPES), required=True)
    parser.add_argument("--pods", type=_positive, required=True, help="burst size, e.g. 100")
    parser.add_argument("--pairs", type=_positive, default=3, help="Karpenter+Joinery pairs")
    parser.add_argument("--timeout", type=float, default=900.0, help="per run, seconds")
    parser.add_argument("--json", action="store_true", help="one JSON document on stdout")
    parser.add_argument(
        "--scale-down",
        action="store_true",
        help="after the burst, scale to a tenth with consolidateAfter: 0s and a PDB",
    )
    parser.add_argument(
        "--no-audit",
        action="store_true",
        help="no API server audit log (no API requests by client; the log costs it CPU)",
    )
    parser.add_argument(
        "--quiet",
        type=float,
        default=60.0,
        help="scale-down: over once no NodeClaim changed for this many seconds",
    )
    return parser.parse_args(argv)


def nodepool(name: str, shape: Shape, node_class_ref: dict[str, str]) -> dict[str, Any]:
    """The NodePool both sides get, apart from the NodeClass it names."""
    requirements: list[dict[str, Any]] = [
        {"key": L.ARCH, "operator": "In", "values": ["amd64"]},
        {"key": L.CAPACITY_TYPE, "operator": "In", "values": ["on-demand"]},
    ]
    if shape.instance_types:
        requirements.append(
            {"key": L.INSTANCE_TYPE, "operator": "In", "values": list(shape.instance_types)}
        )
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": name},
        "spec": {
            "disruption": {
                "consolidationPolicy": "WhenEmptyOrUnderutilized",
                "consolidateAfter": "Never",
            },
            "template": {
                "spec": {
                    "nodeClassRef": node_class_ref,
                    "requirements": requirements,
                    "expireAfter": "Never",
                }
            },
        },
    }


def _stamp(value: str) -> float:
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


CpuReader = Callable[[], dict[str, float]]
# The API server's audit log and the test for the autoscaler's own clients in it.
Audit = tuple[Path, Callable[[str], bool]]


def warm_up(api: Any, shape: Shape, node_class_ref: dict[str, str], timeout: float) -> float:
    """One 100m pod in a NodePool of its own, until Running; returns its seconds."""
    from kubernetes import client as k8s

    from sandbox.scenarios.common import deployment

    pool = f"warm{os.urandom(3).hex()}"
    k8s.CustomObjectsApi(api).create_cluster_custom_object(
        "karpenter.sh", "v1", "nodepools", nodepool(pool, shape, node_class_ref)
    )
    core = k8s.CoreV1Api(api)
    core.create_namespace({"metadata": {"name": pool}})
    body = deployment("warm", scenario="side-by-side", replicas=1, cpu="100m", memory="64Mi")
    body["spec"]["template"]["spec"]["nodeSelector"] = {L.NODEPOOL: pool}
    began = time.monotonic()
    k8s.AppsV1Api(api).create_namespaced_deployment(pool, body)
    while time.monotonic() - began < timeout:
        time.sleep(0.5)
        pods = core.list_namespaced_pod(pool, label_selector="app=warm").items
        if pods and all(p.status.phase == "Running" for p in pods):
            return time.monotonic() - began
    raise TimeoutError(f"the warm-up pod not Running after {timeout:.0f} s")


def burst(
    api: Any,
    pool: str,
    shape: Shape,
    pods: int,
    timeout: float,
    cpu: CpuReader,
    prices: dict[tuple[str, str, str], float],
) -> dict[str, Any]:
    """Create the Deployment in ``pool``; wait until all pods Run; the run's figures."""
    from kubernetes import client as k8s

    from sandbox.scenarios.common import deployment

    core = k8s.CoreV1Api(api)
    namespace = f"burst-{pool}"
    core.create_namespace({"metadata": {"name": namespace}})
    body = deployment(
        APP,
        scenario="side-by-side",
        replicas=pods,
        cpu=shape.cpu,
        memory="1Gi",
        one_per_node=shape.one_per_node,
    )
    body["spec"]["template"]["spec"]["nodeSelector"] = {L.NODEPOOL: pool}
    cpu0 = cpu()
    began = time.monotonic()
    k8s.AppsV1Api(api).create_namespaced_deployment(namespace, body)
    deadline = began + timeout
    items: list[dict[str, Any]] = []
    running = 0
    while running < pods:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{running}/{pods} pods Running after {timeout:.0f} s")
        time.sleep(1.0)
        raw = core.list_namespaced_pod(
            namespace, label_selector=f"app={APP}", _preload_content=False
        )
        items = json.loads(raw.data).get("items") or []
        running = sum(1 for p in items if (p.get("status") or {}).get("phase") == "Running")
    seconds = time.monotonic() - began
    cpu1 = cpu()
    waits = []
    for p in items:
        ready = [c for c in p["status"].get("conditions") or [] if c.get("type") == "Ready"]
        if ready and ready[0].get("lastTransitionTime"):
            waits.append(
                _stamp(ready[0]["lastTransitionTime"]) - _stamp(p["metadata"]["creationTimestamp"])
            )
    return {
        "secondsToAllRunning": round(seconds, 1),
        "pendingToRunningP50": round(percentile(waits, 0.5), 1) if waits else None,
        "pendingToRunningP99": round(percentile(waits, 0.99), 1) if waits else None,
        **pool_nodes(api, pool, prices),
        "cpuSeconds": {k: round(cpu1[k] - cpu0.get(k, 0.0), 1) for k in cpu1},
    }


def pool_nodes(api: Any, pool: str, prices: dict[tuple[str, str, str], float]) -> dict[str, Any]:
    """The pool's Nodes now: how many, their types and $/h at the catalog's prices."""
    from kubernetes import client as k8s

    raw = k8s.CoreV1Api(api).list_node(
        label_selector=f"{L.NODEPOOL}={pool}", _preload_content=False
    )
    nodes = json.loads(raw.data).get("items") or []
    cost = 0.0
    for n in nodes:
        lab = n["metadata"].get("labels") or {}
        key = (lab.get(L.INSTANCE_TYPE, ""), lab.get(L.CAPACITY_TYPE, ""), lab.get(L.ZONE, ""))
        cost += prices.get(key, float("nan"))
    types = sorted({(n["metadata"].get("labels") or {}).get(L.INSTANCE_TYPE, "?") for n in nodes})
    return {"nodes": len(nodes), "instanceTypes": types, "dollarsPerHour": round(cost, 4)}


def claim_event_reasons(api: Any) -> dict[str, int]:
    """How often each reason was reported on NodeClaims (both sides report launch failures,
    timeouts and deletions there): a burst that made more claims than nodes says why here."""
    from kubernetes import client as k8s

    raw = k8s.CoreV1Api(api).list_event_for_all_namespaces(
        field_selector="involvedObject.kind=NodeClaim", _preload_content=False
    )
    reasons: Counter[str] = Counter()
    for event in json.loads(raw.data).get("items") or []:
        reason = event.get("reason") or "?"
        if reason == "DisruptionTerminating":  # why it ends is in the message
            reason += f" ({str(event.get('message') or '')[:48]})"
        reasons[reason] += int(event.get("count") or 1)
    return dict(reasons.most_common())


def measured(
    api: Any,
    pool: str,
    shape: Shape,
    pods: int,
    timeout: float,
    cpu: CpuReader,
    prices: dict[tuple[str, str, str], float],
    quiet: float | None,
    audit: Audit | None = None,
) -> dict[str, Any]:
    """The burst's figures, and the scale-down's under ``scaleDown`` when ``quiet`` is set;
    with ``audit`` (the log and which clients are the autoscaler's) each phase's API
    requests by client under ``apiRequests``."""
    from benchmarks import side_by_side_requests as requests

    mark = requests.AuditMark.now(audit[0]) if audit else None
    out = burst(api, pool, shape, pods, timeout, cpu, prices)
    out["claimEvents"] = claim_event_reasons(api)
    if audit and mark:
        out["apiRequests"] = requests.measure(mark, out["nodes"], audit[1])
    if quiet is not None:
        from benchmarks import scale_down

        mark = requests.AuditMark.now(audit[0]) if audit else None
        out["scaleDown"] = scale_down.run(
            api,
            pool,
            f"burst-{pool}",
            APP,
            pods,
            quiet,
            timeout,
            cpu,
            lambda: pool_nodes(api, pool, prices),
        )
        if audit and mark:  # per node removed
            down = out["scaleDown"]
            down["apiRequests"] = requests.measure(mark, down["claimsDeleted"], audit[1])
    return out


def _control_plane_cpu(pids: dict[str, int]) -> dict[str, float]:
    """kube-apiserver's CPU, the rest of the control plane's, and this process's (for Joinery
    it hosts the EC2 emulator and the simulated kubelets; on both sides it polls the pods)."""
    from sandbox.processes import tree_cpu_seconds

    api = tree_cpu_seconds(pids["kube-apiserver"]) if "kube-apiserver" in pids else 0.0
    rest = sum(tree_cpu_seconds(pid) for name, pid in pids.items() if name != "kube-apiserver")
    own = os.times()
    return {"apiserver": api, "controlPlaneRest": rest, "thisProcess": own.user + own.system}


def run_karpenter(
    shape: Shape,
    pods: int,
    timeout: float,
    types_file: Path,
    prices: Any,
    log: Any,
    quiet: float | None = None,
) -> dict[str, Any]:
    from benchmarks import side_by_side_requests as requests
    from benchmarks.karpenter_kwok import karpenter
    from sandbox.processes import tree_cpu_seconds

    binary = karpenter.build()
    side = karpenter.KarpenterSide.start(binary, types_file, log)
    try:
        api = side.cluster.admin_client()
        from kubernetes import client as k8s

        pool = f"k{os.urandom(3).hex()}"
        ref = {
            "group": karpenter.NODECLASS_GROUP,
            "kind": karpenter.NODECLASS_KIND,
            "name": karpenter.NODECLASS_NAME,
        }
        warm = warm_up(api, shape, ref, timeout)
        k8s.CustomObjectsApi(api).create_cluster_custom_object(
            "karpenter.sh", "v1", "nodepools", nodepool(pool, shape, ref)
        )
        assert side.process is not None
        pid = side.process.popen.pid
        pids = side.cluster.pids()

        def cpu() -> dict[str, float]:
            return {"karpenter": tree_cpu_seconds(pid), **_control_plane_cpu(pids)}

        log_path = side.cluster.audit_log_path
        audit = (log_path, requests.karpenter_client) if log_path else None
        return {
            **measured(api, pool, shape, pods, timeout, cpu, prices, quiet, audit),
            "warmUpSeconds": round(warm, 1),
        }
    finally:
        side.stop()


def run_joinery(
    shape: Shape, pods: int, timeout: float, prices: Any, log: Any, quiet: float | None = None
) -> dict[str, Any]:
    from kubernetes import client as k8s

    from benchmarks import side_by_side_requests as requests
    from sandbox.dev import DevOptions, DevStack, TemporalDevServer
    from sandbox.processes import tree_cpu_seconds

    stack = DevStack.start(DevOptions(boot_delay=0.0, temporal_port=0), log=log)
    try:
        assert stack.cluster and stack.worker and isinstance(stack.temporal, TemporalDevServer)
        api = stack.cluster.admin_client()
        pool = f"j{os.urandom(3).hex()}"
        ref = {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}
        warm = warm_up(api, shape, ref, timeout)
        k8s.CustomObjectsApi(api).create_cluster_custom_object(
            "karpenter.sh", "v1", "nodepools", nodepool(pool, shape, ref)
        )
        worker, temporal = stack.worker.popen.pid, stack.temporal.process.popen.pid
        pids = stack.cluster.pids()

        def cpu() -> dict[str, float]:
            return {
                "worker": tree_cpu_seconds(worker),
                "temporal": tree_cpu_seconds(temporal),
                **_control_plane_cpu(pids),
            }

        log_path = stack.cluster.audit_log_path
        audit = (log_path, requests.joinery_client) if log_path else None
        return {
            **measured(api, pool, shape, pods, timeout, cpu, prices, quiet, audit),
            "warmUpSeconds": round(warm, 1),
        }
    finally:
        stack.stop()


def _ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 2) if a is not None and b else None


def pair_ratios(k: dict[str, Any], j: dict[str, Any]) -> dict[str, float | None]:
    """Joinery / Karpenter for one pair (below 1: Joinery did better)."""
    return {
        "secondsToAllRunning": _ratio(j["secondsToAllRunning"], k["secondsToAllRunning"]),
        "pendingToRunningP99": _ratio(j["pendingToRunningP99"], k["pendingToRunningP99"]),
        "dollarsPerHour": _ratio(j["dollarsPerHour"], k["dollarsPerHour"]),
        "autoscalerCpuSeconds": _ratio(
            j["cpuSeconds"]["worker"] + j["cpuSeconds"]["temporal"], k["cpuSeconds"]["karpenter"]
        ),
        "apiserverCpuSeconds": _ratio(j["cpuSeconds"]["apiserver"], k["cpuSeconds"]["apiserver"]),
    }


def down_ratios(k: dict[str, Any], j: dict[str, Any]) -> dict[str, float | None]:
    """Joinery / Karpenter for one pair's scale-down (below 1: Joinery did better)."""
    return {
        "lastDisruptionSeconds": _ratio(j["lastDisruptionSeconds"], k["lastDisruptionSeconds"]),
        "dollarsPerHour": _ratio(j["dollarsPerHour"], k["dollarsPerHour"]),
        "podsEvicted": _ratio(j["podsEvicted"], k["podsEvicted"]),
    }


def _down_line(side: str, d: dict[str, Any]) -> str:
    pdb = d["pdb"]
    held = "held" if pdb["violations"] == 0 else f"{pdb['violations']} samples below"
    return (
        f"{side:<9} scale-down to {d['replicas']}: last disruption "
        f"{d['lastDisruptionSeconds']} s (last claim gone {d['lastClaimGoneSeconds']} s), "
        f"claims +{d['claimsCreated']} -{d['claimsDeleted']}, {d['nodes']} nodes "
        f"{'/'.join(d['instanceTypes'])} ${d['dollarsPerHour']}/h, {d['podsEvicted']} pods "
        f"evicted, PDB {held} (min {pdb['minHealthy']} healthy, floor {pdb['floor']}, "
        f"{pdb['samples']} samples){' TIMED OUT' if d['timedOut'] else ''}"
    )


def medians(runs: list[dict[str, Any]]) -> dict[str, float]:
    """The median of each figure over runs (CPU per process too)."""
    keys = (
        "secondsToAllRunning",
        "pendingToRunningP50",
        "pendingToRunningP99",
        "nodes",
        "dollarsPerHour",
    )
    out = {k: statistics.median(r[k] for r in runs if r[k] is not None) for k in keys}
    for name in runs[0]["cpuSeconds"]:
        out[f"cpu:{name}"] = statistics.median(r["cpuSeconds"][name] for r in runs)
    return {k: round(v, 4) for k, v in out.items()}


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def _line(side: str, r: dict[str, Any]) -> str:
    cpu = ", ".join(f"{k} {v}" for k, v in r["cpuSeconds"].items())
    return (
        f"{side:<9} all Running {r['secondsToAllRunning']:>6} s  p50 "
        f"{r['pendingToRunningP50']} s  p99 {r['pendingToRunningP99']} s  {r['nodes']} nodes "
        f"{'/'.join(r['instanceTypes'])} ${r['dollarsPerHour']}/h  CPU s: {cpu}  "
        f"(load {r['loadBefore']} -> {r['loadAfter']})"
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    shape = SHAPES[args.shape]
    from sandbox import api_audit

    # each side's control plane writes the audit log the API request counts come from
    os.environ[api_audit.ENV] = "0" if args.no_audit else "1"
    from benchmarks import side_by_side_requests as requests
    from benchmarks.karpenter_kwok import instance_types

    def log(message: str) -> None:
        print(f"  [{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)

    catalog = instance_types.emulated_catalog()
    prices = {(t.name, o.capacity_type, o.zone): o.price for t in catalog for o in t.offerings}
    out: dict[str, Any] = {
        "shape": args.shape,
        "pods": args.pods,
        "pairs": [],
        "loadBefore": _load(),
        "cpus": os.cpu_count(),
    }
    with tempfile.TemporaryDirectory(prefix="side-by-side-") as tmp:
        types_file = Path(tmp) / "instance-types.json"
        count = instance_types.write(types_file, catalog)
        log(f"{count} instance types written for Karpenter from Joinery's catalog")
        for i in range(args.pairs):
            pair: dict[str, Any] = {}
            for side in SIDES:
                load0 = _load()
                log(f"pair {i + 1}/{args.pairs}: {side}, {args.pods} pods {args.shape}")
                try:
                    quiet = args.quiet if args.scale_down else None
                    if side == "karpenter":
                        r = run_karpenter(
                            shape, args.pods, args.timeout, types_file, prices, log, quiet
                        )
                    else:
                        r = run_joinery(shape, args.pods, args.timeout, prices, log, quiet)
                except Exception as exc:  # one failed run is reported, the others still run
                    r = {"error": f"{type(exc).__name__}: {exc}"}
                r["loadBefore"], r["loadAfter"] = load0, _load()
                pair[side] = r
                if not args.json:
                    print(
                        _line(side, r) if "error" not in r else f"{side}: {r['error']}", flush=True
                    )
                    if "apiRequests" in r:
                        print(requests.line(side, "burst", r["apiRequests"]), flush=True)
                    if "scaleDown" in r:
                        print(_down_line(side, r["scaleDown"]), flush=True)
                        if "apiRequests" in r["scaleDown"]:
                            down = r["scaleDown"]["apiRequests"]
                            print(requests.line(side, "scale-down", down), flush=True)
            if all("error" not in pair[s] for s in SIDES):
                pair["ratio"] = pair_ratios(pair["karpenter"], pair["joinery"])
                if all("scaleDown" in pair[s] for s in SIDES):
                    pair["scaleDownRatio"] = down_ratios(
                        pair["karpenter"]["scaleDown"], pair["joinery"]["scaleDown"]
                    )
                    if not args.json:
                        print(f"scale-down Joinery/Karpenter: {pair['scaleDownRatio']}")
                if not args.json:
                    print(f"pair {i + 1} Joinery/Karpenter: {pair['ratio']}", flush=True)
            out["pairs"].append(pair)
    good = [p for p in out["pairs"] if "ratio" in p]
    if good:
        out["medians"] = {s: medians([p[s] for p in good]) for s in SIDES}
        out["medianRatios"] = {
            k: round(statistics.median(v for p in good if (v := p["ratio"][k]) is not None), 2)
            for k in good[0]["ratio"]
            if any(p["ratio"][k] is not None for p in good)
        }
    out["loadAfter"] = _load()
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        for s in SIDES:
            if "medians" in out:
                print(f"median {s}: {out['medians'][s]}")
        if "medianRatios" in out:
            print(f"median Joinery/Karpenter: {out['medianRatios']}")
    return 0 if len(good) == args.pairs else 1


if __name__ == "__main__":
    from benchmarks import process_tree

    # a SIGTERM (a time limit) unwinds through each side's `finally`, which stops its stack
    with process_tree.exit_on_termination():
        sys.exit(main())
