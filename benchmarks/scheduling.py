"""Scheduling benchmark: throughput, memory and cost of the provisioning solver.

Workloads: Karpenter's benchmark (400 fake instance types; pods in five constraint groups)
at 1k/5k/10k/20k pods, the plain-pods variant (where cost must be near the lower bound),
and 50 realistic Deployments over an EC2-shaped catalog. Each case runs in its own process
so peak memory is that case's alone. Prints one line per case; ``--json`` for machines.

    python benchmarks/scheduling.py [--sizes 1000,5000] [--json]

``--cli`` times what users run instead: the ``joinery plan`` command as a whole process
(start, imports, reading YAML, catalog, solve, lower bound, JSON output) on manifests and
catalogs written to disk first (diverse 1k/5k and plain 5k on the fake catalog, the
Deployments on the EC2-shaped one). ``--write-cli-inputs DIR`` only writes those files, so
another tool can time the command on them.

    python benchmarks/scheduling.py --cli [--joinery PATH] [--runs 3]
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

import statistics  # noqa: E402
import tempfile  # noqa: E402

import yaml  # noqa: E402

from benchmarks.bytecode import compile_project  # noqa: E402
from benchmarks.catalogs import ec2_like_catalog  # noqa: E402
from benchmarks.workloads import (  # noqa: E402
    deployments,
    diverse_pods,
    fake_instance_types,
    nodepool,
    nodepool_manifest,
    pod,
)
from models.catalog import dump_catalog  # noqa: E402
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


# The whole-process cases: (name, catalog file, workload builder).
CLI_CASES: list[tuple[str, str, Any]] = [
    ("diverse-1k", "fake-catalog.yaml", lambda: diverse_pods(1000)),
    ("diverse-5k", "fake-catalog.yaml", lambda: diverse_pods(5000)),
    ("plain-5k", "fake-catalog.yaml", lambda: diverse_pods(5000, plain_only=True)),
    ("deployments", "ec2-catalog.yaml", deployments),
]


def _dump(path: Path, docs: list[Any]) -> None:
    with path.open("w") as fh:
        yaml.safe_dump_all(docs, fh, sort_keys=False)


def write_cli_inputs(out: Path) -> list[tuple[str, Path, Path]]:
    """Write each case's manifests and the two catalogs; return (case, manifests, catalog)."""
    out.mkdir(parents=True, exist_ok=True)
    _dump(out / "fake-catalog.yaml", [dump_catalog(fake_instance_types())])
    _dump(out / "ec2-catalog.yaml", [dump_catalog(ec2_like_catalog())])
    cases = []
    for name, catalog, build in CLI_CASES:
        manifests = out / f"{name}.yaml"
        _dump(manifests, [nodepool_manifest(), *build()])
        cases.append((name, manifests, out / catalog))
    return cases


def time_cli(joinery: str, runs: int) -> list[dict[str, Any]]:
    """Median wall time of ``joinery plan`` per case, each run a fresh process."""
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, manifests, catalog in write_cli_inputs(Path(tmp)):
            cmd = [joinery, "plan", "-f", str(manifests), "--catalog", str(catalog)]
            times = []
            doc: dict[str, Any] = {}
            for _ in range(runs):
                t0 = time.perf_counter()
                out = subprocess.run(cmd, check=True, capture_output=True, text=True)
                times.append(time.perf_counter() - t0)
                doc = json.loads(out.stdout)
            pods = sum(len(c["pods"]) for c in doc["nodeClaims"]) + len(doc["unschedulable"])
            results.append(
                {
                    "case": name,
                    "pods": pods,
                    "wallSeconds": round(statistics.median(times), 3),
                    "nodes": len(doc["nodeClaims"]),
                    "unschedulable": len(doc["unschedulable"]),
                    "costPerHour": doc["cost"]["perHour"],
                    "lowerBound": doc["cost"]["lowerBound"],
                }
            )
    return results


def cli_main(args: argparse.Namespace) -> int:
    compile_project()  # time what an installed user runs (benchmarks/bytecode.py)
    if args.write_cli_inputs:
        for name, manifests, catalog in write_cli_inputs(Path(args.write_cli_inputs)):
            print(f"{name}: -f {manifests} --catalog {catalog}")
        return 0
    joinery = args.joinery or str(Path(sys.executable).with_name("joinery"))
    results = time_cli(joinery, args.runs)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"# joinery plan, whole process, median of {args.runs} runs: {joinery}")
    for r in results:
        print(
            f"{r['case']:<12} pods={r['pods']:>6} wall={r['wallSeconds']:>7.2f}s "
            f"nodes={r['nodes']:>5} $/h={r['costPerHour']:>9.2f} lb={r['lowerBound']:>9.2f} "
            f"unsched={r['unschedulable']}",
            flush=True,
        )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,5000,10000,20000")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--case", help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--cli", action="store_true", help="time the joinery plan command")
    parser.add_argument("--joinery", help="with --cli: the joinery executable to time")
    parser.add_argument("--runs", type=int, default=3, help="with --cli: runs per case")
    parser.add_argument("--write-cli-inputs", metavar="DIR", help="only write the CLI inputs")
    args = parser.parse_args()
    if args.cli or args.write_cli_inputs:
        return cli_main(args)
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
