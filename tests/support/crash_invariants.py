"""What the consolidation phase of the crash test checks, sampled during the run and at its end.

``Sampler`` reads the pool's NodeClaims, Nodes and the Deployment's pods every few hundred
milliseconds (each read one list call, so one consistent snapshot per kind) and records, per
claim, the first sample it was seen Initialized and the first it was seen deleting (or gone),
plus budget and availability violations as they happen. ``tests.support.round_history``
reads the disruption workflow's history afterwards: which commands were carried out and with
which replacements. ``check_order`` then asks, for every removed candidate, whether the
replacements of the command that removed it were Initialized first.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from typing import Any

from activities.kubernetes import nodeclaims, raw
from activities.kubernetes.client import Kube
from activities.kubernetes.errors import KubernetesError
from models import labels as L
from tests.support.round_history import ExecutedCommand, Rounds


def _initialized(claim: dict[str, Any]) -> bool:
    return any(
        c.get("type") == "Initialized" and c.get("status") == "True"
        for c in (claim.get("status") or {}).get("conditions") or []
    )


def _tainted(node: dict[str, Any]) -> bool:
    taints = (node.get("spec") or {}).get("taints") or []
    return any(t.get("key") == L.DISRUPTED_TAINT_KEY for t in taints)


def _ready(node: dict[str, Any]) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (node.get("status") or {}).get("conditions") or []
    )


@dataclass
class ClaimSeen:
    first: int  # sample index
    initialized: int | None = None
    deleting: int | None = None  # deletionTimestamp seen, or gone
    deletion_timestamp: str = ""
    initialized_at: str = ""  # the Initialized condition's lastTransitionTime


@dataclass(eq=False)  # a Thread must stay hashable
class Sampler(threading.Thread):
    """Samples the pool while the phase runs; ``violations`` says what broke, when."""

    kube: Kube
    pool: str
    namespace: str
    app: str
    budget_percent: int  # the pool's ``nodes`` budget, in percent
    max_unavailable: int
    interval: float = 0.3
    claims: dict[str, ClaimSeen] = field(default_factory=dict)
    violations: list[str] = field(default_factory=list)
    samples: int = 0
    most_disrupting: int = 0
    lowest_available: int | None = None
    desired: int = 0  # the Deployment's replicas once armed; 0 while availability is not checked

    def __post_init__(self) -> None:
        threading.Thread.__init__(self, name="crash-sampler", daemon=True)
        self.halt = threading.Event()

    def run(self) -> None:
        while not self.halt.wait(self.interval):
            try:
                self.sample()
            except KubernetesError:
                continue

    def sample(self) -> None:
        listed, _ = nodeclaims.list_(self.kube, nodepool=self.pool)
        node_items = (
            raw.call(self.kube.core.list_node, label_selector=f"{L.NODEPOOL}={self.pool}").get(
                "items"
            )
            or []
        )
        pods = (
            raw.call(
                self.kube.core.list_namespaced_pod, self.namespace, label_selector=f"app={self.app}"
            ).get("items")
            or []
        )
        self.samples += 1
        i = self.samples
        names = set()
        for claim in listed:
            name = claim["metadata"]["name"]
            names.add(name)
            seen = self.claims.setdefault(name, ClaimSeen(first=i))
            if seen.initialized is None and _initialized(claim):
                seen.initialized = i
                for c in claim["status"]["conditions"]:
                    if c.get("type") == "Initialized":
                        seen.initialized_at = str(c.get("lastTransitionTime") or "")
            stamp = claim["metadata"].get("deletionTimestamp")
            if stamp and seen.deleting is None:
                seen.deleting, seen.deletion_timestamp = i, str(stamp)
        for name, seen in self.claims.items():
            if name not in names and seen.deleting is None:
                seen.deleting = i
        self._budget(i, listed, node_items)
        self._availability(i, pods)

    def _budget(
        self, i: int, claims: list[dict[str, Any]], node_items: list[dict[str, Any]]
    ) -> None:
        """Karpenter's count: the pool's initialized nodes; those being disrupted (tainted
        ``karpenter.sh/disrupted``, or whose Node or NodeClaim is deleting) may not exceed
        ``nodes`` percent of them, rounded up."""
        deleting_claims = {
            (c.get("status") or {}).get("nodeName")
            for c in claims
            if c["metadata"].get("deletionTimestamp")
        }
        initialized = [
            n for n in node_items if (n["metadata"].get("labels") or {}).get(L.NODE_INITIALIZED)
        ]
        disrupting = [
            n["metadata"]["name"]
            for n in initialized
            if _tainted(n)
            or n["metadata"].get("deletionTimestamp")
            or n["metadata"]["name"] in deleting_claims
            or not _ready(n)
        ]
        allowed = math.ceil(len(initialized) * self.budget_percent / 100)
        self.most_disrupting = max(self.most_disrupting, len(disrupting))
        if len(disrupting) > allowed:
            self.violations.append(
                f"sample {i}: budget exceeded: {len(disrupting)} of {len(initialized)} nodes "
                f"disrupted, {self.budget_percent}% allows {allowed}: {sorted(disrupting)}"
            )

    def _availability(self, i: int, pods: list[dict[str, Any]]) -> None:
        if not self.desired:
            return
        available = sum(
            1
            for p in pods
            if p.get("status", {}).get("phase") == "Running"
            and not p["metadata"].get("deletionTimestamp")
        )
        low = self.lowest_available
        self.lowest_available = available if low is None else min(low, available)
        if available < self.desired - self.max_unavailable:
            self.violations.append(
                f"sample {i}: PDB violated: {available} of {self.desired} pods available "
                f"(maxUnavailable {self.max_unavailable})"
            )


def check_order(sampler: Sampler, log: Rounds) -> list[str]:
    """Every removed candidate: the replacements of the last command that named it were
    Initialized no later than the first sample that saw it deleting, and (to the second) no
    later than its deletionTimestamp; a replacement that never initialized means its
    command failed, so its candidates must still be there."""
    problems: list[str] = []
    last: dict[str, ExecutedCommand] = {}
    for command in log.commands:
        for claim in command.claims:
            last[claim] = command
    for claim, command in sorted(last.items()):
        seen = sampler.claims.get(claim)
        if seen is None or seen.deleting is None:
            continue
        for name in command.replacements:
            r = sampler.claims.get(name)
            if r is None or r.initialized is None:
                problems.append(f"{claim} removed but its replacement {name} never initialized")
            elif r.initialized > seen.deleting:
                problems.append(
                    f"{claim} seen deleting at sample {seen.deleting}, before its replacement "
                    f"{name} was Initialized (sample {r.initialized})"
                )
            elif (
                seen.deletion_timestamp
                and r.initialized_at
                and seen.deletion_timestamp < r.initialized_at
            ):
                problems.append(
                    f"{claim} deleted at {seen.deletion_timestamp}, before {name} initialized "
                    f"at {r.initialized_at}"
                )
    return problems
