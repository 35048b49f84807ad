"""What the workflow machinery adds to a disruption round's wall time.

A whole sandbox (``sandbox.dev``: Temporal dev server, control plane with simulated kubelets
and a 0 s boot delay, the EC2 emulator, ``joinery worker`` as its own process) is given the
fleet of ``sandbox.scenarios.spread_fleet`` and scaled down, so the DisruptionWorkflow runs
several rounds (empty nodes deleted, half-used m5.xlarge nodes replaced by m5.large). Then
the rounds are read back from the workflow's history (``tests.support.round_history``): for
each round that carried out commands, its wall time from the first activity scheduled to the last
one closed, the time covered by activities, the 15 s validation delay, the waits between
readiness checks of replacements, and the rest: time covered by no activity and no timer,
which is what scheduling, dispatch and workflow tasks cost. ``overhead`` is that rest as a
share of the round's wall time without the validation delay.

    python -m benchmarks.round_overhead [--nodes 4] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from temporalio.client import Client  # noqa: E402

from activities.kubernetes import raw  # noqa: E402
from sandbox.dev import DevOptions, running  # noqa: E402
from sandbox.scenarios import spread_fleet as fleet  # noqa: E402
from tests.support.round_history import Rounds, read_rounds  # noqa: E402

POOL = "overhead"


def wait(probe: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if probe():
            return
        time.sleep(0.5)
    raise SystemExit(f"round_overhead: timed out after {timeout:.0f}s: {what}")


def measure(nodes: int) -> tuple[Rounds, float]:
    keep = max(1, nodes // 2)
    options = DevOptions(temporal_port=0, boot_delay=0.0)
    with running(options, log=lambda line: print(line, file=sys.stderr)) as stack:
        assert stack.admin is not None and stack.temporal is not None
        admin = stack.admin
        namespace = f"overhead-{uuid.uuid4().hex[:6]}"
        fleet.create_nodepool(admin, POOL)
        raw.call(admin.core.create_namespace, {"metadata": {"name": namespace}})
        wait(
            lambda: bool(raw.call(admin.core.list_namespaced_service_account, namespace)["items"]),
            30,
            "service account",
        )
        fleet.create_web_pdb(admin, namespace)
        fleet.create_spread(admin, namespace, POOL, fleet.FILLER, nodes)
        wait(lambda: len(fleet.running(admin, namespace, fleet.FILLER)) == nodes, 300, "fillers")
        fleet.create_spread(admin, namespace, POOL, fleet.WEB, nodes)
        wait(lambda: len(fleet.running(admin, namespace, fleet.WEB)) == nodes, 300, "web pods")
        began = time.monotonic()
        fleet.scale(admin, namespace, fleet.FILLER, 0)
        fleet.scale(admin, namespace, fleet.WEB, keep)
        wait(
            lambda: fleet.consolidated(admin, namespace, POOL, keep),
            120 + 90 * nodes,
            f"consolidated to {keep} {fleet.SMALL}",
        )
        seconds = time.monotonic() - began

        async def read() -> Rounds:
            assert stack.temporal is not None
            client = await Client.connect(stack.temporal.address, namespace=stack.options.namespace)
            return await read_rounds(client, stack.options.cluster_name)

        return asyncio.run(read()), seconds


def report(rounds: Rounds, seconds: float, nodes: int) -> dict[str, Any]:
    own = sum(t.wall - t.validation for t in rounds.timings)
    machinery = sum(t.machinery for t in rounds.timings)
    return {
        "nodes": nodes,
        "secondsToConsolidated": round(seconds, 1),
        "rounds": [asdict(t) | {"overhead": t.overhead} for t in rounds.timings],
        "roundsWithCommands": rounds.rounds,
        "commands": len(rounds.commands),
        "wallWithoutValidation": round(own, 2),
        "machinery": round(machinery, 2),
        "overhead": machinery / own if own else 0.0,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, "
        f"load {' '.join(f'{x:.1f}' for x in os.getloadavg())}",
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=4, help="fleet size before the scale-down")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    rounds, seconds = measure(args.nodes)
    doc = report(rounds, seconds, args.nodes)
    if args.json:
        print(json.dumps(doc, indent=2))
        return 0
    print(f"{doc['machine']}; {args.nodes} nodes scaled down, consolidated in {seconds:.0f}s")
    print(
        f"{'round':>5} {'cmds':>4} {'wall':>7} {'valid.':>7} {'polls':>7} {'activ.':>7} "
        f"{'machinery':>9} {'dispatch':>8} {'overhead':>8}"
    )
    for i, t in enumerate(rounds.timings, 1):
        print(
            f"{i:>5} {t.commands:>4} {t.wall:>7.2f} {t.validation:>7.2f} {t.polls:>7.2f} "
            f"{t.activities:>7.2f} {t.machinery:>9.2f} {t.dispatch:>8.2f} {t.overhead:>8.1%}"
        )
    print(
        f"all rounds: machinery {doc['machinery']:.2f}s of {doc['wallWithoutValidation']:.2f}s "
        f"(wall without the validation delay): {doc['overhead']:.1%}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
