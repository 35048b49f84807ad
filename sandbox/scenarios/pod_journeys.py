"""Each pod's way from created to Running, split into whose turn it was: the control
plane's, the sandbox's simulated instances' and kubelets', or Joinery's.

A burst's wall time mixes three parties. The control plane (the ReplicaSet controller
creating the pods, the scheduler finding them unschedulable, later binding them) has its own
pace, which on a real cluster is EKS's. The instance booting and its kubelet registering the
Node and reporting it Ready are, on a real cluster, EC2's and the kubelet's; here they are
the sandbox's node simulator (``sandbox/nodes.py``) and kwok, which run on the same cores as
everything else. Joinery's part is planning and launching (from the scheduler marking a pod
Unschedulable, which is what Joinery watches for, to the claim's ``Launched``) and
registering the Node (from the Node object to the claim's ``Registered``: the
``karpenter.sh/unregistered`` taint off). So per pod:

- ``created``       the pod object (ReplicaSet controller)
- ``unschedulable`` the scheduler's ``PodScheduled=False/Unschedulable`` (first seen)
- ``claimCreated``  the NodeClaim of the node the pod ran on (Joinery's planning round)
- ``launched``      that claim's ``Launched`` condition (Joinery's launch activity, EC2's API)
- ``registered``    the Node object (the simulated instance's kubelet registering)
- ``nodeReady``     the Node's ``Ready`` condition (kwok)
- ``claimRegistered`` the claim's ``Registered`` condition: Joinery took the node's
                    ``karpenter.sh/unregistered`` taint off, so pods may bind to it
- ``usable``        the later of ``nodeReady`` and ``claimRegistered``
- ``bound``         the pod's ``PodScheduled=True`` (the scheduler)
- ``running``       the pod's ``Ready`` condition (kwok)

The scheduler overwrites ``PodScheduled`` when it binds the pod, so the Unschedulable moment
is caught as it happens by ``UnschedulableWatch`` (a raw watch that decodes only the events
carrying that reason). Every stamp is Kubernetes' own, whole seconds. The claim is matched
through the node the pod ran on (the pod ``spec.nodeName`` → the claim with that
``status.nodeName``): with one pod per node that is the claim made for one of the burst's
pods, if not always for this very one.

``shares`` sums it up: per stage, p50/p99/max seconds; and totals over the burst:
``joineryOwn`` (seconds during which at least one pod waited on Joinery itself: the union of
the pods' [unschedulable, launched] and [registered, claimRegistered] spans);
``untilUsable`` (the union of the pods' whole [unschedulable, usable] spans, Joinery's and
the simulated nodes' turns together); ``joinerySpan`` (the first Unschedulable to the last
usable); and ``controlPlaneOnly`` (the rest of the burst, from the first create to the last
Running, when no pod was between Unschedulable and usable).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from kubernetes import client as k8s

from sandbox.scenarios.stats import percentile, union_length

Obj = dict[str, Any]

JOINERY = "Joinery"
CONTROL_PLANE = "control plane"
INSTANCE = "sandbox: instance boot and kubelet"
KWOK = "sandbox: kwok"

# (label, from-stamp, to-stamp, whose turn): the stages of one pod's way, in order
STAGES: tuple[tuple[str, str, str, str], ...] = (
    ("createdToUnschedulable", "created", "unschedulable", CONTROL_PLANE),
    ("unschedulableToClaim", "unschedulable", "claimCreated", JOINERY),
    ("claimToLaunched", "claimCreated", "launched", JOINERY),
    ("launchedToRegistered", "launched", "registered", INSTANCE),
    ("registeredToNodeReady", "registered", "nodeReady", KWOK),
    ("registeredToClaimRegistered", "registered", "claimRegistered", JOINERY),
    ("usableToBound", "usable", "bound", CONTROL_PLANE),
    ("boundToRunning", "bound", "running", CONTROL_PLANE),
)
# The spans of a pod's way that are Joinery's turn (a pod waits on Joinery alone in them).
JOINERY_SPANS = (("unschedulable", "launched"), ("registered", "claimRegistered"))


def _at(stamp: object) -> float | None:
    if not stamp:
        return None
    when = stamp if isinstance(stamp, datetime) else datetime.fromisoformat(str(stamp))
    return when.timestamp()


def _condition(obj: Mapping[str, Any], kind: str, status: str = "True") -> float | None:
    for condition in (obj.get("status") or {}).get("conditions") or []:
        if condition.get("type") == kind and condition.get("status") == status:
            return _at(condition.get("lastTransitionTime"))
    return None


class UnschedulableWatch:
    """Records, per pod name, when the scheduler first marked it Unschedulable.

    A thread on a raw pod watch (no client-side models: a 1,000-pod burst makes thousands of
    pod events, and this process also runs the EC2 emulator); only events whose bytes carry
    ``Unschedulable`` are decoded. Start it before the pods exist; after ``stop()`` it records
    nothing more.
    """

    def __init__(self, core: k8s.CoreV1Api, namespace: str, selector: str) -> None:
        self._core = core
        self._namespace = namespace
        self._selector = selector
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self.first: dict[str, float] = {}
        self._thread = threading.Thread(target=self._run, name="unschedulable-watch", daemon=True)

    def start(self) -> UnschedulableWatch:
        self._thread.start()
        return self

    def stop(self) -> dict[str, float]:
        """What was recorded so far. The thread ends at the stream's next event: closing a
        response another thread is reading blocks on the reader's buffer lock."""
        with self._lock:
            self._stopped.set()
            return dict(self.first)

    def _run(self) -> None:
        while not self._stopped.is_set():
            try:
                response = self._core.list_namespaced_pod(
                    self._namespace,
                    label_selector=self._selector,
                    watch=True,
                    timeout_seconds=3600,
                    _preload_content=False,
                )
                for line in response:
                    if self._stopped.is_set():
                        return
                    if b"Unschedulable" in line:
                        self.note(json.loads(line).get("object") or {})
            except Exception:  # a dropped stream: watch again
                if self._stopped.wait(0.5):
                    return

    def note(self, pod: Mapping[str, Any]) -> None:
        name = (pod.get("metadata") or {}).get("name")
        if not name or name in self.first:
            return
        for condition in (pod.get("status") or {}).get("conditions") or []:
            if (
                condition.get("type") == "PodScheduled"
                and condition.get("status") == "False"
                and condition.get("reason") == "Unschedulable"
            ):
                at = _at(condition.get("lastTransitionTime"))
                if at is not None:
                    with self._lock:
                        if not self._stopped.is_set():
                            self.first[name] = at


def journeys(
    pods: Iterable[Obj],
    nodes: Iterable[Obj],
    claims: Iterable[Obj],
    unschedulable: Mapping[str, float],
) -> list[dict[str, float | None]]:
    """One row per pod: the epoch second of each stamp (None where it was not reached)."""
    node_by_name = {n["metadata"]["name"]: n for n in nodes}
    claim_by_node = {
        (c.get("status") or {}).get("nodeName"): c
        for c in claims
        if (c.get("status") or {}).get("nodeName")
    }
    rows = []
    for pod in pods:
        meta = pod.get("metadata") or {}
        node_name = (pod.get("spec") or {}).get("nodeName")
        node = node_by_name.get(node_name) if node_name else None
        claim = claim_by_node.get(node_name) if node_name else None
        row: dict[str, float | None] = {
            "created": _at(meta.get("creationTimestamp")),
            "unschedulable": unschedulable.get(meta.get("name", "")),
            "claimCreated": _at((claim or {}).get("metadata", {}).get("creationTimestamp")),
            "launched": _condition(claim, "Launched") if claim else None,
            "registered": _at((node or {}).get("metadata", {}).get("creationTimestamp")),
            "nodeReady": _condition(node, "Ready") if node else None,
            "claimRegistered": _condition(claim, "Registered") if claim else None,
            "bound": _condition(pod, "PodScheduled"),
            "running": _condition(pod, "Ready"),
        }
        ready, taken_in = row["nodeReady"], row["claimRegistered"]
        row["usable"] = None if ready is None or taken_in is None else max(ready, taken_in)
        rows.append(row)
    return rows


def shares(rows: list[dict[str, float | None]]) -> dict[str, Any]:
    """Per stage p50/p99/max seconds (pods that reached both ends; a negative gap, from whole
    seconds, counts as 0), and the burst's totals (the module's docstring)."""
    stages: dict[str, Any] = {}
    for label, start, end, whose in STAGES:
        gaps = [
            max(0.0, r[end] - r[start])  # type: ignore[operator]
            for r in rows
            if r[start] is not None and r[end] is not None
        ]
        if gaps:
            stages[label] = {
                "whose": whose,
                "pods": len(gaps),
                "p50": percentile(gaps, 0.5),
                "p99": percentile(gaps, 0.99),
                "max": max(gaps),
            }
    waits: list[tuple[float, float]] = []
    joinery: list[tuple[float, float]] = []
    for r in rows:
        marked, ready = r["unschedulable"], r["usable"]
        if marked is not None and ready is not None:
            waits.append((marked, max(marked, ready)))
            for start, end in JOINERY_SPANS:
                a, b = r[start], r[end]
                if a is not None and b is not None:
                    joinery.append((a, max(a, b)))
    created = [r["created"] for r in rows if r["created"] is not None]
    running = [r["running"] for r in rows if r["running"] is not None]
    out: dict[str, Any] = {"stages": stages, "podsTimed": len(waits), "pods": len(rows)}
    if created and running:
        burst = max(running) - min(created)
        until_usable = union_length(waits)
        out.update(
            burstSeconds=burst,
            joineryOwn=union_length(joinery),
            untilUsable=until_usable,
            # the plain span: the first pod marked Unschedulable to the last Node usable
            joinerySpan=max(b for _, b in waits) - min(a for a, _ in waits) if waits else 0.0,
            controlPlaneOnly=max(0.0, burst - until_usable),
            joineryWaitMax=max((b - a for a, b in waits), default=0.0),
        )
    return out
