"""Computing a round: decide, wait the validation delay (a durable timer), decide again and
keep only the commands whose reason and candidates are in both decisions (Karpenter's
validation: the candidates are still candidates, still within budget, and a replacement
still fits; the second decision's replacements are the ones launched)."""

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


def still_valid(first: Decision, second: Decision) -> list[CommandSpec]:
    again = {c.key(): c for c in second.commands}
    return [again[c.key()] for c in first.commands if c.key() in again]


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
    return first, second, still_valid(first, second)
