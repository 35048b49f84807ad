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

    def pause_holds_expiry(self) -> bool:
        """Whether an expired claim asks ``joinery pause`` first (at expiry only: the shape-0
        marker is recorded where the question is first asked, as it always was)."""
        return self.number >= 1 or workflow.patched(PAUSE_HOLDS_EXPIRY)


def resolve(number: int) -> Shape:
    """At the start of ``run`` (the first activation, so a replay sees the same history)."""
    if number >= 1 and not _older_worker_began():
        return Shape(number, local_calls=True, local_drain=True)
    return Shape(0, local_calls=workflow.patched(LOCAL_CALLS), local_drain=False)


def _older_worker_began() -> bool:
    return workflow.unsafe.is_replaying_history_events() and workflow.patched(LOCAL_CALLS)
