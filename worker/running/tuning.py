"""How a Joinery worker runs workflow code: the options every worker replica shares.

Measured with ``benchmarks/scale.py`` (docs/performance.md): with instant activities most of a
worker's CPU went to the workflow sandbox, first importing and compiling the ``workflows``
package again for every new workflow run (now passed through: imported once per process),
then, once that was gone, running a compiled snippet inside the sandbox for every payload a
workflow task encodes or decodes (about a third of the worker's CPU). So a ``joinery worker``
runs workflow code **without the sandbox** by default: Joinery's workflow code is its own,
deterministic (constants and functions, no module state, all I/O in activities), and is
passed through the sandbox anyway. What the sandbox still adds is a runtime check that
workflow code calls nothing nondeterministic; every workflow test runs under it (their
workers use the SDK's default sandboxed runner), the recorded histories replay under it, and
an operator who runs patched workflow code can turn it back on (``--workflow-sandbox``).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

from temporalio.worker import UnsandboxedWorkflowRunner, WorkflowRunner
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from models.contract import NodeClaimActivity
from worker.running import slots

# A workflow's next task waits this long for a dead worker's sticky queue before any worker
# may take it (the SDK default is 10 s).
STICKY_TIMEOUT = timedelta(seconds=5)
# Workflow tasks this worker holds at once. They are pure Python under one GIL: more at once
# only share the same CPU, so each takes longer. The SDK's default (100) let a burst of 100
# new lifecycles on a loaded 2-core machine hold 100 tasks that each took 10-25 s, past the
# 10 s workflow task timeout: the server dropped them and dispatched them again, more work
# again, and the burst never drained. Tasks the worker has not taken wait at the server,
# where no timeout runs. A task waiting on its launch (a local activity since lifecycle
# shape 3) holds a slot but runs no Python: those do not count (``worker/running/slots.py``).
WORKFLOW_TASK_SLOTS = 8
# Launches (local activities of ``NodeClaimActivity.LAUNCH``, a CreateFleet of 1-3 s each)
# a worker runs at once beyond WORKFLOW_TASK_SLOTS, each holding a workflow-task slot, a
# local-activity slot and an activity thread of its own: as many as the regular activity
# threads a `joinery worker` has by default (``--activity-threads``), which ran the launches
# when they were regular activities.
LAUNCH_ALLOWANCE = 32
# Local activities (the lifecycle's short Kubernetes calls) this worker runs at once, on
# threads of their own. The SDK runs local and regular activities on one executor, and a
# local activity runs inside its workflow task: when launches and drains held every thread,
# local calls queued behind them, each workflow task stayed open 8 s (until the SDK's task
# heartbeat) holding one of the WORKFLOW_TASK_SLOTS, and the provisioner's own tasks waited
# behind hundreds of lifecycles' (a 250-pod burst: a second round 150 s late;
# docs/performance.md). A workflow task schedules one or two at a time, so twice the slots.
LOCAL_ACTIVITY_SLOTS = 2 * WORKFLOW_TASK_SLOTS
# Activity threads of the worker for the cluster's own workflows (provisioner, disruption,
# garbage collection; ``models.contract.cluster_workflows_queue``). Three workflows run one
# or two activities each at a time; launches and drains never queue here.
CLUSTER_ACTIVITY_THREADS = 8
# Workflow runs a worker keeps in memory between their tasks (the SDK's default is 1,000). Every
# node's lifecycle runs for the node's whole life, so a replica serving more nodes than this
# evicts lifecycles, and each eviction turns the next signal or timer into a replay of the
# whole history. A cached lifecycle costs about 100 KB of the worker's memory (1,000 Ready
# lifecycles: 95 KB each unsandboxed, 106 KB sandboxed), so 2,000 stay within the Helm
# chart's 512 MiB request beside the worker's own ~70 MB; replicas share a cluster's nodes.
CACHED_WORKFLOWS = 2000
# Packages imported once per worker process instead of once per workflow run.
PASSED_THROUGH = ("workflows", "activities", "models")


def workflow_runner(sandboxed: bool = False) -> WorkflowRunner:
    """The sandbox (our packages passed through) when asked for, else plain Python."""
    if not sandboxed:
        return UnsandboxedWorkflowRunner()
    return SandboxedWorkflowRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_modules(*PASSED_THROUGH)
    )


def slot_options(threads: int, launches: int = LAUNCH_ALLOWANCE) -> dict[str, Any]:
    """The slots and the activity executor: WORKFLOW_TASK_SLOTS workflow tasks running Python
    and up to ``launches`` more waiting on their launch; ``threads`` regular activities at
    once, and LOCAL_ACTIVITY_SLOTS local ones plus the launches, which never wait for a
    thread a regular one holds."""
    return {
        "activity_executor": ThreadPoolExecutor(
            max_workers=threads + LOCAL_ACTIVITY_SLOTS + launches, thread_name_prefix="activity"
        ),
        "tuner": slots.tuner(
            workflow_slots=WORKFLOW_TASK_SLOTS,
            activity_slots=threads,
            local_activity_slots=LOCAL_ACTIVITY_SLOTS,
            launch_allowance=launches,
            launch_type=NodeClaimActivity.LAUNCH,
        ),
    }


def worker_options(
    sandboxed: bool = False, *, threads: int = 32, launches: int = LAUNCH_ALLOWANCE
) -> dict[str, Any]:
    """Keyword arguments for ``temporalio.worker.Worker`` beyond queue, workflows, activities:
    ``threads`` regular activities at once (``slot_options``)."""
    return {
        "workflow_runner": workflow_runner(sandboxed),
        "sticky_queue_schedule_to_start_timeout": STICKY_TIMEOUT,
        "max_cached_workflows": CACHED_WORKFLOWS,
        **slot_options(threads, launches),
    }
