"""``DisruptionWorkflow``: id ``disruption@<cluster>``, one per cluster, forever.

Each round: compute → validation delay → recompute, keep what still holds → carry out the
surviving commands concurrently (``execute``). Rounds run one at a time, so the engine's
budgets (which count NodeClaims already being deleted) hold across rounds too: a round's
commands have finished launching and deleting before the next round reads the cluster.
The watchers signal ``cluster_changed`` on pod and node changes; with no change, a round
runs when the last one said a node's time hold ends (``trigger``), else on a slow timer. The
signals name the NodeClaims whose Nodes went away: once every claim the last commands deleted
is named, their budget is free and the next round runs without the debounce.
``joinery pause [--nodepool]`` holds commands on paused pools (the pause state lives in the
provisioner; the compute step asks it).
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError

from workflows import history, search
from workflows.disruption import compute, execute, outcomes, trigger
from workflows.disruption.state import (
    COMPUTING,
    EXECUTING,
    IDLE,
    VALIDATING,
    CommandResult,
    DisruptionInput,
    DisruptionStatus,
)

# ``workflow.patched`` id of the round that waits, after commands, for their deleted nodes.
HOLD_PATCH = "disruption-round-after-commands-waits-for-deleted-nodes"
# ... at most this long with no change at all.
HOLD_MAX = timedelta(seconds=30)

with workflow.unsafe.imports_passed_through():
    # The replacements in a Decision are planning payloads; their module must be in the
    # sandbox's own module table too, or decoding them cannot resolve their annotations.
    import activities.planning.types  # noqa: F401
    from activities.disruption.types import CommandSpec, Decision
    from models import contract


def round_summary(decision: Decision, kept: list[CommandSpec]) -> str:
    """One line for the UI and ``joinery status``."""
    if not decision.commands:
        held = f"; {len(decision.held)} held by pause" if decision.held else ""
        return f"nothing to disrupt ({decision.blocked} blocked, {decision.kept} kept{held})"
    dropped = len(decision.commands) - len(kept)
    text = "; ".join(c.summary for c in kept) or "no command survived validation"
    return text + (f" ({dropped} invalidated)" if dropped else "")


@workflow.defn(name=contract.DISRUPTION_WORKFLOW)
class DisruptionWorkflow(history.QueueMove):
    @workflow.init
    def __init__(self, inp: DisruptionInput) -> None:
        self.inp = inp
        self.phase = IDLE
        self.in_flight: list[str] = []
        self._changes = 0
        # claims named gone while commands run (their signal may beat the delete's result)
        self._gone: set[str] = set()
        # every claim in ``inp.awaiting`` was named gone since the last round began
        self._released = False
        # the last round's commands wait for their nodes (HOLD_PATCH), whatever else changed
        self._holding = False

    @workflow.run
    async def run(self, inp: DisruptionInput) -> None:
        while True:
            if not self.inp.changed or self._holding:
                await trigger.wait(
                    lambda: self._changes,
                    lambda: self.inp.changed,
                    self._due(),
                    lambda: self._released,
                )
            self.inp.changed = False
            await self._round()
            await history.continue_if_long(self.inp.history_limit, self.inp, self.move_to)

    def _due(self) -> str:
        """When a round is due with no change: the last round's ``due``, and while the nodes
        its commands deleted are awaited, HOLD_MAX after now at the latest (a signal naming
        them may be lost with a worker; the round then comes anyway, as it did at once)."""
        if not self.inp.awaiting or not workflow.patched(HOLD_PATCH):
            return self.inp.due
        latest = workflow.now() + HOLD_MAX
        if self.inp.due and datetime.fromisoformat(self.inp.due) <= latest:
            return self.inp.due
        return latest.isoformat()

    def _enter(self, phase: str, details: str = "") -> None:
        self.phase = phase
        workflow.set_current_details(f"**{phase}**" + (f"\n\n{details}" if details else ""))
        search.upsert(self.inp.search_attributes, [search.PHASE.value_set(phase)])

    def _validating(self, proposed: list[CommandSpec]) -> None:
        lines = "\n".join(f"- {c.summary}" for c in proposed)
        self._enter(VALIDATING, f"round {self.inp.rounds}: proposed\n\n{lines}")

    async def _round(self) -> None:
        self.inp.rounds += 1
        self._released = False
        self._holding = False
        self._enter(COMPUTING, f"round {self.inp.rounds}")
        try:
            first, latest, kept = await compute.validated(
                self.inp.cluster, self.inp.rounds, self._validating, self.inp.validation_delay
            )
        except ActivityError as exc:
            # A decision that could not be made (its attempts used up, e.g. by worker
            # crashes) loses this round only: the workflow, the one per cluster, lives on
            # and the next change or the slow timer runs another. Nothing is marked yet.
            self.inp.last_summary = f"round abandoned, no decision: {exc.cause or exc}"
            self.inp.due = ""
            self._enter(IDLE, f"round {self.inp.rounds}: {self.inp.last_summary}")
            return
        if first.commands:
            self.inp.validations += 1  # compute.validated waited the delay
        self.inp.last_summary = round_summary(first, kept)
        self.inp.due = latest.due
        self.inp.last_round_at = workflow.now().isoformat()
        self.inp.last_outcomes = outcomes.decided(
            first, latest, kept, self.inp.rounds, self.inp.last_outcomes
        )
        if kept:
            self.in_flight = [c.summary for c in kept]
            reasons = ",".join(sorted({c.reason for c in kept}))
            pools = ",".join(sorted({p for c in kept for p in c.pools}))
            search.upsert(
                self.inp.search_attributes,
                [search.DISRUPTION_REASON.value_set(reasons), search.NODEPOOL.value_set(pools)],
            )
            self._gone = set()
            self._enter(EXECUTING, self.inp.last_summary)
            results: list[CommandResult] = await asyncio.gather(
                *(execute.run(c, len(kept), self.inp.search_attributes) for c in kept)
            )
            deleted = [n for c, r in zip(kept, results, strict=True) if r.done for n in c.claims]
            self.inp.awaiting = [n for n in deleted if n not in self._gone]
            self._gone = set()
            done = [r for r in results if r.done]
            failed = [r for r in results if not r.done]
            self.inp.last_outcomes = outcomes.finished(self.inp.last_outcomes, kept, results)
            self.inp.commands_done += len(done)
            self.inp.commands_failed += len(failed)
            if failed:
                self.inp.last_summary += " · failed: " + "; ".join(
                    f"{r.summary} ({r.why})" for r in failed
                )
            self.in_flight = []
            self.inp.last_action = f"round {self.inp.rounds}: {self.inp.last_summary}"
            # What the commands changed is worth another look at once; but while nodes they
            # deleted still hold their pool's budget, the look comes when those are gone
            # (``trigger``): sooner, it finds part of the budget free and proposes part of a
            # batch, and its validation holds the next one back for 15 s.
            if not self.inp.awaiting or not workflow.patched(HOLD_PATCH):
                self.inp.changed = True
            else:  # changes signalled meanwhile wait for them too (or the debounce)
                self._holding = True
        acted = ""
        if self.inp.last_action and not self.inp.last_action.startswith(
            f"round {self.inp.rounds}:"
        ):
            acted = f"\n\nlast acted: {self.inp.last_action}"
        self._enter(IDLE, f"round {self.inp.rounds}: {self.inp.last_summary}{acted}")

    @workflow.signal(name=contract.SIGNAL_CLUSTER_CHANGED)
    def cluster_changed(self, gone: list[str] | None = None) -> None:
        """``gone``: the NodeClaims whose Nodes went away since the last signal (the
        watchers name them; older senders send none)."""
        self._changes += 1
        self.inp.changed = True
        if not gone:
            return
        if self.phase == EXECUTING:
            self._gone.update(gone)
        if self.inp.awaiting:
            self.inp.awaiting = [n for n in self.inp.awaiting if n not in set(gone)]
            self._released = not self.inp.awaiting

    @workflow.query(name=contract.QUERY_STATUS)
    def status(self) -> DisruptionStatus:
        return DisruptionStatus(
            cluster=self.inp.cluster,
            phase=self.phase,
            rounds=self.inp.rounds,
            commands_done=self.inp.commands_done,
            commands_failed=self.inp.commands_failed,
            last_summary=self.inp.last_summary,
            last_action=self.inp.last_action,
            in_flight=list(self.in_flight),
            last_round_at=self.inp.last_round_at,
            last_outcomes=list(self.inp.last_outcomes),
            validations=self.inp.validations,
        )
