"""Which path a NodeClaim run takes: its input's ``shape``, or, for a run started before
shapes existed, the ``workflow.patched`` markers its history holds.

Why not ``workflow.patched`` for every change: a patch is recorded in every new run, as a
marker event and an upsert of the ``TemporalChangeVersion`` search attribute (a visibility
write on the server), and ``deprecate_patch`` records the same two events (the marker only
flagged "deprecated"), so neither is free while runs recorded without the patch may still
replay, which for a NodeClaim that lives for months is a long time. The two patches were 4 of
a lifecycle's 29 events. A shape is chosen once, by whoever starts the run, and travels in
the input (and in every continued run's input), so it costs no event at all.

Three kinds of run meet here:

- shape 0 (an input without the field): started by code older than shapes. The patches
  decide each step exactly as before (``LOCAL_CALLS``, ``PAUSE_HOLDS_EXPIRY``).
- shape >= 1 whose first workflow task an older worker ran (a rolling upgrade: a new
  replica started the run, an old one took its first task). That worker knows no shape: it
  recorded the ``LOCAL_CALLS`` marker and went on as shape 0 would, so the run stays shape 0.
  Only a replay can meet such a history, and asking ``patched`` while replaying records
  nothing: it only answers whether the history holds the marker.
- shape >= 1 begun by this code: the worker running its first task records nothing, and a
  later replay finds no marker, so both take the same fixed paths.

Old code never continues a run this code began: replaying one, it asks ``patched`` for
``LOCAL_CALLS``, finds no marker and expects a regular activity where the history has a
local one, so its task fails (non-determinism) and goes back to the server until a new
replica takes it.

Shape 2 (one call for registration and initialization, one termination pass) meets
shape-1 code, which runs every shape >= 1 as shape 1 and records no marker either way. Two
things keep the two apart, at no event's cost:

- which code ran a run's first task shows in its first local activity's result, because a
  local activity runs in the worker that runs the task: today's prepare stamps the claim's
  spec with ``read_by_shape``, a shape-1 worker's does not. A run started with shape 2 whose
  spec says otherwise goes on as shape 1 (``confirmed``), so today's code replays what the
  older worker recorded, and a continued run carries the spec, so it keeps that shape too;
- shape 2 names its launch activities (``launch-1``, ...; the SDK numbers them otherwise),
  so a shape-1 worker that replays a run today's code began fails at the launch (its
  activity id differs) and the task goes back until a new replica takes it; a run that
  launched nothing begins with a shape-2 activity the older code does not call. One case is
  left: the first task of a run continued by today's code taken by a shape-1 worker, which
  then runs it as shape 1; today's code replaying that run later fails at its first shape-2
  step (the task waits for an operator's reset). A run continues as new after thousands of
  events, so only the few in that phase during a rolling upgrade can meet it.
"""

from __future__ import annotations

from dataclasses import dataclass

from temporalio import workflow

# Runs recorded before the short calls became local activities replay with regular ones.
LOCAL_CALLS = "local-short-calls"
# Histories recorded before expiry consulted the pause replay without the check.
PAUSE_HOLDS_EXPIRY = "pause-holds-expiry"


@dataclass
class Shape:
    """The paths of one run, resolved at its start."""

    # 0 when the patches decide (see the module's docstring).
    number: int
    # The short Kubernetes and EC2 calls run as local activities.
    local_calls: bool
    # A drain pass runs as a local activity too (no heartbeats: a pass is one list of pods
    # and an eviction each; a pass run again skips the pods already leaving).
    local_drain: bool
    # Shape 2: registration checks initialization in the same call, and termination begins
    # with one pass through its steps (activities/lifecycle/termination_pass.py).
    combined_calls: bool = False
    # Shape 3: the launch is a local activity too (no heartbeat; the worker's slots let
    # launches wait without holding the workflow-task budget: worker/running/slots.py).
    local_launch: bool = False

    def confirmed(self, read_by_shape: int) -> Shape:
        """Once the claim's spec is read: a run asking for shape 2 or later whose first task
        an older worker ran (its spec stamped by older code, or not at all: a shape-1
        worker) goes on as the shape that worker took."""
        if self.number >= 2 and read_by_shape < self.number:
            return _numbered(max(read_by_shape, 1))
        return self

    def pause_holds_expiry(self) -> bool:
        """Whether an expired claim asks ``joinery pause`` first (at expiry only: the shape-0
        marker is recorded where the question is first asked, as it always was)."""
        return self.number >= 1 or workflow.patched(PAUSE_HOLDS_EXPIRY)


def resolve(number: int) -> Shape:
    """At the start of ``run`` (the first activation, so a replay sees the same history)."""
    if number >= 1 and not _older_worker_began():
        return _numbered(number)
    return Shape(0, local_calls=workflow.patched(LOCAL_CALLS), local_drain=False)


def _numbered(number: int) -> Shape:
    """The fixed paths of shape ``number`` (>= 1)."""
    return Shape(
        number,
        local_calls=True,
        local_drain=True,
        combined_calls=number >= 2,
        local_launch=number >= 3,
    )


def _older_worker_began() -> bool:
    return workflow.unsafe.is_replaying_history_events() and workflow.patched(LOCAL_CALLS)
