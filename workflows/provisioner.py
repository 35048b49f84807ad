"""``ProvisionerWorkflow``: one per cluster (id ``provisioner@<cluster>``), forever.

The worker's pod watcher signals ``pods_pending`` whenever pods become unschedulable. Signals
are batched like Karpenter's provisioner (a round starts once ``batch_idle_seconds``, 1 s by
default, pass without a new signal, or ``batch_max_seconds``, 10 s, after the first: Karpenter's
BATCH_IDLE_DURATION and BATCH_MAX_DURATION, which the worker passes in the input and, to a run
already going, in the ``batching`` signal), then one planning activity reads the cluster and
returns the NodeClaims to create; they are created and their workflows started.

It is also the cluster's durable control state: ``pause`` / ``resume`` updates keep paused
NodePools (or everything) out of provisioning across worker restarts and continue-as-new.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

from workflows import calls, history

with workflow.unsafe.imports_passed_through():
    from activities.planning.types import (
        CreatedNodeClaim,
        PlanInput,
        PlanOutcome,
        ProvisionOutcome,
        StartInput,
    )
    from models import contract
    from models.contract import ProvisioningActivity

BATCH_IDLE_SECONDS = 1.0
BATCH_MAX_SECONDS = 10.0
# How long a failed round waits before trying again (pods stay pending meanwhile).
RETRY_ROUND = timedelta(seconds=30)
# Creating a burst's claims and starting their workflows: hundreds of API calls in one try.
BURST_CALL = timedelta(minutes=2)
# The planning activity creates the claims and returns names (replaces PLAN, then CREATE).
PLAN_CREATES = "provision-plan-creates-nodeclaims"
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")


@dataclass
class ProvisionerInput:
    cluster: str
    search_attributes: bool = False
    paused_all: bool = False
    paused_pools: list[str] = field(default_factory=list)
    pending: bool = False
    rounds: int = 0
    created: int = 0
    history_limit: int = 5_000
    batch_idle_seconds: float = BATCH_IDLE_SECONDS
    batch_max_seconds: float = BATCH_MAX_SECONDS


@dataclass
class Batching:
    """The batch window a worker was configured with (``SIGNAL_BATCHING``)."""

    idle_seconds: float = BATCH_IDLE_SECONDS
    max_seconds: float = BATCH_MAX_SECONDS


@dataclass
class PauseRequest:
    nodepool: str | None = None


@dataclass
class ProvisionerStatus:
    cluster: str
    paused_all: bool
    paused_pools: list[str]
    pending: bool
    rounds: int
    created: int
    last_round: str = ""
    last_result: str = ""


@workflow.defn(name=contract.PROVISIONER_WORKFLOW)
class ProvisionerWorkflow(history.QueueMove):
    @workflow.init
    def __init__(self, inp: ProvisionerInput) -> None:
        self.inp = inp
        self._signals = 0
        self._last_round = ""
        self._last_result = ""

    @workflow.run
    async def run(self, inp: ProvisionerInput) -> None:
        workflow.set_current_details(self._details())
        while True:
            with contextlib.suppress(TimeoutError):
                await workflow.wait_condition(
                    lambda: self.inp.pending or bool(self.move_to), timeout=timedelta(hours=1)
                )
            if self.inp.pending:
                await self._batch()
                self.inp.pending = False
                if not self.inp.paused_all:
                    await self._round()
                else:
                    self._last_result = "skipped: provisioning is paused"
                workflow.set_current_details(self._details())
            await history.continue_if_long(self.inp.history_limit, self.inp, self.move_to)

    async def _batch(self) -> None:
        """Return once signals went quiet for the idle window, or the max window after the
        first (both from the input, so a replay waits exactly as the run did)."""
        first = workflow.now()
        idle = timedelta(seconds=self.inp.batch_idle_seconds)
        most = timedelta(seconds=self.inp.batch_max_seconds)
        while True:
            seen = self._signals
            left = first + most - workflow.now()
            if left <= timedelta(0):
                return
            try:
                await workflow.wait_condition(self._since(seen), timeout=min(idle, left))
            except TimeoutError:
                return

    async def _round(self) -> None:
        self.inp.rounds += 1
        self._last_round = workflow.now().isoformat()
        if workflow.patched(PLAN_CREATES):
            await self._provision()
        else:
            await self._plan_create_start()

    async def _provision(self) -> None:
        try:
            outcome = await calls.call(
                ProvisioningActivity.PROVISION,
                PlanInput(self.inp.cluster, sorted(self.inp.paused_pools)),
                ProvisionOutcome,
                summary="plan: read cluster, solve, create NodeClaims",
                timeout=timedelta(minutes=5),
                heartbeat=timedelta(seconds=10),
                attempts=5,
            )
            names = outcome.created
            if names:
                await calls.call(
                    ProvisioningActivity.START,
                    StartInput(search_attributes=self.inp.search_attributes, names=names),
                    int,
                    summary=f"start {len(names)} NodeClaim workflow(s)",
                    timeout=BURST_CALL,
                    attempts=10,
                )
        except ActivityError as exc:
            await self._failed(exc)
            return
        self.inp.created += len(names)
        unschedulable = f", {outcome.unschedulable} unschedulable" if outcome.unschedulable else ""
        if not names:
            self._last_result = (
                f"{outcome.pending_pods} pending pod(s), no new NodeClaims{unschedulable}"
            )
            return
        self._last_result = (
            f"{outcome.pending_pods} pending pod(s) → {len(names)} NodeClaim(s): "
            + ", ".join(names[:5])
            + (" ..." if len(names) > 5 else "")
            + unschedulable
        )

    async def _failed(self, exc: ActivityError) -> None:
        self._last_result = f"round failed: {exc.cause or exc}"
        workflow.logger.warning("provisioning round failed: %s", exc)
        self._trigger()  # the pods are still pending: plan again
        await workflow.sleep(RETRY_ROUND)

    async def _plan_create_start(self) -> None:
        """A round as recorded before ``PLAN_CREATES``: kept for those histories' replay."""
        try:
            outcome = await calls.call(
                ProvisioningActivity.PLAN,
                PlanInput(self.inp.cluster, sorted(self.inp.paused_pools)),
                PlanOutcome,
                summary="plan: read cluster, solve",
                timeout=timedelta(minutes=5),
                heartbeat=timedelta(seconds=10),
                attempts=5,
            )
            if not outcome.claims:
                unschedulable = outcome.unschedulable_count or len(outcome.unschedulable)
                self._last_result = f"{outcome.pending_pods} pending pod(s), no new NodeClaims" + (
                    f", {unschedulable} unschedulable" if unschedulable else ""
                )
                return
            created = await calls.call(
                ProvisioningActivity.CREATE,
                outcome.claims,
                list[CreatedNodeClaim],
                summary=f"create {len(outcome.claims)} NodeClaim(s)",
                timeout=BURST_CALL,
                attempts=10,
            )
            await calls.call(
                ProvisioningActivity.START,
                StartInput(created, self.inp.search_attributes),
                int,
                summary=f"start {len(created)} NodeClaim workflow(s)",
                timeout=BURST_CALL,
                attempts=10,
            )
        except ActivityError as exc:
            await self._failed(exc)
            return
        self.inp.created += len(created)
        self._last_result = (
            f"{outcome.pending_pods} pending pod(s) → {len(created)} NodeClaim(s): "
            + ", ".join(c.name for c in created[:5])
            + (" ..." if len(created) > 5 else "")
        )

    def _since(self, seen: int) -> Callable[[], bool]:
        return lambda: self._signals != seen

    def _trigger(self) -> None:
        self._signals += 1
        self.inp.pending = True

    def _details(self) -> str:
        paused = (
            "**paused** (all pools)"
            if self.inp.paused_all
            else (
                f"paused pools: {', '.join(self.inp.paused_pools)}"
                if self.inp.paused_pools
                else "active"
            )
        )
        return (
            f"Provisioner for `{self.inp.cluster}` · {paused} · {self.inp.rounds} round(s), "
            f"{self.inp.created} NodeClaim(s) created"
            + (f"\n\nlast: {self._last_result}" if self._last_result else "")
        )

    # -- signals, updates, queries -----------------------------------------------------------
    @workflow.signal(name=contract.SIGNAL_PODS_PENDING)
    def pods_pending(self, count: int = 1) -> None:
        self._trigger()

    @workflow.signal(name=contract.SIGNAL_BATCHING)
    def batching(self, batching: Batching) -> None:
        """A worker's batch window, sent with every start so a setting changed between
        restarts reaches the run already going; applies from the next round."""
        if 0 < batching.idle_seconds <= batching.max_seconds:
            self.inp.batch_idle_seconds = batching.idle_seconds
            self.inp.batch_max_seconds = batching.max_seconds

    @workflow.update(name=contract.UPDATE_PAUSE)
    def pause(self, request: PauseRequest) -> str:
        if request.nodepool:
            self.inp.paused_pools = sorted({*self.inp.paused_pools, request.nodepool})
            message = f"NodePool {request.nodepool} paused: it gets no new NodeClaims"
        else:
            self.inp.paused_all = True
            message = "provisioning paused for every NodePool"
        workflow.set_current_details(self._details())
        return message

    @pause.validator
    def _validate_pause(self, request: PauseRequest) -> None:
        if request.nodepool is not None and not DNS_LABEL.match(request.nodepool):
            raise ApplicationError(
                f"{request.nodepool!r} is not a valid NodePool name",
                type=contract.ERR_INVALID_ARGUMENT,
            )
        if request.nodepool is None and self.inp.paused_all:
            raise ApplicationError(
                "provisioning is already paused", type=contract.ERR_ALREADY_PAUSED
            )
        if request.nodepool and request.nodepool in self.inp.paused_pools:
            raise ApplicationError(
                f"NodePool {request.nodepool} is already paused", type=contract.ERR_ALREADY_PAUSED
            )

    @workflow.update(name=contract.UPDATE_RESUME)
    def resume(self, request: PauseRequest) -> str:
        if request.nodepool:
            self.inp.paused_pools = [p for p in self.inp.paused_pools if p != request.nodepool]
            message = f"NodePool {request.nodepool} resumed"
        else:
            self.inp.paused_all = False
            message = "provisioning resumed"
            if self.inp.paused_pools:
                message += f" (still paused: {', '.join(self.inp.paused_pools)})"
        self._trigger()  # plan for whatever waited while paused
        workflow.set_current_details(self._details())
        return message

    @resume.validator
    def _validate_resume(self, request: PauseRequest) -> None:
        if request.nodepool is None and not self.inp.paused_all:
            raise ApplicationError(
                "provisioning is not paused"
                + (
                    f" (paused pools: {', '.join(self.inp.paused_pools)}; use --nodepool)"
                    if self.inp.paused_pools
                    else ""
                ),
                type=contract.ERR_NOT_PAUSED,
            )
        if request.nodepool and request.nodepool not in self.inp.paused_pools:
            raise ApplicationError(
                f"NodePool {request.nodepool} is not paused", type=contract.ERR_NOT_PAUSED
            )

    @workflow.query(name=contract.QUERY_STATUS)
    def status(self) -> ProvisionerStatus:
        return ProvisionerStatus(
            cluster=self.inp.cluster,
            paused_all=self.inp.paused_all,
            paused_pools=list(self.inp.paused_pools),
            pending=self.inp.pending,
            rounds=self.inp.rounds,
            created=self.inp.created,
            last_round=self._last_round,
            last_result=self._last_result,
        )
