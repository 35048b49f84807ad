"""Stand-ins for the garbage-collection activities, registered under the real names, for the
time-skipping choreography tests: the test decides what each step removes (``removals``) and
which steps fail (``failing``); every call is recorded with its server time."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from temporalio import activity

from activities.garbage.types import Collected, CollectInput
from models.contract import GarbageCollectionActivity as names

STEPS = (
    names.ORPHAN_INSTANCES,
    names.CLAIMS_WITHOUT_INSTANCE,
    names.CLAIMS_WITHOUT_NODEPOOL,
    names.LAUNCH_TEMPLATES,
)


@dataclass
class FakeGarbage:
    # step -> what it removes, one list per call (then nothing)
    removals: dict[str, list[list[str]]] = field(default_factory=dict)
    # step -> how many more calls fail
    failing: dict[str, int] = field(default_factory=dict)
    calls: list[tuple[str, CollectInput, datetime]] = field(default_factory=list)

    def names(self) -> list[str]:
        return [c[0] for c in self.calls]

    def times(self, name: str) -> list[datetime]:
        return [c[2] for c in self.calls if c[0] == name]

    def _step(self, name: str) -> Callable[..., Any]:
        fake = self

        @activity.defn(name=name)
        async def step(inp: CollectInput) -> Collected:
            fake.calls.append((name, inp, activity.info().current_attempt_scheduled_time))
            if fake.failing.get(name, 0) > 0:
                fake.failing[name] -= 1
                raise RuntimeError(f"{name}: EC2 unreachable")
            queued = fake.removals.get(name) or []
            return Collected(removed=queued.pop(0) if queued else [])

        return step

    def activities(self) -> list[Callable[..., Any]]:
        return [self._step(name) for name in STEPS]
