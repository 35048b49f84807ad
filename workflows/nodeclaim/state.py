"""The NodeClaim workflow's input, durable state and query answer (small dataclasses).

The whole state travels in the input of a continued-as-new run, so every phase can resume
from it. No ``from __future__ import annotations`` (as in activities/lifecycle/types.py):
the SDK's converter resolves these field types at every decode.
"""

from dataclasses import dataclass, field

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from activities.lifecycle.types import ClaimSpec, DrainStatus, LaunchOutcome, TerminationStart
    from models import contract

# Phases, in order. The value is what the Phase search attribute and `joinery status` show.
PENDING = "Pending"
LAUNCHING = "Launching"
REGISTERING = "Registering"
INITIALIZING = "Initializing"
READY = "Ready"
DRAINING = "Draining"
DETACHING = "AwaitingVolumeDetachment"
TERMINATING = "Terminating"
FINALIZING = "Finalizing"
TERMINATED = "Terminated"
GONE = "Gone"  # the NodeClaim did not exist when the workflow started

TERMINATION_PHASES = (DRAINING, DETACHING, TERMINATING, FINALIZING, TERMINATED)

# Why a claim ends; the first three are Karpenter's disruption / liveness reasons.
DELETED = "Deleted"
EXPIRED = "Expired"
INTERRUPTED = "Interrupted"
INSUFFICIENT_CAPACITY = contract.ERR_INSUFFICIENT_CAPACITY
LAUNCH_TIMEOUT = "LaunchTimeout"
LAUNCH_FAILED = "LaunchFailed"
REGISTRATION_TIMEOUT = "RegistrationTimeout"


@dataclass
class Ending:
    reason: str
    message: str = ""
    requested_at: str = ""


@dataclass
class LifecycleState:
    phase: str = PENDING
    started_at: str = ""
    spec: ClaimSpec | None = None
    launched: LaunchOutcome | None = None
    node_name: str | None = None
    ending: Ending | None = None
    termination: TerminationStart | None = None
    drain: DrainStatus | None = None
    # Phase → when it was entered (ISO-8601 UTC, workflow time).
    timings: dict[str, str] = field(default_factory=dict)
    waiting_for: str = ""


@dataclass
class NodeClaimInput:
    name: str
    # Upsert the custom search attributes (off where the server lacks them, e.g. the
    # time-skipping test server, which wedges on any custom search attribute).
    search_attributes: bool = False
    state: LifecycleState | None = None
    # Continue as new past this many history events (the server also suggests it).
    history_limit: int = 10_000
    # Which path each step takes (``contract.NODECLAIM_SHAPE``; 0 = a run started before
    # shapes existed, whose recorded markers decide). Fresh starts pass the current shape.
    shape: int = 0


@dataclass
class NodeClaimStatus:
    """What ``joinery status NODECLAIM`` shows."""

    name: str
    phase: str
    nodepool: str = ""
    instance_type: str = ""
    capacity_type: str = ""
    zone: str = ""
    provider_id: str = ""
    node_name: str = ""
    ending_reason: str = ""
    ending_message: str = ""
    waiting_for: str = ""
    timings: dict[str, str] = field(default_factory=dict)
    blocked: list[str] = field(default_factory=list)


@dataclass
class DisruptRequest:
    reason: str = "Disrupted"
    message: str = ""
