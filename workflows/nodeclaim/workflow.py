"""``NodeClaimWorkflow``: id ``nodeclaim-<name>``, one per NodeClaim, deterministic.

Signals: ``deleted`` (the NodeClaim or its Node got a deletionTimestamp), ``interrupted``
(spot interruption, scheduled change, instance stopping), ``node_changed`` (a hint that
wakes registration / initialization early). Update: ``disrupt`` (operator). Query:
``status``.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta

from temporalio import workflow
from temporalio.exceptions import ApplicationError

from workflows import calls, history, search
from workflows.nodeclaim import expiration, initialization, launch, registration, shape, termination
from workflows.nodeclaim.state import (
    DELETED,
    DETACHING,
    DRAINING,
    FINALIZING,
    GONE,
    INITIALIZING,
    INTERRUPTED,
    LAUNCHING,
    PENDING,
    READY,
    REGISTERING,
    TERMINATED,
    TERMINATING,
    TERMINATION_PHASES,
    DisruptRequest,
    Ending,
    LifecycleState,
    NodeClaimInput,
    NodeClaimStatus,
)

with workflow.unsafe.imports_passed_through():
    from activities.lifecycle.types import ClaimSpec, LaunchOutcome
    from models import contract, labels
    from models.contract import NodeClaimActivity as names
    from models.provider_id import instance_id

# Kubernetes condition-reason syntax: the reason lands in the DisruptionReason condition.
REASON = re.compile(r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$")


def _parse(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _adopted(spec: ClaimSpec) -> LaunchOutcome | None:
    """A claim launched before this workflow existed (or before continue-as-new lost it)."""
    if not spec.provider_id:
        return None
    return LaunchOutcome(
        provider_id=spec.provider_id,
        instance_id=instance_id(spec.provider_id),
        instance_type=spec.labels.get(labels.INSTANCE_TYPE, ""),
        zone=spec.labels.get(labels.ZONE, ""),
        capacity_type=spec.labels.get(labels.CAPACITY_TYPE, ""),
    )


@workflow.defn(name=contract.NODECLAIM_WORKFLOW)
class NodeClaimWorkflow:
    @workflow.init
    def __init__(self, inp: NodeClaimInput) -> None:
        self.name = inp.name
        self.search_attributes = inp.search_attributes
        self.history_limit = inp.history_limit
        self.state = inp.state or LifecycleState()
        self.shape = shape.Shape(0, local_calls=False, local_drain=False)  # until run starts
        self.node_hint = ""
        self._hint = False

    # -- the loop ---------------------------------------------------------------------------
    @workflow.run
    async def run(self, inp: NodeClaimInput) -> str:
        self.shape = shape.resolve(inp.shape)
        if self.state.spec is not None:  # a continued run: its spec says who read it
            self.shape = self.shape.confirmed(self.state.spec.read_by_shape)
        if not self.state.started_at:
            self.state.started_at = workflow.now().isoformat()
        steps: dict[str, Callable[[], Awaitable[str]]] = {
            PENDING: self._prepare,
            LAUNCHING: lambda: launch.run(self),
            REGISTERING: lambda: registration.run(self),
            INITIALIZING: lambda: initialization.run(self),
            READY: lambda: expiration.run(self),
            DRAINING: lambda: termination.drain(self),
            DETACHING: lambda: termination.detach(self),
            TERMINATING: lambda: termination.terminate(self),
            FINALIZING: lambda: termination.finalize(self),
        }
        self._announce()
        while self.state.phase not in (TERMINATED, GONE):
            self.enter(await steps[self.state.phase]())
        await workflow.wait_condition(workflow.all_handlers_finished)
        return self.state.phase

    async def _prepare(self) -> str:
        spec = await calls.call_until_done(
            names.PREPARE,
            self.name,
            ClaimSpec,
            summary=f"read {self.name}, add finalizer",
            local=self.shape.local_calls,
        )
        if spec is None:
            self.describe(f"NodeClaim {self.name} does not exist")
            return GONE
        self.state.spec = spec
        self.shape = self.shape.confirmed(spec.read_by_shape)
        self.upsert(nodepool=spec.nodepool, nodeclaim=spec.name)
        if spec.deleting:
            self.end(DELETED, "NodeClaim was already being deleted")
        adopted = _adopted(spec)
        if adopted is not None:
            self.state.launched = adopted
            self.upsert(
                instance_type=adopted.instance_type,
                capacity_type=adopted.capacity_type,
                zone=adopted.zone,
            )
            return DRAINING if self.state.ending else REGISTERING
        return DRAINING if self.state.ending else LAUNCHING

    # -- Lifecycle (what the phase modules use) ----------------------------------------------
    def enter(self, phase: str) -> None:
        if phase == self.state.phase:
            return
        self.state.phase = phase
        self.state.timings[phase] = workflow.now().isoformat()
        self.upsert(phase=phase)
        self._announce()

    def end(self, reason: str, message: str = "") -> None:
        if self.state.ending is None:
            self.state.ending = Ending(reason, message, workflow.now().isoformat())
            self._hint = True

    def anchor(self) -> datetime:
        spec = self.state.spec
        started = _parse(self.state.started_at)
        if spec is not None and spec.created_at:
            return min(_parse(spec.created_at), started)
        return started

    async def wait(self, timeout: timedelta | None) -> None:
        self._hint = False
        with contextlib.suppress(TimeoutError):
            await workflow.wait_condition(
                lambda: self._hint or self.state.ending is not None, timeout=timeout
            )

    async def checkpoint(self) -> None:
        await history.continue_if_long(
            self.history_limit,
            # A continued run is a new history: it takes the current shape.
            NodeClaimInput(
                self.name,
                self.search_attributes,
                self.state,
                self.history_limit,
                contract.NODECLAIM_SHAPE,
            ),
        )

    def describe(self, details: str) -> None:
        workflow.set_current_details(f"**{self.state.phase}** · {details}")

    def upsert(self, **values: str) -> None:
        keys = {
            "nodepool": search.NODEPOOL,
            "nodeclaim": search.NODECLAIM,
            "instance_type": search.INSTANCE_TYPE,
            "capacity_type": search.CAPACITY_TYPE,
            "zone": search.ZONE,
            "phase": search.PHASE,
        }
        search.upsert(
            self.search_attributes, [keys[k].value_set(v) for k, v in values.items() if v]
        )

    def _announce(self) -> None:
        workflow.set_current_details(f"**{self.state.phase}**")

    # -- signals, updates, queries -----------------------------------------------------------
    @workflow.signal(name=contract.SIGNAL_DELETED)
    def deleted(self, source: str = "NodeClaim") -> None:
        self.end(DELETED, f"{source} deleted")

    @workflow.signal(name=contract.SIGNAL_INTERRUPTED)
    def interrupted(self, kind: str) -> None:
        self.end(INTERRUPTED, kind)

    @workflow.signal(name=contract.SIGNAL_NODE_CHANGED)
    def node_changed(self, node: str = "") -> None:
        self._hint = True
        if node:
            self.node_hint = node

    @workflow.update(name=contract.UPDATE_DISRUPT)
    def disrupt(self, request: DisruptRequest) -> str:
        self.end(request.reason, request.message or f"operator asked: {request.reason}")
        return f"NodeClaim {self.name} will be drained and terminated ({request.reason})"

    @disrupt.validator
    def _validate_disrupt(self, request: DisruptRequest) -> None:
        if not REASON.match(request.reason or "") or len(request.reason) > 63:
            raise ApplicationError(
                f"reason {request.reason!r} must be a word like Drifted or Maintenance "
                "(letters, digits, _ , :; at most 63 characters)",
                type=contract.ERR_INVALID_ARGUMENT,
            )
        if self.state.ending is not None or self.state.phase in TERMINATION_PHASES:
            reason = self.state.ending.reason if self.state.ending else self.state.phase
            raise ApplicationError(
                f"NodeClaim {self.name} is already terminating ({reason})",
                type=contract.ERR_ALREADY_TERMINATING,
            )
        if self.state.phase == GONE:
            raise ApplicationError(
                f"NodeClaim {self.name} does not exist", type=contract.ERR_NOT_FOUND
            )

    @workflow.query(name=contract.QUERY_STATUS)
    def status(self) -> NodeClaimStatus:
        st = self.state
        spec, launched, ending = st.spec, st.launched, st.ending
        blocked = [f"{b.pod} ({', '.join(b.pdbs)})" for b in (st.drain.blocked if st.drain else [])]
        return NodeClaimStatus(
            name=self.name,
            phase=st.phase,
            nodepool=spec.nodepool if spec else "",
            instance_type=launched.instance_type if launched else "",
            capacity_type=launched.capacity_type if launched else "",
            zone=launched.zone if launched else "",
            provider_id=launched.provider_id if launched else "",
            node_name=st.node_name or "",
            ending_reason=ending.reason if ending else "",
            ending_message=ending.message if ending else "",
            waiting_for=st.waiting_for,
            timings=dict(st.timings),
            blocked=blocked,
        )
