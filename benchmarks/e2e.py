"""End to end in the sandbox: 100 pending pods to 100 Running pods, with a 0 s boot delay.

Each run is ``joinery dev --scenario burst --boot-delay 0 --exit`` in a subprocess (a whole
fresh stack on free ports: Temporal, control plane, EC2 emulator, worker), so runs are
independent. The scenario's last stdout line is its JSON summary; this prints, per run, the
seconds from creating the Deployments until all 100 pods were Running, the nodes launched,
their hourly cost, and the scenario's breakdown (seconds from the first create to each
milestone, to about 1 s). ``--cold`` skips the scenario's warm-up, so the burst also pays
for the worker's first catalog load. Exit code 0 only if every run held.

    python -m benchmarks.e2e [--runs 1] [--boot-delay 0] [--cold] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import process_tree  # noqa: E402
from sandbox.dev import joinery_command  # noqa: E402

SCENARIO = "burst"
WARMUP_ENV = "JOINERY_BURST_WARMUP"  # sandbox.scenarios.burst.WARMUP_ENV, kept import-free


def machine() -> str:
    memory = ""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory = f", {int(line.split()[1]) / 1024 / 1024:.0f} GiB"
    except OSError:
        pass
    cpu = platform.processor() or platform.machine()
    return f"{os.cpu_count()} CPUs ({cpu}){memory}, python {platform.python_version()}"


def run_once(
    boot_delay: float, timeout: float, cold: bool, scenario: str = SCENARIO, temporal: str = "dev"
) -> dict[str, Any]:
    """One ``joinery dev --scenario SCENARIO --exit``; its summary plus wall time and load.
    ``temporal``: ``dev`` (the dev server) or ``server`` (temporal-server on PostgreSQL)."""
    env = dict(os.environ)
    if cold:
        env[WARMUP_ENV] = "0"
    command = joinery_command(
        "dev",
        "--scenario",
        scenario,
        "--boot-delay",
        f"{boot_delay:g}",
        "--exit",
        "--temporal-port",
        "0",
        "--timeout",
        f"{timeout:g}",
        "--temporal",
        temporal,
    )
    load_before = os.getloadavg()[0]
    began = time.monotonic()
    # plus start-up and stop of the whole stack; on a timeout (or this benchmark stopped)
    # the whole stack is stopped too, not only `joinery dev`
    stdout, stderr, code, leftover = process_tree.run(
        command, timeout=timeout + 300, cwd=ROOT, env=env
    )
    wall = time.monotonic() - began
    summary: dict[str, Any] = {}
    lines = [line for line in stdout.strip().splitlines() if line.startswith("{")]
    if lines:
        try:
            summary = json.loads(lines[-1])
        except json.JSONDecodeError:
            summary = {}
    if not summary:
        summary = {"ok": False, "failures": ["no JSON summary on stdout"]}
    summary["exitCode"] = code
    if leftover:
        summary.setdefault("failures", []).append(
            f"{leftover} process(es) of the stack were still running after it and were killed"
        )
    summary["wallSeconds"] = round(wall, 1)
    summary["loadBefore"] = round(load_before, 2)
    summary["loadAfter"] = round(os.getloadavg()[0], 2)
    if code != 0 or not summary.get("ok"):
        summary["stderrTail"] = stderr.strip().splitlines()[-40:]
    return summary


def describe(i: int, r: dict[str, Any]) -> str:
    seconds = r.get("secondsToAllRunning")
    head = (
        f"run {i}: {r.get('pods', '?')} pods Running after "
        + (f"{seconds:.1f} s" if seconds is not None else "-")
        + f" on {r.get('nodes', '?')} node(s), ${r.get('costPerHour', 0.0):.4f}/h, "
        f"{'ok' if r.get('ok') else 'FAILED'} (exit {r['exitCode']}), "
        f"instances left {r.get('instancesLeftRunning', '?')}, wall {r['wallSeconds']:.0f} s, "
        f"load {r['loadBefore']:.1f}->{r['loadAfter']:.1f}"
    )
    return head + details(r, "breakdown (s from the first create)")


def details(r: dict[str, Any], breakdown: str) -> str:
    """The lines under a run's one-line description: its breakdown, failures, stderr tail."""
    out = ""
    if r.get("breakdown"):
        out += f"\n  {breakdown}: " + ", ".join(f"{k} {v:.1f}" for k, v in r["breakdown"].items())
    for failure in r.get("failures") or []:
        out += f"\n  failure: {failure}"
    if "stderrTail" in r:
        out += "\n  " + "\n  ".join(r["stderrTail"])
    return out


def arguments(description: str, runs: int) -> argparse.ArgumentParser:
    """The options every sandbox scenario benchmark takes."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--runs", type=int, default=runs, help=f"how many runs (default {runs})")
    parser.add_argument(
        "--boot-delay", type=float, default=0.0, help="simulated node boot delay (default 0)"
    )
    parser.add_argument(
        "--timeout", type=float, default=600.0, help="scenario timeout per run (default 600)"
    )
    parser.add_argument("--json", action="store_true", help="print the summaries as JSON")
    return parser


def main() -> int:
    parser = arguments(__doc__.splitlines()[0], runs=1)
    parser.add_argument(
        "--cold", action="store_true", help="no warm-up: the burst pays the catalog load"
    )
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if not args.json:
        print(
            f"# {machine()}; joinery dev --scenario {SCENARIO} --boot-delay {args.boot_delay:g}"
            f"{' (cold: no warm-up)' if args.cold else ''}",
            flush=True,
        )
    results = []
    for i in range(1, args.runs + 1):
        r = run_once(args.boot_delay, args.timeout, args.cold)
        results.append(r)
        if not args.json:
            print(describe(i, r), flush=True)
    times = [r["secondsToAllRunning"] for r in results if r.get("secondsToAllRunning")]
    if args.json:
        print(json.dumps(results, indent=2))
    elif len(times) > 1:
        print(
            f"seconds to all Running over {len(times)} runs: min {min(times):.1f}, "
            f"median {statistics.median(times):.1f}, max {max(times):.1f}"
        )
    return 0 if all(r.get("ok") and r["exitCode"] == 0 for r in results) else 1


if __name__ == "__main__":
    with process_tree.exit_on_termination():
        sys.exit(main())
