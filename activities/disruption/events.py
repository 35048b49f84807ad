"""Karpenter's disruption events, told by the activities that act, with its wording:

- ``DisruptionBlocked`` on a Node and its NodeClaim the engine may not disrupt now ("Cannot
  disrupt Node: <the engine's one-line reason>"), and on a NodePool whose budgets allow no
  disruption at all ("No allowed disruptions due to blocking budget ...");
- ``Unconsolidatable`` on a Node and its NodeClaim disrupting would gain nothing for;
- ``DisruptionLaunching`` on each replacement NodeClaim created ("Launching NodeClaim:
  Underutilized"), ``DisruptionWaitingReadiness`` on each replacement not yet initialized;
- ``DisruptionTerminating`` on each candidate Node and NodeClaim deleted ("Disrupting Node:
  Underutilized").

Without flooding: a round is computed every few seconds while the cluster changes (twice
with the validation), and the readiness check polls every 5 s. Like Karpenter's recorder,
each event is dropped when told again about the same object within a window (Karpenter's:
15 min for Unconsolidatable, 1 min for a blocked NodePool, 2 min otherwise), and at most
``VERDICTS_PER_ROUND`` blocked/unconsolidatable events leave one round (the rest wait for a
later round). What gets through is aggregated by name (``activities.kubernetes.events``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from activities.kubernetes import events, nodeclaims, nodes
from activities.kubernetes.client import Kube
from activities.kubernetes.errors import KubernetesError
from scheduling.disruption.types import NodeVerdict

BLOCKED = "DisruptionBlocked"
UNCONSOLIDATABLE = "Unconsolidatable"
LAUNCHING = "DisruptionLaunching"
WAITING_READINESS = "DisruptionWaitingReadiness"
TERMINATING = "DisruptionTerminating"

# Karpenter's dedupe windows, seconds.
WINDOW = 120.0
UNCONSOLIDATABLE_WINDOW = 900.0
POOL_BLOCKED_WINDOW = 60.0
VERDICTS_PER_ROUND = 100

RECENT = events.Dedupe()


def title(reason: str) -> str:
    """``underutilized`` → ``Underutilized``, as Karpenter titles reasons in messages."""
    return reason[:1].upper() + reason[1:]


@dataclass
class Subject:
    """A Node and its NodeClaim, with the UIDs ``kubectl describe`` matches events by."""

    node: str
    claim: str
    node_uid: str = ""
    claim_uid: str = ""


def _uid(kube: Kube, kind: str, name: str) -> str:
    try:
        body = nodes.get(kube, name) if kind == "Node" else nodeclaims.get(kube, name)
    except KubernetesError:
        return ""
    return str(body["metadata"].get("uid") or "")


def _tell(
    kube: Kube,
    kind: str,
    name: str,
    uid: str,
    reason: str,
    message: str,
    window: float,
    recent: events.Dedupe,
) -> bool:
    if not recent.first((kind, name, reason), window):
        return False
    api_version = "v1" if kind in ("Node", "Pod") else "karpenter.sh/v1"
    events.record(
        kube,
        kind=kind,
        name=name,
        uid=uid or _uid(kube, kind, name),
        reason=reason,
        message=message,
        api_version=api_version,
    )
    return True


def _pair(
    kube: Kube,
    subject: Subject,
    reason: str,
    message: Callable[[str], str],
    window: float,
    recent: events.Dedupe,
) -> bool:
    """The event on the Node (when there is one yet) and on its NodeClaim (when it has its
    own: a managed Node without a claim is its own)."""
    node, claim = subject.node, subject.claim
    told = False
    if node:
        told = _tell(kube, "Node", node, subject.node_uid, reason, message("Node"), window, recent)
    if claim and claim != node:
        claim_message = message("NodeClaim")
        uid = subject.claim_uid
        told = _tell(kube, "NodeClaim", claim, uid, reason, claim_message, window, recent) or told
    return told


def verdicts(
    kube: Kube,
    blocked: Iterable[NodeVerdict],
    kept: Iterable[NodeVerdict],
    subjects: Mapping[str, Subject],
    blocked_pools: Mapping[str, tuple[str, str]],
    recent: events.Dedupe = RECENT,
    limit: int = VERDICTS_PER_ROUND,
) -> int:
    """A round's blocked and kept nodes as events, and pools whose budgets block all
    disruption (name → (uid, why)). Returns how many objects were told."""
    told = 0
    for pool, (uid, why) in sorted(blocked_pools.items()):
        text = f"No allowed disruptions due to blocking budget: {why}"
        told += _tell(kube, "NodePool", pool, uid, BLOCKED, text, POOL_BLOCKED_WINDOW, recent)
    for verdict_list, reason, window in (
        (blocked, BLOCKED, WINDOW),
        (kept, UNCONSOLIDATABLE, UNCONSOLIDATABLE_WINDOW),
    ):
        for v in verdict_list:
            if told >= limit:
                return told
            subject = subjects.get(v.node) or Subject(v.node, "")
            blocking = reason == BLOCKED

            def message(kind: str, why: str = v.reason, blocking: bool = blocking) -> str:
                return f"Cannot disrupt {kind}: {why}" if blocking else why

            told += _pair(kube, subject, reason, message, window, recent)
    return told


def launching(
    kube: Kube, claim: str, uid: str, reason: str, recent: events.Dedupe = RECENT
) -> None:
    _tell(
        kube,
        "NodeClaim",
        claim,
        uid,
        LAUNCHING,
        f"Launching NodeClaim: {title(reason)}",
        WINDOW,
        recent,
    )


def waiting_readiness(kube: Kube, claim: str, recent: events.Dedupe = RECENT) -> None:
    message = "Waiting on readiness to continue disruption"
    _tell(kube, "NodeClaim", claim, "", WAITING_READINESS, message, WINDOW, recent)


def terminating(kube: Kube, subject: Subject, reason: str, recent: events.Dedupe = RECENT) -> None:
    def message(kind: str) -> str:
        return f"Disrupting {kind}: {title(reason)}"

    _pair(kube, subject, TERMINATING, message, WINDOW, recent)
