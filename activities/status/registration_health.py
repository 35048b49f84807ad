"""A NodePool's ``NodeRegistrationHealthy`` condition, as Karpenter keeps it.

Karpenter remembers each pool's last four launch outcomes: a NodeClaim that registered is a
success, one deleted for its launch or registration timeout a failure. When half of them
failed, the condition turns False (with the failed claim's Launched reason, or
``RegistrationFailed`` when it launched but never registered); a registration that leaves
fewer failures turns it True. A change of the pool's spec (its generation) or of its
NodeClass (``status.nodeClassObservedGeneration``) sets it back to Unknown and forgets the
outcomes: the status reporter does that (``reset``).

The outcomes live in this process, as in Karpenter's controller; after a restart they are
seeded from the condition as written (True: one success; False: two failures). One
``TRACKER`` is shared by the lifecycle activities (which record outcomes, with no API call)
and the status reporter of a worker (which writes the condition, ``wanted``).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Mapping
from typing import Any

from activities.kubernetes import conditions as cond
from models import conditions

NODE_REGISTRATION_HEALTHY = "NodeRegistrationHealthy"
BUFFER_SIZE = 4
THRESHOLD_FALSE = 0.5
LAUNCH_TIMEOUT, REGISTRATION_TIMEOUT = "LaunchTimeout", "RegistrationTimeout"
FAILURES = frozenset({LAUNCH_TIMEOUT, REGISTRATION_TIMEOUT})

Obj = dict[str, Any]


def condition_of(pool: Mapping[str, Any]) -> Mapping[str, Any] | None:
    return cond.find((pool.get("status") or {}).get("conditions") or [], NODE_REGISTRATION_HEALTHY)


class RegistrationHealth:
    """Each pool's last ``BUFFER_SIZE`` outcomes, by pool name, with the UID of the pool
    that owned the claim (a pool deleted and made again does not inherit them)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._outcomes: dict[str, deque[tuple[str, bool]]] = {}
        self._seeded: set[str] = set()
        self._failure: dict[str, cond.Condition] = {}

    def forget(self, pool: str) -> None:
        with self._lock:
            self._outcomes.pop(pool, None)
            self._failure.pop(pool, None)
            self._seeded.add(pool)  # a reset: nothing to seed from the Unknown it writes

    def record(self, claim: Mapping[str, Any], success: bool) -> None:
        """One launch outcome of a claim its NodePool owns (Karpenter ignores the others)."""
        meta = claim.get("metadata") or {}
        owner = next(
            (r for r in meta.get("ownerReferences") or [] if r.get("kind") == "NodePool"), None
        )
        if owner is None or not owner.get("name") or not owner.get("uid"):
            return
        pool = str(owner["name"])
        with self._lock:
            outcomes = self._outcomes.setdefault(pool, deque(maxlen=BUFFER_SIZE))
            outcomes.append((str(owner["uid"]), success))
            if not success:
                self._failure[pool] = _failure(claim)

    def wanted(self, pool: Mapping[str, Any]) -> cond.Condition | None:
        """The condition the pool's outcomes call for, or None to leave it as it is: False
        when the last outcome failed and half of the last four did, True when the last one
        succeeded and fewer did. A pool not seen since this process started is first seeded
        from its condition as written (True: one success; False: two failures)."""
        name = str(pool["metadata"]["name"])
        uid = str(pool["metadata"].get("uid") or "")
        current = condition_of(pool)
        with self._lock:
            if name not in self._seeded:
                self._seeded.add(name)
                seed: list[tuple[str, bool]] = []
                if current is not None and current.get("status") == "True":
                    seed = [(uid, True)]
                elif current is not None and current.get("status") == "False":
                    seed = [(uid, False)] * int(BUFFER_SIZE * THRESHOLD_FALSE)
                self._outcomes[name] = deque(
                    [*seed, *self._outcomes.get(name, ())], maxlen=BUFFER_SIZE
                )
            outcomes = [ok for owner, ok in self._outcomes.get(name, ()) if owner == uid]
            failure = self._failure.get(name)
        if not outcomes:
            return None
        unhealthy = sum(1 for ok in outcomes if not ok) / BUFFER_SIZE >= THRESHOLD_FALSE
        status = None if current is None else current.get("status")
        if outcomes[-1] and not unhealthy and status != "True":
            return cond.Condition(NODE_REGISTRATION_HEALTHY, "True", NODE_REGISTRATION_HEALTHY)
        if not outcomes[-1] and unhealthy and status != "False" and failure is not None:
            return failure
        return None


TRACKER = RegistrationHealth()


def _failure(claim: Mapping[str, Any]) -> cond.Condition:
    """False, with why: the claim's Launched reason, or RegistrationFailed once launched."""
    launched = cond.find((claim.get("status") or {}).get("conditions") or [], conditions.LAUNCHED)
    if launched is not None and launched.get("status") == "True":
        return cond.Condition(
            NODE_REGISTRATION_HEALTHY, "False", "RegistrationFailed", "Failed to register node"
        )
    return cond.Condition(
        NODE_REGISTRATION_HEALTHY,
        "False",
        str((launched or {}).get("reason") or LAUNCH_TIMEOUT),
        str((launched or {}).get("message") or "Failed to launch node"),
    )


def outcome(claim: Mapping[str, Any], success: bool, tracker: RegistrationHealth = TRACKER) -> None:
    """Record one launch outcome for the claim's pool: in memory only (the registration and
    termination paths make no extra API call); the status reporter writes the condition
    when it next reports the pool (a claim's change makes it do so)."""
    tracker.record(claim, success)


def reset(
    pool: Mapping[str, Any],
    nodeclass: Mapping[str, Any] | None,
    tracker: RegistrationHealth = TRACKER,
) -> tuple[cond.Condition | None, int | None]:
    """For the status reporter: the Unknown condition to write when the pool or its NodeClass
    changed since the condition was set (or it has none), and the NodeClass generation to
    record as ``status.nodeClassObservedGeneration`` (None: nothing to record)."""
    if nodeclass is None:
        return None, None
    generation = (nodeclass.get("metadata") or {}).get("generation")
    status = pool.get("status") or {}
    current = condition_of(pool)
    changed = (
        current is None
        or current.get("observedGeneration") != (pool.get("metadata") or {}).get("generation")
        or status.get("nodeClassObservedGeneration") != generation
    )
    record = generation if status.get("nodeClassObservedGeneration") != generation else None
    if not changed:
        return None, record
    tracker.forget(str(pool["metadata"]["name"]))
    unknown = cond.Condition(
        NODE_REGISTRATION_HEALTHY,
        "Unknown",
        "AwaitingReconciliation",
        "no NodeClaim has registered since the NodePool or its NodeClass changed",
    )
    return unknown, record
