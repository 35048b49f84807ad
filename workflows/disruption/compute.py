"""Computing a round: decide, wait the validation delay (a durable timer), decide again and
keep only the commands whose reason and candidates are in both decisions (Karpenter's
validation: the candidates are still candidates, still within budget, and a replacement
still fits; the second decision's replacements are the ones launched).

An emptiness command is validated as Karpenter validates it, node by node: it holds when
each of its nodes is still an empty node the second decision would delete, though that
decision, with more budget free by then, deletes more nodes at once (a batch proposed while
the last batch's nodes were still leaving). Histories recorded before this
(``EMPTY_SUBSET_PATCH``) replay with the exact match they recorded."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import timedelta

from temporalio import workflow

from workflows import calls

with workflow.unsafe.imports_passed_through():
    from activities.disruption.types import CommandSpec, ComputeInput, Decision, clip
    from models.contract import DisruptionActivity


async def decide(
    cluster: str, summary: str, validating: list[CommandSpec] | None = None
) -> Decision:
    pause = await calls.call(
        DisruptionActivity.PAUSE_STATE, cluster, ComputeInput, summary="is disruption paused?"
    )
    if validating:
        keys = [[c.reason, *sorted(c.nodes)] for c in validating]
        pause = dataclasses.replace(pause, validating=keys)
    return await calls.call(
        DisruptionActivity.COMPUTE,
        pause,
        Decision,
        summary=summary,
        timeout=timedelta(minutes=5),
        heartbeat=timedelta(seconds=10),
        attempts=5,
    )


EMPTY = "Empty"
# ``workflow.patched`` id of the node-by-node validation of emptiness commands.
EMPTY_SUBSET_PATCH = "disruption-empty-command-validated-per-node"


def still_valid(
    first: Decision, second: Decision, empty_subsets: bool = False
) -> list[CommandSpec]:
    """The first decision's commands that still hold in the second, as the second has them;
    with ``empty_subsets``, also each emptiness command all of whose nodes the second
    decision's emptiness commands delete (as the first has it: the same nodes and claims)."""
    again = {c.key(): c for c in second.commands}
    empty = {n for c in second.commands if _deletes_only(c) for n in c.nodes}
    out = []
    for c in first.commands:
        if c.key() in again:
            out.append(again[c.key()])
        elif empty_subsets and _deletes_only(c) and set(c.nodes) <= empty:
            out.append(c)
    return out


def _deletes_only(command: CommandSpec) -> bool:
    return command.reason == EMPTY and not command.replacements


async def validated(
    cluster: str,
    round_no: int,
    validating: Callable[[list[CommandSpec]], None],
    delay: timedelta,
) -> tuple[Decision, Decision, list[CommandSpec]]:
    """The first decision, the latest (the second, when there was one) and the commands
    that survived validation. ``validating`` is told the proposed commands before the delay.
    Every step's summary names the round, so each round can be told apart in the UI."""
    first = await decide(cluster, f"round {round_no}: compute: read cluster, decide")
    if not first.commands:
        return first, first, []
    validating(first.commands)
    proposed = "; ".join(c.summary for c in first.commands)
    await workflow.sleep(
        delay,
        summary=clip(f"round {round_no}: validation delay: {proposed}"),
    )
    second = await decide(
        cluster, f"round {round_no}: validate: read cluster, decide again", first.commands
    )
    kept = still_valid(first, second)
    wider = still_valid(first, second, empty_subsets=True)
    if len(wider) != len(kept) and workflow.patched(EMPTY_SUBSET_PATCH):
        kept = wider
    return first, second, kept
