"""The scale-down half of the side-by-side benchmark: after a burst has settled, a
PodDisruptionBudget on the burst's pods, the Deployment scaled to a tenth and the NodePool set
to ``consolidateAfter: 0s`` (its budgets left at the default, 10% of the nodes), then each
side's consolidation runs until it stops.

Watched once a second, the same way on both sides (``ScaleDownWatch`` does the counting, pure,
from the samples the poller hands it):

- the last disruption: the last moment a NodeClaim of the pool appeared or was marked for
  deletion (a decision), and the last moment one appeared or vanished (its end); the run is
  over once neither has happened for ``quiet`` seconds since the scale-down's own pod
  deletions were done (and no pod of the Deployment waits), and before the first disruption
  for ``FIRST_WAIT`` at least: on a loaded machine both sides once took over a minute to
  make their first move, and a quiet minute ended the runs before it;
- pods evicted: pods of the Deployment created after the scale-down (the ReplicaSet replaces
  each pod a disruption took; the scale-down itself creates none);
- the PDB (``maxUnavailable: 1``): from the first sample where the remaining pods are all
  Ready, never fewer Ready pods without a deletionTimestamp (what the disruption controller
  counts healthy) than the replicas minus one. A dip shorter than the poll can be missed.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from models import labels as L

MAX_UNAVAILABLE = 1
# Seconds to wait for the first disruption before the run may count as quiet.
FIRST_WAIT = 300.0
PDB_NAME = "burst"


def remaining(pods: int) -> int:
    """The replicas after the scale-down: a tenth, at least one."""
    return max(1, pods // 10)


@dataclass
class PodSample:
    uid: str
    ready: bool
    deleting: bool
    pending: bool


def pod_sample(body: Mapping[str, Any]) -> PodSample:
    meta = body.get("metadata") or {}
    status = body.get("status") or {}
    conditions = status.get("conditions") or []
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
    return PodSample(
        uid=str(meta.get("uid")),
        ready=ready,
        deleting=bool(meta.get("deletionTimestamp")),
        pending=status.get("phase") == "Pending",
    )


@dataclass
class ScaleDownWatch:
    """What the samples after the scale-down add up to; ``began`` is the scale-down's time."""

    began: float
    target: int
    claims: dict[str, bool]  # at the start: NodeClaim name -> being deleted
    pods: set[str]  # the Deployment's pod uids at the start
    last_decision: float = 0.0
    last_change: float = 0.0
    created: set[str] = field(default_factory=set)
    vanished: set[str] = field(default_factory=set)
    marked: set[str] = field(default_factory=set)
    replacements: set[str] = field(default_factory=set)
    pdb_from: float | None = None  # when the remaining pods were first all Ready
    settled: float | None = None  # when, besides, none of the scaled-away pods was left
    min_healthy: int | None = None
    violations: int = 0
    samples: int = 0
    pending: int = 0

    def __post_init__(self) -> None:
        self.last_decision = self.last_change = self.began

    def observe(self, at: float, claims: Mapping[str, bool], pods: list[PodSample]) -> None:
        """One sample: the pool's NodeClaims (name -> being deleted) and the pods."""
        for name, deleting in claims.items():
            if name not in self.claims:
                self.created.add(name)
                self.last_decision = self.last_change = at
            if deleting and not self.claims.get(name, False):
                self.marked.add(name)
                self.last_decision = at
        for name in self.claims:
            if name not in claims:
                self.vanished.add(name)
                self.last_change = at
        self.claims = dict(claims)
        self.replacements |= {p.uid for p in pods if p.uid not in self.pods}
        self.pending = sum(1 for p in pods if p.pending and not p.deleting)
        healthy = sum(1 for p in pods if p.ready and not p.deleting)
        live = sum(1 for p in pods if not p.deleting)
        if self.pdb_from is None and live == self.target and healthy == self.target:
            self.pdb_from = at
        if self.settled is None and self.pdb_from is not None and live == len(pods):
            self.settled = at
        if self.pdb_from is not None:
            self.samples += 1
            self.min_healthy = (
                healthy if self.min_healthy is None else min(self.min_healthy, healthy)
            )
            if healthy < self.target - MAX_UNAVAILABLE:
                self.violations += 1

    def quiet(self, at: float) -> float:
        """Seconds since the last NodeClaim appeared, was marked or vanished, counted from
        no earlier than when the scale-down's own pod deletions were done (0 before): until
        then no node is empty, and an autoscaler still waiting for them has not stopped."""
        if self.settled is None:
            return 0.0
        return at - max(self.last_decision, self.last_change, self.settled)

    @property
    def acted(self) -> bool:
        """Whether any NodeClaim has appeared, been marked or vanished yet."""
        return bool(self.created or self.marked or self.vanished)

    def over(self, at: float, quiet: float) -> bool:
        """Quiet for ``quiet`` seconds; before the first disruption, for FIRST_WAIT at least
        (on a loaded machine either side took over a minute to make its first move)."""
        return self.quiet(at) >= (quiet if self.acted else max(quiet, FIRST_WAIT))

    def figures(self) -> dict[str, Any]:
        return {
            "lastDisruptionSeconds": round(self.last_decision - self.began, 1),
            "lastClaimGoneSeconds": round(self.last_change - self.began, 1),
            "claimsCreated": len(self.created),
            "claimsDeleted": len(self.vanished),
            "podsEvicted": len(self.replacements),
            "pdb": {
                "floor": self.target - MAX_UNAVAILABLE,
                "minHealthy": self.min_healthy,
                "violations": self.violations,
                "samples": self.samples,
            },
        }


def pdb(namespace: str, app: str) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": PDB_NAME, "namespace": namespace},
        "spec": {"maxUnavailable": MAX_UNAVAILABLE, "selector": {"matchLabels": {"app": app}}},
    }


def _items(raw: Any) -> list[dict[str, Any]]:
    return list(json.loads(raw.data).get("items") or [])


def run(
    api: Any,
    pool: str,
    namespace: str,
    app: str,
    pods: int,
    quiet: float,
    timeout: float,
    cpu: Callable[[], dict[str, float]],
    nodes: Callable[[], dict[str, Any]],
) -> dict[str, Any]:
    """The PDB, the scale-down and the NodePool's ``consolidateAfter: 0s``; then sample each
    second until ``quiet`` seconds pass without a NodeClaim change (or ``timeout``).
    ``nodes`` gives the pool's nodes and $/h at the end."""
    from kubernetes import client as k8s

    core = k8s.CoreV1Api(api)
    custom = k8s.CustomObjectsApi(api)
    k8s.PolicyV1Api(api).create_namespaced_pod_disruption_budget(namespace, pdb(namespace, app))
    policy = k8s.PolicyV1Api(api)
    for _ in range(30):  # the disruption controller's first count, so evictions can be judged
        status = policy.read_namespaced_pod_disruption_budget(PDB_NAME, namespace).status
        if status is not None and status.observed_generation:
            break
        time.sleep(0.5)

    def claims() -> dict[str, bool]:
        raw = custom.list_cluster_custom_object(
            "karpenter.sh",
            "v1",
            "nodeclaims",
            label_selector=f"{L.NODEPOOL}={pool}",
            _preload_content=False,
        )
        return {
            str(c["metadata"]["name"]): bool(c["metadata"].get("deletionTimestamp"))
            for c in _items(raw)
        }

    def pod_samples() -> list[PodSample]:
        raw = core.list_namespaced_pod(
            namespace, label_selector=f"app={app}", _preload_content=False
        )
        return [pod_sample(p) for p in _items(raw)]

    target = remaining(pods)
    cpu0 = cpu()
    watch = ScaleDownWatch(time.monotonic(), target, claims(), {p.uid for p in pod_samples()})
    k8s.AppsV1Api(api).patch_namespaced_deployment_scale(
        app, namespace, {"spec": {"replicas": target}}
    )
    custom.patch_cluster_custom_object(
        "karpenter.sh",
        "v1",
        "nodepools",
        pool,
        {"spec": {"disruption": {"consolidateAfter": "0s"}}},
    )
    deadline = watch.began + timeout
    timed_out = False
    while True:
        time.sleep(1.0)
        now = time.monotonic()
        watch.observe(now, claims(), pod_samples())
        if watch.over(now, quiet) and not watch.pending and watch.pdb_from is not None:
            break
        if now > deadline:
            timed_out = True
            break
    cpu1 = cpu()
    return {
        "replicas": target,
        **watch.figures(),
        **nodes(),
        "timedOut": timed_out,
        "quietSeconds": quiet,
        "cpuSeconds": {k: round(cpu1[k] - cpu0.get(k, 0.0), 1) for k in cpu1},
    }
