"""Termination's steps in one call (the lifecycle's shape 2): begin termination, one drain
pass, the volume check, terminate the instance, finalize.

Most terminations wait at none of these steps (nothing to evict or every pod leaves at once,
no volumes, EC2 ends the instance on the first ask), and as separate local activities each
step cost the worker a round trip through the SDK and the history a marker. One pass runs
the same functions the per-step activities run, in the same order and with the same inputs,
and stops after the first step whose answer means waiting: the workflow records the phases
passed and goes on with its per-step loops (their backoff and the terminationGracePeriod
deadline) from there. Every step is idempotent, so a pass that fails halfway can be run
again, or left to the per-step path, from the start.
"""

from __future__ import annotations

from activities.deps import Deps
from activities.lifecycle import drain
from activities.lifecycle import termination as term
from activities.lifecycle.types import (
    DrainInput,
    FinalizeInput,
    InstanceInput,
    TerminationPassInput,
    TerminationProgress,
    VolumesInput,
)


def run(deps: Deps, inp: TerminationPassInput) -> TerminationProgress:
    begin = inp.begin
    progress = TerminationProgress(start=term.begin(deps, begin))
    start = progress.start
    node = start.node_name or inp.node_name
    # No Node, or a dead one: nothing to drain and no volumes to wait for.
    if node and not start.instance_gone:
        progress.drain = drain.drain_pass(deps, DrainInput(begin.name, node, start.grace_deadline))
        if not progress.drain.done:
            return progress
        progress.volumes_attached = term.volumes_attached(deps, VolumesInput(begin.name, node))
        if progress.volumes_attached:
            return progress
    progress.instance_gone = term.terminate_instance(
        deps, InstanceInput(begin.name, begin.provider_id)
    )
    if not progress.instance_gone:
        return progress
    term.finalize(deps, FinalizeInput(begin.name, node, begin.reason))
    progress.finalized = True
    return progress
