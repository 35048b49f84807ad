"""Workflow throughput: whole NodeClaim lifecycles per second through a Temporal dev server,
with instant activities, so the figure is Temporal's and the workflow's own overhead.

Each lifecycle is the full path: prepare → launch → register → initialize → (expires at
once) → begin termination → drain → volumes → terminate instance → finalize: 9 activities,
about 10 workflow tasks. Prints one line; ``--json`` for machines.

    python benchmarks/workflows.py [--count 300] [--concurrency 100] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from temporalio import activity  # noqa: E402
from temporalio.testing import WorkflowEnvironment  # noqa: E402
from temporalio.worker import Worker  # noqa: E402

from activities.lifecycle.types import (  # noqa: E402
    BeginTerminationInput,
    ClaimSpec,
    DrainInput,
    DrainStatus,
    FinalizeInput,
    InitializeInput,
    InitializeOutcome,
    InstanceInput,
    LaunchOutcome,
    RegisterInput,
    Registration,
    TerminationPassInput,
    TerminationProgress,
    TerminationStart,
    VolumesInput,
)
from models import contract  # noqa: E402
from models.contract import NodeClaimActivity as names  # noqa: E402
from workflows.nodeclaim.state import NodeClaimInput  # noqa: E402
from workflows.nodeclaim.workflow import NodeClaimWorkflow  # noqa: E402


@activity.defn(name=names.PREPARE)
async def prepare(name: str) -> ClaimSpec:
    return ClaimSpec(
        name,
        f"uid-{name}",
        "bench",
        "default",
        expire_after_seconds=0,
        read_by_shape=contract.NODECLAIM_SHAPE,  # as today's prepare stamps it
    )


@activity.defn(name=names.LAUNCH)
async def launch(claim: ClaimSpec) -> LaunchOutcome:
    return LaunchOutcome(f"aws:///z/i-{claim.name}", f"i-{claim.name}", "m5.large", "z", "spot")


@activity.defn(name=names.REGISTER)
async def register(inp: RegisterInput) -> str:
    return inp.claim.name


@activity.defn(name=names.INITIALIZE)
async def initialize(inp: InitializeInput) -> InitializeOutcome:
    return InitializeOutcome(True)


@activity.defn(name=names.BEGIN_TERMINATION)
async def begin(inp: BeginTerminationInput) -> TerminationStart:
    return TerminationStart(inp.name, "2026-01-01T00:00:00Z")


@activity.defn(name=names.DRAIN)
async def drain(inp: DrainInput) -> DrainStatus:
    return DrainStatus(done=True)


@activity.defn(name=names.VOLUMES)
async def volumes(inp: VolumesInput) -> int:
    return 0


@activity.defn(name=names.TERMINATE_INSTANCE)
async def terminate(inp: InstanceInput) -> bool:
    return True


@activity.defn(name=names.FINALIZE)
async def finalize(inp: FinalizeInput) -> bool:
    return True


@activity.defn(name=names.REGISTER_AND_INITIALIZE)
async def register_and_initialize(inp: RegisterInput) -> Registration:
    return Registration(await register(inp), await initialize(InitializeInput(inp.claim, "")))


@activity.defn(name=names.TERMINATION_PASS)
async def termination_pass(inp: TerminationPassInput) -> TerminationProgress:
    """The instant steps above, none of which waits, so the pass goes to the end."""
    b = inp.begin
    progress = TerminationProgress(await begin(b))
    node = progress.start.node_name or inp.node_name or ""
    progress.drain = await drain(DrainInput(b.name, node))
    progress.volumes_attached = await volumes(VolumesInput(b.name, node))
    progress.instance_gone = await terminate(InstanceInput(b.name, b.provider_id))
    progress.finalized = await finalize(FinalizeInput(b.name, node, b.reason))
    return progress


@activity.defn(name=names.DISRUPTION_HOLD)
async def disruption_hold(nodepool: str) -> str:
    return ""


ACTIVITIES: list[Callable[..., Any]] = [
    register_and_initialize,
    termination_pass,
    disruption_hold,
    prepare,
    launch,
    register,
    initialize,
    begin,
    drain,
    volumes,
    terminate,
    finalize,
]


async def run(count: int, concurrency: int) -> dict[str, Any]:
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=str(Path(sys.executable).parent / "temporal"),
        dev_server_log_level="error",
    )
    queue = f"bench-{uuid.uuid4().hex[:6]}"
    gate = asyncio.Semaphore(concurrency)
    latencies: list[float] = []

    async def one(i: int) -> None:
        async with gate:
            t0 = time.perf_counter()
            name = f"bench-{i}"
            result = await env.client.execute_workflow(
                NodeClaimWorkflow.run,
                NodeClaimInput(name, shape=contract.NODECLAIM_SHAPE),
                id=contract.nodeclaim_id("bench", name),
                task_queue=queue,
            )
            assert result == "Terminated", result
            latencies.append(time.perf_counter() - t0)

    try:
        async with Worker(
            env.client,
            task_queue=queue,
            workflows=[NodeClaimWorkflow],
            activities=ACTIVITIES,
            max_concurrent_workflow_tasks=100,
            max_concurrent_activities=200,
        ):
            await asyncio.gather(*(one(i) for i in range(min(20, count))))  # warm up
            latencies.clear()
            start = time.perf_counter()
            await asyncio.gather(*(one(i) for i in range(20, 20 + count)))
            elapsed = time.perf_counter() - start
    finally:
        await env.shutdown()
    latencies.sort()
    return {
        "lifecycles": count,
        "concurrency": concurrency,
        "seconds": round(elapsed, 2),
        "lifecycles_per_second": round(count / elapsed, 1),
        "p50_seconds": round(latencies[len(latencies) // 2], 3),
        "p99_seconds": round(latencies[int(len(latencies) * 0.99) - 1], 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = asyncio.run(run(args.count, args.concurrency))
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"{result['lifecycles']} lifecycles, concurrency {result['concurrency']}: "
            f"{result['lifecycles_per_second']}/s ({result['seconds']} s), "
            f"latency p50 {result['p50_seconds']} s, p99 {result['p99_seconds']} s"
        )


if __name__ == "__main__":
    main()
