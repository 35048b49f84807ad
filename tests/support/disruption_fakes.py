"""Stand-ins for the disruption activities, registered under the real names, for the
time-skipping choreography tests: the test decides what the engine says (``decisions``) and
how the replacements fare (``readiness``); every call is recorded with its server time."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.disruption.compute import decision
from activities.disruption.types import (
    CommandSpec,
    ComputeInput,
    Decision,
    LaunchInput,
    MarkInput,
    Readiness,
)
from activities.planning.types import PlannedNodeClaim
from models.catalog import load_catalog
from models.contract import DisruptionActivity as names
from scheduling.disruption.round import run_round
from scheduling.inputs import Document
from tests.support.catalogs import catalog
from tests.support.disruption import claim_for, managed, pool


def command(nodes: list[str], replacements: int = 1, reason: str = "Underutilized") -> CommandSpec:
    return CommandSpec(
        reason=reason,
        nodes=nodes,
        claims=[f"claim-{n}" for n in nodes],
        pools=["default"],
        replacements=[
            PlannedNodeClaim(
                f"default-r{i}{''.join(nodes)}", "default", {}, ["m5.large"], price=0.1
            )
            for i in range(replacements)
        ],
        savings_per_hour=0.2,
        summary=f"replace {len(nodes)} nodes by {replacements} m5.large, saves $0.20/h",
    )


@dataclass
class FakeDisruption:
    decisions: list[Decision] = field(default_factory=list)
    # replacement names → Readiness for the n-th poll (n counts from 0)
    readiness: Callable[[list[str], int], Readiness] = lambda names, n: Readiness(
        initialized=list(names)
    )
    paused: ComputeInput = field(default_factory=ComputeInput)
    compute_failures: int = 0  # the first computes fail for good (attempts used up)
    # When set, decides every round from the server's time instead of ``decisions`` (a test
    # running the real engine on its own documents).
    engine: Callable[[ComputeInput, datetime], Decision] | None = None
    calls: list[tuple[str, Any, datetime]] = field(default_factory=list)

    def _record(self, name: str, arg: Any) -> None:
        self.calls.append((name, arg, activity.info().current_attempt_scheduled_time))

    def names(self) -> list[str]:
        return [c[0] for c in self.calls]

    def args(self, name: str) -> list[Any]:
        return [c[1] for c in self.calls if c[0] == name]

    def times(self, name: str) -> list[datetime]:
        return [c[2] for c in self.calls if c[0] == name]

    def activities(self) -> list[Callable[..., Any]]:
        fake = self

        @activity.defn(name=names.PAUSE_STATE)
        async def pause_state(cluster: str) -> ComputeInput:
            return fake.paused

        @activity.defn(name=names.COMPUTE)
        async def compute(inp: ComputeInput) -> Decision:
            fake._record(names.COMPUTE, inp)
            if len(fake.args(names.COMPUTE)) <= fake.compute_failures:
                raise ApplicationError("the engine could not decide", non_retryable=True)
            if fake.engine is not None:
                return fake.engine(inp, activity.info().current_attempt_scheduled_time)
            return fake.decisions.pop(0) if fake.decisions else Decision()

        @activity.defn(name=names.MARK)
        async def mark(inp: MarkInput) -> int:
            fake._record(names.MARK, inp)
            return len(inp.nodes)

        @activity.defn(name=names.UNMARK)
        async def unmark(inp: MarkInput) -> int:
            fake._record(names.UNMARK, inp)
            return len(inp.nodes)

        @activity.defn(name=names.LAUNCH_REPLACEMENTS)
        async def launch(inp: LaunchInput) -> list[str]:
            fake._record(names.LAUNCH_REPLACEMENTS, [r.name for r in inp.replacements])
            return [r.name for r in inp.replacements]

        @activity.defn(name=names.REPLACEMENTS_INITIALIZED)
        async def initialized(claims: list[str]) -> Readiness:
            n = len(fake.args(names.REPLACEMENTS_INITIALIZED))
            fake._record(names.REPLACEMENTS_INITIALIZED, claims)
            return fake.readiness(claims, n)

        @activity.defn(name=names.DELETE_NODECLAIMS)
        async def delete(claims: list[str]) -> int:
            fake._record(names.DELETE_NODECLAIMS, claims)
            return len(claims)

        return [pause_state, compute, mark, unmark, launch, initialized, delete]


class EmptiedNode:
    """An ``engine`` for ``FakeDisruption``: one managed node, ``a``, whose last pod left
    when the first round ran, in a pool with ``consolidateAfter`` (30 s by default). Each
    round runs the real engine (``run_round``) on it at the server's time; once its claim is
    deleted (``deleted`` lists the delete calls' arguments) the node is gone."""

    def __init__(self, deleted: Callable[[], list[Any]], after: str = "30s") -> None:
        self.emptied: datetime | None = None
        self.deleted = deleted
        self.after = after
        self.types = load_catalog(catalog())

    def __call__(self, inp: ComputeInput, now: datetime) -> Decision:
        self.emptied = self.emptied or now
        docs: list[dict[str, Any]] = [pool(consolidate_after=self.after)]
        if not any("a-claim" in claims for claims in self.deleted()):
            node = managed("a")
            stamp = self.emptied.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            docs += [node, claim_for(node, last_pod_event=stamp)]
        documents = [Document(d, f"doc {i}") for i, d in enumerate(docs)]
        return decision(run_round(documents, self.types, now), inp, now)
