"""``GarbageCollectionWorkflow``: id ``garbage-collection@<cluster>``, one per cluster, forever.

A round runs each step, one activity per kind of leftover, in an order that lets one step's
work feed the next: orphan instances are terminated first, then claims whose instance is gone
and claims whose NodePool is gone are deleted (their lifecycles drain and finalize them), and
last the launch templates no live instance uses are deleted. A step that keeps failing is
recorded and left for the next round; it never stops the others. Then a durable timer waits
out the period, and the history is cut by continue-as-new when it grows.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError

from workflows import calls, history
from workflows.garbage.state import ATTEMPTS, GarbageCollectionInput, GarbageCollectionStatus

with workflow.unsafe.imports_passed_through():
    from activities.garbage.types import Collected, CollectInput
    from models import contract
    from models.contract import GarbageCollectionActivity as names

# (activity, what its removals are called in summaries)
STEPS: tuple[tuple[str, str], ...] = (
    (names.ORPHAN_INSTANCES, "orphan instances terminated"),
    (names.CLAIMS_WITHOUT_INSTANCE, "claims without an instance deleted"),
    (names.CLAIMS_WITHOUT_NODEPOOL, "claims without a NodePool deleted"),
    (names.LAUNCH_TEMPLATES, "unused launch templates/profiles deleted"),
)


@workflow.defn(name=contract.GARBAGE_COLLECTION_WORKFLOW)
class GarbageCollectionWorkflow(history.QueueMove):
    @workflow.init
    def __init__(self, inp: GarbageCollectionInput) -> None:
        self.inp = inp
        self.failed: dict[str, str] = {}

    @workflow.run
    async def run(self, inp: GarbageCollectionInput) -> None:
        while True:
            await self._round()
            await workflow.sleep(
                timedelta(seconds=self.inp.period_seconds), summary="until the next round"
            )
            await history.continue_if_long(self.inp.history_limit, self.inp, self.move_to)

    async def _round(self) -> None:
        self.inp.rounds += 1
        self.failed = {}
        done: list[str] = []
        for step, what in STEPS:
            workflow.set_current_details(f"**round {self.inp.rounds}** · {step}")
            try:
                result = await calls.call(
                    step,
                    CollectInput(self.inp.grace_seconds),
                    Collected,
                    summary=step,
                    timeout=timedelta(minutes=2),
                    attempts=ATTEMPTS,
                )
            except ActivityError as exc:
                self.failed[step] = str(exc.cause or exc)
                continue
            if result.removed:
                self.inp.removed[step] = self.inp.removed.get(step, 0) + len(result.removed)
                done.append(f"{len(result.removed)} {what} ({', '.join(result.removed[:5])})")
        summary = "; ".join(done) or "nothing to collect"
        if self.failed:
            summary += f" · failed: {', '.join(self.failed)}"
        self.inp.last_summary = f"round {self.inp.rounds}: {summary}"
        workflow.set_current_details(self.inp.last_summary)

    @workflow.query(name=contract.QUERY_STATUS)
    def status(self) -> GarbageCollectionStatus:
        return GarbageCollectionStatus(
            cluster=self.inp.cluster,
            rounds=self.inp.rounds,
            removed=dict(self.inp.removed),
            last_summary=self.inp.last_summary,
            failed=dict(self.failed),
        )
