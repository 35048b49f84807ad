"""Carrying out one command, durably: mark the candidates (taint + DisruptionReason) →
launch the replacements → wait until every one is Initialized → delete the candidates'
NodeClaims (their lifecycles drain them through PDBs). If a replacement fails or does not
initialize in time, undo: unmark the candidates and delete what was launched."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError

from workflows import calls
from workflows.disruption.state import CommandResult

with workflow.unsafe.imports_passed_through():
    from activities.disruption.types import CommandSpec, LaunchInput, MarkInput, Readiness
    from models.contract import DisruptionActivity

POLL = timedelta(seconds=5)
MIN_TIMEOUT = timedelta(minutes=10)
MAX_TIMEOUT = timedelta(hours=1)
PER_QUEUED = timedelta(milliseconds=80)


def command_timeout(queued: int) -> timedelta:
    """Karpenter's: 80 ms per queued command, clamped to 10 min .. 1 h."""
    return min(MAX_TIMEOUT, max(MIN_TIMEOUT, PER_QUEUED * queued))


class CommandFailed(Exception):
    pass


async def _await_initialized(names: list[str], timeout: timedelta) -> None:
    deadline = workflow.now() + timeout
    while True:
        state = await calls.call(
            DisruptionActivity.REPLACEMENTS_INITIALIZED,
            names,
            Readiness,
            summary=f"initialized? {', '.join(names)}",
        )
        if state.failed:
            name, why = next(iter(state.failed.items()))
            raise CommandFailed(f"replacement {name}: {why}")
        if not state.pending:
            return
        if workflow.now() >= deadline:
            raise CommandFailed(f"replacements not initialized within {timeout}")
        await workflow.sleep(POLL, summary=f"waiting for {len(state.pending)} replacement(s)")


async def run(command: CommandSpec, queued: int, search_attributes: bool) -> CommandResult:
    mark = MarkInput(
        command.reason,
        command.nodes,
        command.claims,
        command.summary,
        replacements=len(command.replacements),
    )
    launched: list[str] = []
    try:
        await calls.call(DisruptionActivity.MARK, mark, int, summary=f"mark: {command.summary}")
        if command.replacements:
            launched = [r.name for r in command.replacements]
            await calls.call(
                DisruptionActivity.LAUNCH_REPLACEMENTS,
                LaunchInput(command.replacements, search_attributes, reason=command.reason),
                list[str],
                summary=f"launch {', '.join(launched)}",
            )
            await _await_initialized(launched, command_timeout(queued))
        await calls.call(
            DisruptionActivity.DELETE_NODECLAIMS,
            command.claims,
            int,
            summary=f"delete {', '.join(command.claims)}",
        )
        return CommandResult(command.summary, done=True)
    except (CommandFailed, ActivityError) as exc:
        why = str(exc.cause if isinstance(exc, ActivityError) and exc.cause else exc)
        await calls.call_until_done(
            DisruptionActivity.UNMARK, mark, int, summary=f"undo: unmark {command.summary}"
        )
        if launched:
            await calls.call_until_done(
                DisruptionActivity.DELETE_NODECLAIMS,
                launched,
                int,
                summary=f"undo: delete {', '.join(launched)}",
            )
        return CommandResult(command.summary, done=False, why=why)
