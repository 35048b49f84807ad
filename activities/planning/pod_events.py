"""Tell a pod's owner why Joinery made no node for it (a Warning ``FailedScheduling`` event on
the Pod), or where it should schedule (``Nominated``, as Karpenter tells it).

Unschedulable pods get the solver's one-line reason (the constraint that failed), invalid
pods the field that is wrong. Names are aggregated (activities.kubernetes.events), so a pod
that stays pending across rounds bumps one event's count; at most ``LIMIT`` pods per round
are told, so a flood of pending pods does not become a flood of API writes.
"""

from __future__ import annotations

import itertools

from activities.kubernetes import events
from activities.kubernetes.client import Kube
from activities.planning.types import PlanOutcome

REASON = "FailedScheduling"
NOMINATED = "Nominated"
LIMIT = 100
# Karpenter tells a pod where it should schedule at most once per this many seconds.
NOMINATED_WINDOW = 120.0
RECENT = events.Dedupe()


def publish(kube: Kube, outcome: PlanOutcome) -> int:
    """Record the events; returns how many pods were told."""
    told = itertools.chain(
        ((pod, f"invalid pod: {why}") for pod, why in sorted(outcome.invalid_pods.items())),
        ((pod, f"no node can be provisioned: {why}") for pod, why in outcome.unschedulable.items()),
    )
    count = 0
    for pod, message in itertools.islice(told, LIMIT):
        _tell(kube, outcome, pod, REASON, message, warning=True)
        count += 1
    return count + nominate(kube, outcome)


def nominate(kube: Kube, outcome: PlanOutcome, recent: events.Dedupe = RECENT) -> int:
    """``Nominated`` on each pod a round placed (at most ``LIMIT`` a round, each pod at most
    once per ``NOMINATED_WINDOW``), with Karpenter's wording."""
    count = 0
    for pod, target in outcome.nominated.items():
        if count >= LIMIT:
            break
        if not recent.first((pod, target), NOMINATED_WINDOW):
            continue
        _tell(kube, outcome, pod, NOMINATED, f"Pod should schedule on: {target}")
        count += 1
    return count


def _tell(
    kube: Kube, outcome: PlanOutcome, pod: str, reason: str, message: str, warning: bool = False
) -> None:
    """An event on ``pod`` (``namespace/name``), with its uid as the round read it."""
    namespace, _, name = pod.partition("/")
    events.record(
        kube,
        kind="Pod",
        name=name,
        namespace=namespace,
        uid=outcome.pod_uids.get(pod, ""),
        reason=reason,
        message=message,
        warning=warning,
        api_version="v1",
    )
