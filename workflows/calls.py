"""How every workflow calls its activities: timeouts and retry policies in one place.

The NodeClaim lifecycle, the provisioner, the disruption round and the garbage collector all
call through here. Activities are called by name (the ``*Activity`` classes of
``models.contract``) so test doubles registered under the same names stand in for them. A
failure that retrying the same call cannot fix (RBAC, a deleted object) does not fail the
workflow: the phase loop records it, waits and tries again, because a NodeClaim must never
be abandoned with an instance behind it.

``local=True`` runs the activity as a local activity: in the worker that runs the workflow
task, recorded as one marker event instead of three activity events plus a workflow task of
its own. It is for the short Kubernetes and EC2 calls (reads, a taint, a finalizer, a drain
pass: one list of pods and an eviction each), and from lifecycle shape 3 for the launch, a
CreateFleet of a few seconds: a local activity holds one of the worker's workflow task slots
while it runs, and the worker's slots let launches do so beyond the few that run Python
(worker/running/slots.py). Consecutive local calls share one workflow task, which is most of a
lifecycle's cost in Temporal (docs/performance.md, benchmarks/scale.py).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, TypeVar

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError
from temporalio.exceptions import TimeoutError as ActivityTimeout

# What a failed call raises in the workflow: a regular activity's failure comes wrapped in an
# ActivityError, a local activity's as its own ApplicationError or (Temporal's) TimeoutError,
# as the SDK resolves it, so a step that catches only ActivityError would let a local call's
# non-retryable failure fail the whole run.
FAILED = (ActivityError, ApplicationError, ActivityTimeout)

T = TypeVar("T")

RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=30),
)
STUCK_PAUSE = timedelta(seconds=60)


def error_type(exc: BaseException) -> str:
    """The ApplicationError type behind an ActivityError ("" when none, e.g. a timeout)."""
    cause = exc.__cause__ if isinstance(exc, ActivityError) else exc
    return cause.type or "" if isinstance(cause, ApplicationError) else ""


async def call(
    name: str,
    arg: Any,
    result_type: type[T] | None,
    *,
    summary: str,
    timeout: timedelta = timedelta(seconds=20),
    heartbeat: timedelta | None = None,
    schedule_to_close: timedelta | None = None,
    non_retryable: list[str] | None = None,
    attempts: int = 0,
    local: bool = False,
    activity_id: str | None = None,
) -> T:
    retry = RETRY
    if non_retryable or attempts:
        retry = RetryPolicy(
            initial_interval=RETRY.initial_interval,
            backoff_coefficient=RETRY.backoff_coefficient,
            maximum_interval=RETRY.maximum_interval,
            maximum_attempts=attempts,
            non_retryable_error_types=non_retryable,
        )
    options: dict[str, Any] = {
        "result_type": result_type,
        "start_to_close_timeout": timeout,
        "schedule_to_close_timeout": schedule_to_close,
        "retry_policy": retry,
        "summary": summary[:200],
    }
    if activity_id is not None:
        options["activity_id"] = activity_id
    if local:
        if heartbeat is not None:
            raise ValueError(f"{name}: a local activity cannot heartbeat")
        done: T = await workflow.execute_local_activity(name, arg, **options)
        return done
    result: T = await workflow.execute_activity(name, arg, heartbeat_timeout=heartbeat, **options)
    return result


async def call_until_done(
    name: str,
    arg: Any,
    result_type: type[T] | None,
    *,
    summary: str,
    timeout: timedelta = timedelta(seconds=20),
    heartbeat: timedelta | None = None,
    local: bool = False,
) -> T:
    """Like ``call`` but a non-retryable failure pauses and tries again, forever."""
    while True:
        try:
            return await call(
                name,
                arg,
                result_type,
                summary=summary,
                timeout=timeout,
                heartbeat=heartbeat,
                local=local,
            )
        except FAILED as exc:
            workflow.logger.warning("%s failed (%s); trying again in %s", name, exc, STUCK_PAUSE)
            await workflow.sleep(STUCK_PAUSE)
