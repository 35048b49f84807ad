"""Karpenter's interruption events (its AWS provider's reasons and wording), on the Node and
the NodeClaim an interruption message is about:

| message | reason | type |
|---|---|---|
| spot interruption warning | ``SpotInterrupted`` | Warning |
| rebalance recommendation | ``SpotRebalanceRecommendation`` | Normal |
| state change to stopping / stopped | ``InstanceStopping`` | Warning |
| state change to shutting-down / terminated | ``InstanceTerminating`` | Warning |
| AWS Health scheduled change | ``InstanceUnhealthy`` | Warning |

and, when the message makes Joinery drain the node, ``TerminatingOnInterruption`` (Warning).
A rebalance recommendation is news only, as in Karpenter: no drain follows it.
"""

from __future__ import annotations

from collections.abc import Callable

from activities.cloud.interruption import (
    REBALANCE_RECOMMENDATION,
    SCHEDULED_CHANGE,
    SPOT_INTERRUPTION,
    STATE_CHANGE,
)
from activities.kubernetes import events
from activities.kubernetes.client import Kube

STOPPING = frozenset({"stopping", "stopped"})

# kind -> (reason, warning, message)
TOLD = {
    SPOT_INTERRUPTION: ("SpotInterrupted", True, "Spot interruption warning was triggered"),
    REBALANCE_RECOMMENDATION: (
        "SpotRebalanceRecommendation",
        False,
        "Spot rebalance recommendation was triggered",
    ),
    SCHEDULED_CHANGE: (
        "InstanceUnhealthy",
        True,
        "An unhealthy warning was triggered for the instance",
    ),
}
TERMINATING_ON_INTERRUPTION = "TerminatingOnInterruption"


def what(kind: str, detail: str = "") -> tuple[str, bool, str] | None:
    """The event a message of ``kind`` (with its state ``detail``) gets, if any."""
    if kind == STATE_CHANGE:
        if detail in STOPPING:
            return "InstanceStopping", True, "Instance is stopping"
        return "InstanceTerminating", True, "Instance is terminating"
    return TOLD.get(kind)


def tell(
    kube: Kube, kind: str, detail: str, node: str | None, claim: str, draining: bool
) -> list[str]:
    """Record the events; returns their reasons (for the caller's logs and tests)."""
    told: list[str] = []
    found = what(kind, detail)
    if found is not None:
        reason, warning, message = found
        _both(kube, node, claim, reason, warning, lambda _kind: message)
        told.append(reason)
    if draining:
        _both(
            kube,
            node,
            claim,
            TERMINATING_ON_INTERRUPTION,
            True,
            lambda obj: f"Interruption triggered termination for the {obj}",
        )
        told.append(TERMINATING_ON_INTERRUPTION)
    return told


def _both(
    kube: Kube,
    node: str | None,
    claim: str,
    reason: str,
    warning: bool,
    say: Callable[[str], str],
) -> None:
    if node:
        events.record(
            kube,
            kind="Node",
            name=node,
            reason=reason,
            message=say("Node"),
            warning=warning,
            api_version="v1",
        )
    events.record(
        kube, kind="NodeClaim", name=claim, reason=reason, message=say("NodeClaim"), warning=warning
    )
