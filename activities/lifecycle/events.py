"""Karpenter's termination events, with its reasons and wording, told by the activities that
terminate a node:

- ``TerminationGracePeriodExpiring`` (Warning) on the Node and its NodeClaim when termination
  starts with a terminationGracePeriod: "All pods will be deleted by <time>";
- ``Evicted`` on each pod a drain evicted: "Evicted pod: <the node's disruption reason>";
- ``Disrupted`` on each pod deleted because the grace period is running out (bypassing its
  PodDisruptionBudget and do-not-disrupt);
- ``AwaitingVolumeDetachment`` on a Node whose VolumeAttachments hold its termination.

Every Event is aggregated by name (``activities.kubernetes.events``): a retried activity
bumps a count, it does not add an Event.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from activities.kubernetes import events
from activities.kubernetes.client import Kube

GRACE_EXPIRING = "TerminationGracePeriodExpiring"
EVICTED = "Evicted"
DISRUPTED = "Disrupted"
AWAITING_VOLUMES = "AwaitingVolumeDetachment"


def grace_expiring(kube: Kube, node: str | None, claim: str, claim_uid: str, deadline: str) -> None:
    message = f"All pods will be deleted by {deadline}"
    if node:
        events.record(
            kube,
            kind="Node",
            name=node,
            reason=GRACE_EXPIRING,
            message=message,
            warning=True,
            api_version="v1",
        )
    events.record(
        kube,
        kind="NodeClaim",
        name=claim,
        uid=claim_uid,
        reason=GRACE_EXPIRING,
        message=message,
        warning=True,
    )


def _pod(kube: Kube, pod: dict[str, Any], reason: str, message: str) -> None:
    meta = pod.get("metadata") or {}
    events.record(
        kube,
        kind="Pod",
        name=str(meta.get("name")),
        namespace=str(meta.get("namespace")),
        uid=str(meta.get("uid") or ""),
        reason=reason,
        message=message,
        api_version="v1",
    )


def evicted(kube: Kube, pods: Iterable[dict[str, Any]], reason: str) -> None:
    for pod in pods:
        _pod(kube, pod, EVICTED, f"Evicted pod: {reason}")


def disrupted(kube: Kube, pod: dict[str, Any], grace_seconds: int, deadline: str) -> None:
    own = (pod.get("spec") or {}).get("terminationGracePeriodSeconds")
    message = (
        f"Deleting the pod to accommodate the terminationTime {deadline} of the node. The pod "
        f"was granted {grace_seconds} seconds of grace-period of its {own} "
        "terminationGracePeriodSeconds. This bypasses the PDB of the pod and the "
        "do-not-disrupt annotation."
    )
    _pod(kube, pod, DISRUPTED, message)


def awaiting_volumes(kube: Kube, node: str, attachments: list[str]) -> None:
    shown = ", ".join(attachments[:5]) + (
        f" and {len(attachments) - 5} other(s)" * (len(attachments) > 5)
    )
    events.record(
        kube,
        kind="Node",
        name=node,
        reason=AWAITING_VOLUMES,
        message=f"Awaiting deletion of bound volumeattachments ({shown})",
        api_version="v1",
    )
