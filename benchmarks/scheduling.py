"""Scheduling benchmark: throughput, memory and cost of the provisioning solver.

Workloads: Karpenter's benchmark (400 fake instance types; pods in five constraint groups)
at 1k/5k/10k/20k pods, the plain-pods variant (where cost must be near the lower bound),
and 50 realistic Deployments over an EC2-shaped catalog. Each case runs in its own process
so peak memory is that case's alone. Prints one line per case; ``--json`` for machines.

    python benchmarks/scheduling.py [--sizes 1000,5000] [--json]
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.catalogs import ec2_like_catalog  # noqa: E402
from benchmarks.workloads import (  # noqa: E402
    deployments,
    diverse_pods,
    fake_instance_types,
    nodepool,
    pod,
)
from scheduling.lowerbound import lower_bound  # noqa: E402
from scheduling.pods import parse_pod  # noqa: E402
from scheduling.problem import Problem  # noqa: E402
from scheduling.solver import Solver  # noqa: E402


def run_case(name: str, size: int) -> dict[str, Any]:
    if name == "deployments":
        types = ec2_like_catalog()
        raw = deployments()
    elif name == "replicas":
        types = ec2_like_catalog()
        raw = [pod(f"web-{i}", "250m", "512Mi", {"app": "web"}) for i in range(size)]
    else:
        types = fake_instance_types()
        raw = diverse_pods(size, plain_only=(name == "plain"))
    t0 = time.perf_counter()
    pods = [parse_pod(p) for p in raw]
    t1 = time.perf_counter()
    solver = Solver(Problem([nodepool()], types, pods))
    plan = solver.solve()
    t2 = time.perf_counter()
    lb = lower_bound(solver, plan.scheduled)
    t3 = time.perf_counter()
    baseline = Solver(
        Problem([nodepool()], types, [parse_pod(p) for p in raw]), order="cpu"
    ).solve()
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "case": name,
        "pods": len(pods),
        "instanceTypes": len(types),
        "parseSeconds": round(t1 - t0, 3),
        "solveSeconds": round(t2 - t1, 3),
        "podsPerSecond": round(len(pods) / (t2 - t1)),
        "lowerBoundSeconds": round(t3 - t2, 3),
        "peakMiB": round(peak_mb),
        "nodes": len(plan.claims),
        "unschedulable": len(plan.unschedulable),
        "costPerHour": round(plan.cost, 3),
        "lowerBound": round(lb, 3),
        "costOverLowerBound": round(plan.cost / lb, 3) if lb else None,
        "baselineCostPerHour": round(baseline.cost, 3),
        "baselineNodes": len(baseline.claims),
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,5000,10000,20000")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--case", help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        print(json.dumps(run_case(args.case, args.size)))
        return 0
    cases = [("diverse", int(s)) for s in args.sizes.split(",")]
    cases += [("plain", 5000), ("replicas", 10000), ("deployments", 0)]
    print(
        f"# {platform.machine()} {platform.processor() or ''} python {platform.python_version()}, "
        f"one core per case",
        flush=True,
    )
    results = []
    for name, size in cases:
        out = subprocess.run(
            [sys.executable, __file__, "--case", name, "--size", str(size)],
            check=True,
            capture_output=True,
            text=True,
        )
        r = json.loads(out.stdout.strip().splitlines()[-1])
        results.append(r)
        if not args.json:
            print(
                f"{r['case']:<12} pods={r['pods']:>6} types={r['instanceTypes']:>4} "
                f"solve={r['solveSeconds']:>7.2f}s ({r['podsPerSecond']:>6} pods/s) "
                f"parse={r['parseSeconds']:.2f}s peak={r['peakMiB']:>5}MiB nodes={r['nodes']:>5} "
                f"$/h={r['costPerHour']:>9.2f} lb={r['lowerBound']:>9.2f} "
                f"ratio={r['costOverLowerBound']} ffd$/h={r['baselineCostPerHour']:>9.2f} "
                f"unsched={r['unschedulable']}",
                flush=True,
            )
    if args.json:
        print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
