"""`joinery plan` side by side with Karpenter's own scheduler, on the same problems, in one run.

For each workload (issue 12's table: Karpenter's diverse benchmark shape at 1,000 and 5,000
pods and plain pods at 5,000 on the 400 fake types; 50 Deployments, 5,000 pods, on the
EC2-shaped us-east-1 catalog) this writes one problem to disk twice from the same objects:

- for Joinery, what a user runs: a YAML manifest file (the NodePool and the pods) and the
  catalog as YAML, timed as ``joinery plan -f MANIFESTS --catalog CATALOG`` in a fresh process
  (wall and CPU time);
- for Karpenter, one JSON file read by benchmarks/karpenter_solve (our Go program around
  ``Scheduler.Solve`` from sigs.k8s.io/karpenter, built by its build.sh into ~/.cache/joinery),
  run with GOMAXPROCS=1; only ``Solve`` is timed.

Joinery's solve alone is timed in a third process (this script with ``--solve-only``): the
same files read, then ``Solver.solve()`` timed by itself. The three run interleaved, ``--runs``
times per workload; the table gives medians. Before timing, the script checks that both tools
read the same problem (pod count and total requests, NodePool requirements and limits, number
of types and offerings, offering prices, allocatable totals) and stops if they differ.

Both sides price a NodeClaim the same way: the cheapest available offering, of any of the
claim's instance types, that the claim's requirements allow ($/h is the sum over claims).

    .venv/bin/python benchmarks/side_by_side.py [--runs 3] [--cases diverse-1k,plain-5k]
        [--karpenter BIN] [--joinery BIN] [--keep DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402

from benchmarks.bytecode import compile_project  # noqa: E402
from benchmarks.catalogs import ec2_like_catalog  # noqa: E402
from benchmarks.workloads import (  # noqa: E402
    deployments,
    diverse_pods,
    fake_instance_types,
    nodepool_manifest,
)
from models.catalog import dump_catalog  # noqa: E402

BUILD_SCRIPT = ROOT / "benchmarks" / "karpenter_solve" / "build.sh"

# Karpenter's scheduling benchmark gives its NodePool limits of 10,000,000 cpu and
# 10,000,000Gi memory (generous, never reached). Joinery holds quantities as 64-bit milli
# values and refuses 10,000,000Gi (1.07e19 milli-bytes) as too large, so memory is 1,000,000Gi
# here: as far out of reach for 5,000 pods of at most 8Gi each.
BENCHMARK_LIMITS = {"cpu": "10000000", "memory": "1000000Gi"}


@dataclass(frozen=True)
class Workload:
    name: str
    title: str
    catalog: str  # "fake" or "ec2"
    pods: Callable[[], list[dict[str, Any]]]


WORKLOADS = [
    Workload(
        "diverse-1k",
        "Karpenter's diverse shape, 1,000 pods, 400 fake types",
        "fake",
        lambda: diverse_pods(1000),
    ),
    Workload(
        "diverse-5k",
        "Karpenter's diverse shape, 5,000 pods, 400 fake types",
        "fake",
        lambda: diverse_pods(5000),
    ),
    Workload(
        "plain-5k",
        "plain pods, 5,000, 400 fake types",
        "fake",
        lambda: diverse_pods(5000, plain_only=True),
    ),
    Workload(
        "deployments",
        "50 Deployments, 5,000 pods, EC2-shaped us-east-1 catalog",
        "ec2",
        lambda: deployments_of(5000),
    ),
]


def deployments_of(count: int) -> list[dict[str, Any]]:
    """The benchmark's 50 Deployments with their replicas scaled so they total ``count`` pods.

    ``deployments()`` draws each Deployment's replicas at random (about 7,400 pods in all);
    each keeps its share, rounded (at least one replica), so the table's 5,000 is exact and
    all 50 shapes stay in.
    """
    by_app: dict[str, list[dict[str, Any]]] = {}
    for p in deployments():
        by_app.setdefault(p["metadata"]["labels"]["app"], []).append(p)
    total = sum(len(v) for v in by_app.values())
    keep = {app: max(1, round(len(v) * count / total)) for app, v in by_app.items()}
    biggest = max(keep, key=lambda app: keep[app])
    keep[biggest] += count - sum(keep.values())
    return [p for app, pods in by_app.items() for p in pods[: keep[app]]]


# ---------------------------------------------------------------- inputs


@dataclass(frozen=True)
class Inputs:
    manifests: Path
    catalog: Path
    karpenter: Path


def _catalog_doc(kind: str) -> dict[str, Any]:
    return dump_catalog(fake_instance_types() if kind == "fake" else ec2_like_catalog())


def write_inputs(out: Path, workloads: list[Workload]) -> dict[str, Inputs]:
    out.mkdir(parents=True, exist_ok=True)
    catalogs: dict[str, dict[str, Any]] = {}
    written: dict[str, Inputs] = {}
    for w in workloads:
        if w.catalog not in catalogs:
            catalogs[w.catalog] = _catalog_doc(w.catalog)
            with (out / f"{w.catalog}-catalog.yaml").open("w") as fh:
                yaml.safe_dump(catalogs[w.catalog], fh, sort_keys=False)
        pool = nodepool_manifest(limits=dict(BENCHMARK_LIMITS))
        pods = w.pods()
        manifests = out / f"{w.name}.yaml"
        with manifests.open("w") as fh:
            yaml.safe_dump_all([pool, *pods], fh, sort_keys=False)
        karpenter = out / f"{w.name}.karpenter.json"
        karpenter.write_text(
            json.dumps(
                {
                    "nodePools": [pool],
                    "pods": pods,
                    "daemonSets": [],
                    "catalog": catalogs[w.catalog],
                }
            )
        )
        written[w.name] = Inputs(manifests, out / f"{w.catalog}-catalog.yaml", karpenter)
    return written


# ---------------------------------------------------------------- Joinery's reading


def _read_problem(manifests: Path, catalog: Path) -> Any:
    from scheduling.inputs import build_problem
    from worker.cli.plan_command import load_documents, load_instance_types

    types = load_instance_types(str(catalog))
    return build_problem(load_documents([str(manifests)]), types).problem


def joinery_summary(manifests: Path, catalog: Path) -> dict[str, Any]:
    """The problem as Joinery reads it, in the terms karpenter-solve reports its own."""
    problem = _read_problem(manifests, catalog)
    pools: dict[str, list[str]] = {}
    limits: dict[str, str] = {}
    for np in problem.nodepools:
        reqs = np.spec.template.spec.requirements
        pools[np.metadata.name] = sorted(
            f"{r.key} {r.operator} {','.join(sorted(r.values or []))}" for r in reqs
        )
        for k, v in np.limits_milli().items():
            # limits in Kubernetes units, as Go prints AsApproximateFloat64
            limits[f"{np.metadata.name}/{k}"] = repr(float(v / 1000))
    return {
        "pods": len(problem.pending),
        "requestsMilliCpu": sum(p.requests.get("cpu", 0) for p in problem.pending),
        "requestsMemoryBytes": sum(p.requests.get("memory", 0) for p in problem.pending) // 1000,
        "poolRequirements": pools,
        "poolLimits": limits,
        "instanceTypes": len(problem.instance_types),
        "offerings": sum(len(t.offerings) for t in problem.instance_types),
        "offeringPriceSum": sum(o.price for t in problem.instance_types for o in t.offerings),
        "allocatableMilliCpu": sum(t.allocatable.get("cpu", 0) for t in problem.instance_types),
        "allocatableMemoryBytes": sum(
            t.allocatable.get("memory", 0) // 1000 for t in problem.instance_types
        ),
        "daemonSetPods": len(problem.daemonsets),
    }


def same_problem(joinery: dict[str, Any], karpenter: dict[str, Any]) -> list[str]:
    """The fields on which the two readings differ (prices compared to 1e-6 relative)."""
    diffs = []
    for key, mine in joinery.items():
        theirs = karpenter.get(key)
        if key == "offeringPriceSum":
            same = math.isclose(mine, theirs or 0.0, rel_tol=1e-6)
        elif key == "poolLimits":
            theirs = theirs or {}
            same = mine.keys() == theirs.keys() and all(
                math.isclose(float(v), float(theirs[k]), rel_tol=1e-9) for k, v in mine.items()
            )
        else:
            same = mine == theirs
        if not same:
            diffs.append(f"{key}: joinery {mine!r} != karpenter {theirs!r}")
    return diffs


def solve_only(manifests: Path, catalog: Path) -> dict[str, Any]:
    """Joinery's solve alone (``--solve-only``): read the files, then time Solver.solve()."""
    from scheduling.solver import Solver

    problem = _read_problem(manifests, catalog)
    solver = Solver(problem)
    t0, c0 = time.perf_counter(), time.process_time()
    plan = solver.solve()
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {
        "solveSeconds": seconds,
        "solveCpuSeconds": cpu,
        "pods": len(problem.pending),
        "costPerHour": round(sum(c.price for c in plan.claims), 6),
        "unschedulable": len(plan.unschedulable),
    }


# ---------------------------------------------------------------- timed runs


@dataclass
class Proc:
    wall: float
    cpu: float
    stdout: str


def run_timed(cmd: list[str], env: dict[str, str] | None = None) -> Proc:
    """Run one process; wall time and its own CPU time (user + system).

    (Its peak RSS is not taken: Linux carries the forking Python's high-water mark across
    exec, so ru_maxrss would show this driver's size for a small child.)
    """
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            raise RuntimeError(f"{cmd[0]} exited {proc.returncode}: {err.read()[-2000:]}")
        return Proc(wall, usage.ru_utime + usage.ru_stime, out.read())


def run_karpenter(binary: str, inputs: Inputs) -> dict[str, Any]:
    env = {**os.environ, "GOMAXPROCS": "1"}
    p = run_timed([binary, str(inputs.karpenter)], env)
    doc: dict[str, Any] = json.loads(p.stdout)
    doc["processWall"] = p.wall
    return doc


# With --cold-catalog, `joinery plan` parses the catalog file on every run (its cache of
# decoded catalog files turned off), as on the first run after a catalog changes.
JOINERY_ENV: dict[str, str] | None = None


def run_joinery(joinery: str, inputs: Inputs) -> dict[str, Any]:
    cmd = [joinery, "plan", "-f", str(inputs.manifests), "--catalog", str(inputs.catalog)]
    p = run_timed(cmd, JOINERY_ENV)
    doc = json.loads(p.stdout)
    placed = sum(len(c["pods"]) for c in doc["nodeClaims"])
    return {
        "wall": p.wall,
        "cpu": p.cpu,
        "nodeClaims": len(doc["nodeClaims"]),
        "costPerHour": doc["cost"]["perHour"],
        "podsPlaced": placed,
        "unschedulable": len(doc["unschedulable"]),
        "unschedulablePods": sorted(u["pod"] for u in doc["unschedulable"]),
        "unschedulableExamples": [f"{u['pod']}: {u['reason']}" for u in doc["unschedulable"][:5]],
    }


def run_solve_only(inputs: Inputs) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--solve-only", str(inputs.manifests), str(inputs.catalog)]
    out: dict[str, Any] = json.loads(run_timed(cmd).stdout)
    return out


def build_karpenter() -> str:
    out = subprocess.run(["bash", str(BUILD_SCRIPT)], check=True, capture_output=True, text=True)
    return out.stdout.strip().splitlines()[-1]


def median(runs: list[dict[str, Any]], key: str) -> float:
    return float(statistics.median(r[key] for r in runs))


def compare(name: str, inputs: Inputs, karpenter: str, joinery: str, runs: int) -> dict[str, Any]:
    k_runs: list[dict[str, Any]] = []
    j_runs: list[dict[str, Any]] = []
    s_runs: list[dict[str, Any]] = []
    for _ in range(runs):
        k_runs.append(run_karpenter(karpenter, inputs))
        j_runs.append(run_joinery(joinery, inputs))
        s_runs.append(run_solve_only(inputs))
        print(
            f"  {name}: karpenter solve {k_runs[-1]['solveSeconds']:.2f}s, joinery plan "
            f"{j_runs[-1]['wall']:.2f}s wall, solve {s_runs[-1]['solveSeconds']:.2f}s",
            file=sys.stderr,
            flush=True,
        )
    k, j = k_runs[-1], j_runs[-1]
    # Karpenter's result varies a little from run to run (its pods' order among equals and
    # map iteration): a pod counts as placed by Karpenter if any run placed it, and Joinery's
    # cost is held against Karpenter's cheapest run.
    karpenter_unplaced = set.intersection(*(set(r["unschedulablePods"] or []) for r in k_runs))
    placed_by_karpenter_not_joinery = sorted(set(j["unschedulablePods"]) - karpenter_unplaced)
    k_costs = [r["costPerHour"] for r in k_runs]
    pods = k["summary"]["pods"]
    return {
        "workload": name,
        "pods": pods,
        "karpenterSolveSeconds": median(k_runs, "solveSeconds"),
        "karpenterSolveCpuSeconds": median(k_runs, "solveCpuSeconds"),
        "karpenterProcessSeconds": median(k_runs, "processWall"),
        "joineryWallSeconds": median(j_runs, "wall"),
        "joineryCpuSeconds": median(j_runs, "cpu"),
        "joinerySolveSeconds": median(s_runs, "solveSeconds"),
        "joinerySolveCpuSeconds": median(s_runs, "solveCpuSeconds"),
        "joinerySolvePodsPerSecond": pods / median(s_runs, "solveSeconds"),
        "karpenterNodeClaims": k["nodeClaims"],
        "joineryNodeClaims": j["nodeClaims"],
        "karpenterCostPerHour": round(statistics.median(k_costs), 4),
        "karpenterCostRange": [round(min(k_costs), 4), round(max(k_costs), 4)],
        "joineryCostPerHour": round(j["costPerHour"], 4),
        "karpenterUnschedulable": k["unschedulable"],
        "joineryUnschedulable": j["unschedulable"],
        "placedByKarpenterNotJoinery": placed_by_karpenter_not_joinery,
        "karpenterUnschedulableExamples": k.get("unschedulableExamples") or [],
        "joineryUnschedulableExamples": j["unschedulableExamples"],
        "karpenterVersion": k["karpenter"],
    }


# ---------------------------------------------------------------- the bar


FAST_CASES = ("diverse-5k", "deployments")


def bar(results: list[dict[str, Any]]) -> list[tuple[str, bool, str]]:
    """Issue 12's bar lines that this comparison measures: (line, holds, evidence)."""
    by = {r["workload"]: r for r in results}
    lines = []
    slower = [
        r["workload"] for r in results if r["joineryWallSeconds"] > r["karpenterSolveSeconds"]
    ]
    lines.append(
        (
            "joinery plan whole-process wall <= Karpenter Solve alone on every workload",
            not slower,
            f"slower on: {', '.join(slower)}" if slower else "all workloads",
        )
    )
    for case in FAST_CASES:
        if case in by:
            r = by[case]
            ratio = r["karpenterSolveSeconds"] / r["joineryWallSeconds"]
            by_cpu = r["karpenterSolveCpuSeconds"] / r["joineryCpuSeconds"]
            lines.append(
                (
                    f">= 5x faster than Karpenter Solve on {case}",
                    ratio >= 5,
                    f"{ratio:.2f}x by wall time, {by_cpu:.2f}x by CPU time",
                )
            )
    if "deployments" in by:
        rate = by["deployments"]["joinerySolvePodsPerSecond"]
        lines.append(
            (
                "solve-only >= 2,000 pods/s on the real-catalog Deployments workload",
                rate >= 2000,
                f"{rate:,.0f} pods/s",
            )
        )
    dearer = [
        f"{r['workload']} ({r['joineryCostPerHour']:.2f} > {r['karpenterCostRange'][0]:.2f})"
        for r in results
        if r["joineryCostPerHour"] > r["karpenterCostRange"][0] * (1 + 1e-9) + 1e-9
    ]
    lines.append(("never dearer than Karpenter", not dearer, "; ".join(dearer) or "all workloads"))
    missed = [
        f"{r['workload']} ({len(r['placedByKarpenterNotJoinery'])} pods)"
        for r in results
        if r["placedByKarpenterNotJoinery"]
    ]
    lines.append(
        ("every pod Karpenter places placed", not missed, "; ".join(missed) or "all workloads")
    )
    return lines


def _cost(span: list[float]) -> str:
    low, high = span
    return f"{low:,.2f}" if math.isclose(low, high) else f"{low:,.2f} to {high:,.2f}"


def table(results: list[dict[str, Any]], runs: int) -> str:
    head = (
        "| workload | pods | Karpenter `Solve`, 1 core: wall (CPU) | `joinery plan` wall "
        "| `joinery plan` CPU | Joinery solve alone: wall (CPU) | Karpenter $/h | Joinery $/h "
        "| unschedulable (Karpenter / Joinery) |"
    )
    rows = [head, "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    titles = {w.name: w.title for w in WORKLOADS}
    for r in results:
        rows.append(
            f"| {titles[r['workload']]} | {r['pods']:,} "
            f"| {r['karpenterSolveSeconds']:.2f} s ({r['karpenterSolveCpuSeconds']:.2f} s) "
            f"| {r['joineryWallSeconds']:.2f} s | {r['joineryCpuSeconds']:.2f} s "
            f"| {r['joinerySolveSeconds']:.2f} s ({r['joinerySolveCpuSeconds']:.2f} s; "
            f"{r['joinerySolvePodsPerSecond']:,.0f} pods/s) "
            f"| {_cost(r['karpenterCostRange'])} | {r['joineryCostPerHour']:,.2f} "
            f"| {r['karpenterUnschedulable']} / {r['joineryUnschedulable']} |"
        )
    rows.append("")
    rows.append(f"Medians of {runs} interleaved runs (pods/s from the solve's wall time).")
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cases", help="comma-separated workload names (default: all)")
    parser.add_argument("--karpenter", help="karpenter-solve binary (default: build.sh's)")
    parser.add_argument("--joinery", help="joinery executable (default: beside this Python)")
    parser.add_argument("--keep", metavar="DIR", help="write the inputs here and keep them")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--save", metavar="FILE", help="also write the results as JSON here")
    parser.add_argument(
        "--cold-catalog",
        action="store_true",
        help="time `joinery plan` parsing the catalog each run (its catalog cache off)",
    )
    parser.add_argument(
        "--solve-only", nargs=2, metavar=("MANIFESTS", "CATALOG"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.solve_only:
        print(json.dumps(solve_only(Path(args.solve_only[0]), Path(args.solve_only[1]))))
        return 0
    names = args.cases.split(",") if args.cases else [w.name for w in WORKLOADS]
    unknown = set(names) - {w.name for w in WORKLOADS}
    if unknown:
        parser.error(f"unknown workload(s): {', '.join(sorted(unknown))}")
    workloads = [w for w in WORKLOADS if w.name in names]
    karpenter = args.karpenter or build_karpenter()
    joinery = args.joinery or str(Path(sys.executable).with_name("joinery"))
    compile_project()
    global JOINERY_ENV
    if args.cold_catalog:
        JOINERY_ENV = {**os.environ, "JOINERY_CACHE_DIR": ""}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.keep or tmp)
        inputs = write_inputs(out, workloads)
        results = []
        for w in workloads:
            first = run_karpenter(karpenter, inputs[w.name])
            diffs = same_problem(
                joinery_summary(inputs[w.name].manifests, inputs[w.name].catalog),
                first["summary"],
            )
            if diffs:
                print(f"{w.name}: the two tools read different problems:", file=sys.stderr)
                for d in diffs:
                    print(f"  {d}", file=sys.stderr)
                return 1
            print(f"{w.name}: same problem for both tools; timing", file=sys.stderr, flush=True)
            results.append(compare(w.name, inputs[w.name], karpenter, joinery, args.runs))
    doc = json.dumps({"results": results, "bar": bar(results)}, indent=2)
    if args.save:
        Path(args.save).write_text(doc)
    if args.json:
        print(doc)
        return 0
    load = os.getloadavg()
    catalog = "parsed each run" if args.cold_catalog else "from its cache (filled before timing)"
    print(
        f"# {platform.machine()}, {os.cpu_count()} CPUs, load {load[0]:.2f} {load[1]:.2f} "
        f"{load[2]:.2f}; Karpenter {results[0]['karpenterVersion'] if results else '?'} "
        f"(GOMAXPROCS=1); python {platform.python_version()}; "
        f"catalog {catalog}"
    )
    print(table(results, args.runs))
    print()
    for line, holds, evidence in bar(results):
        print(f"- [{'x' if holds else ' '}] {line}: {evidence}")
    for r in results:
        if r["placedByKarpenterNotJoinery"]:
            print(f"\n{r['workload']}: Joinery left unschedulable, Karpenter placed:")
            for e in r["joineryUnschedulableExamples"]:
                print(f"  {e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
