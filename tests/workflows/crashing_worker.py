"""A worker that dies during a local launch (run as a process of its own by
test_local_launch_crash.py, which SIGKILLs it): the lifecycle with the activity doubles,
its launch blocking after it wrote ``marker``, as a CreateFleet under way would.

    python -m tests.workflows.crashing_worker ADDRESS TASK_QUEUE MARKER
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from temporalio import activity
from temporalio.client import Client
from temporalio.worker import Worker

from activities.lifecycle.types import ClaimSpec, LaunchOutcome
from models.contract import NodeClaimActivity as names
from tests.support.workflow_fakes import FakeCloud
from worker.running import tuning
from workflows.nodeclaim.workflow import NodeClaimWorkflow


async def main(address: str, queue: str, marker: Path) -> None:
    @activity.defn(name=names.LAUNCH)
    def launch(claim: ClaimSpec) -> LaunchOutcome:
        marker.write_text(claim.name)
        time.sleep(600)  # the test kills this process first
        raise RuntimeError("never")

    doubles = [a for a in FakeCloud().activities() if a.__name__ != "launch"]
    client = await Client.connect(address)
    async with Worker(
        client,
        task_queue=queue,
        workflows=[NodeClaimWorkflow],
        activities=[*doubles, launch],
        **tuning.worker_options(),
    ):
        await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], Path(sys.argv[3])))
