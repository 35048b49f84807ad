"""End to end in the sandbox: from a scale-down to the cheaper fleet, in Joinery's own time.

Each run is ``joinery dev --scenario consolidation --boot-delay 0 --exit`` in a subprocess (a
whole fresh stack on free ports), so runs are independent: 40 pods on a fleet of nodes of at
most 8 vCPUs, scaled to 4 behind a PDB; the worker's DisruptionWorkflow consolidates. Per
run this prints the seconds from the scale-down until the live instances were the final
ones, the 15 s validation delays waited in that time, their difference (Joinery's own time,
the figure the bar is about: under 60 s), the rounds, the fleet before and after, whether
the PDB and the budget held, and the machine load. Exit code 0 only if every run held.

    python -m benchmarks.consolidation [--runs 3] [--boot-delay 0] [--json]
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.e2e import arguments, details, machine, run_once  # noqa: E402

SCENARIO = "consolidation"
BAR_SECONDS = 60.0


def describe(i: int, r: dict[str, Any]) -> str:
    if "joinerySeconds" not in r:
        head = f"run {i}: FAILED (exit {r['exitCode']}), wall {r['wallSeconds']:.0f} s"
    else:
        head = (
            f"run {i}: {r['nodesBefore']} nodes ${r['costPerHourBefore']:.4f}/h -> "
            f"{r['nodes']} node(s) ${r['costPerHour']:.4f}/h in {r['secondsToCheaperFleet']:.1f} s"
            f" = {r['joinerySeconds']:.1f} s Joinery + {r['validationDelaySeconds']:.0f} s "
            f"validation ({r['validationDelays']} delays, {r['rounds']} rounds); pods Running "
            f"min {r['minPodsRunning']}/4 (PDB {r['pdbMinAvailable']}), max disrupting "
            f"{r['maxDisrupting']}, over budget {r['budgetExceeded']}; "
            f"{'ok' if r.get('ok') else 'FAILED'} (exit {r['exitCode']}), "
            f"wall {r['wallSeconds']:.0f} s, load {r['loadBefore']:.1f}->{r['loadAfter']:.1f}"
        )
    return head + details(r, "timeline (s from the scale-down)")


def main() -> int:
    parser = arguments(__doc__.splitlines()[0], runs=3)
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if not args.json:
        print(
            f"# {machine()}; joinery dev --scenario {SCENARIO} --boot-delay {args.boot_delay:g}",
            flush=True,
        )
    results = []
    for i in range(1, args.runs + 1):
        r = run_once(args.boot_delay, args.timeout, cold=False, scenario=SCENARIO)
        results.append(r)
        if not args.json:
            print(describe(i, r), flush=True)
    own = [r["joinerySeconds"] for r in results if "joinerySeconds" in r]
    if args.json:
        print(json.dumps(results, indent=2))
    elif own:
        print(
            f"Joinery's own seconds to the cheaper fleet over {len(own)} run(s): "
            f"min {min(own):.1f}, median {statistics.median(own):.1f}, max {max(own):.1f} "
            f"(bar: under {BAR_SECONDS:.0f} s)"
        )
    return 0 if all(r.get("ok") and r["exitCode"] == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
