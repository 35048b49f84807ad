"""The real kube-scheduler as a judge of Joinery's placements.

A round puts a scenario (``scheduler_scenarios``) on the control plane: kwok Nodes with
their labels, taints and allocatable, and pods the scheduler places itself (those it cannot
place are dropped, so the starting state is one it admitted). Joinery then decides on the
same cluster, in process, through the CLI's own entry point. Its decision is applied as
the cluster would apply it (disrupted nodes and their pods deleted, replacement and new
claims created as Nodes of their cheapest instance type), and each pod it moves or places is
created again, unbound, with one change: a ``kubernetes.io/hostname`` nodeSelector naming the
node Joinery chose. The scheduler then judges Joinery's placement, not one of its own: a pod
left Pending is a failure, reported with the scheduler's own message.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from kubernetes import client as k8s
from scheduler_scenarios import (
    HOSTNAME,
    NODEPOOL,
    ROUND,
    ZONE,
    Obj,
    Scenario,
    allocatable,
    node_object,
    type_labels,
)

from activities.kubernetes.client import Kube

NOW = "2026-11-28T12:00:00Z"  # --now: consolidateAfter is 0s, so any time will do
SETTLE_SECONDS = 20.0  # the longest a pod may take to be bound or called Unschedulable
RETRY_SECONDS = 3.0  # after the last pod: time for the scheduler to retry Unschedulable ones


@dataclass
class Failure:
    """A pod Joinery placed that the kube-scheduler would not run where Joinery said."""

    pod: str
    node: str
    message: str

    def __str__(self) -> str:
        return f"{self.pod} -> {self.node}: {self.message}"


@dataclass
class Outcome:
    seed: int
    kind: str  # "disruption" or "plan"
    judged: int = 0  # pods pinned to Joinery's choice and judged by the scheduler
    commands: int = 0
    failures: list[Failure] = field(default_factory=list)
    late: list[str] = field(default_factory=list)  # Unschedulable at first, bound later
    seconds: float = 0.0
    decision: Obj = field(default_factory=dict)
    placed: dict[str, str] = field(default_factory=dict)  # where the bound pods started
    phases: dict[str, float] = field(default_factory=dict)  # seconds spent in each step
    daemon_pods: list[Obj] = field(default_factory=list)  # as Joinery read them

    def mark(self, phase: str, since: float) -> float:
        """Add the time since ``since`` to ``phase``; the time now."""
        now = time.monotonic()
        self.phases[phase] = self.phases.get(phase, 0.0) + now - since
        return now


def _unschedulable(pod: k8s.V1Pod) -> str | None:
    for c in (pod.status and pod.status.conditions) or []:
        if c.type == "PodScheduled" and c.status == "False" and c.reason == "Unschedulable":
            return str(c.message or "Unschedulable")
    return None


def _request_node_affinity(spec: Obj) -> bool:
    affinity = (spec.get("affinity") or {}).get("nodeAffinity") or {}
    return bool(spec.get("nodeSelector")) or bool(
        affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    )


def pinned(pod: Obj, node: str) -> Obj:
    """``pod`` again, unbound, with a hostname nodeSelector naming ``node``.

    A spread constraint honouring node affinity (the default) would count only the pinned
    node's domain once the selector is there, and so never see a skew; on a pod without node
    affinity of its own that policy counts every node, which ``Ignore`` says explicitly."""
    body = copy.deepcopy(pod)
    spec = body["spec"]
    spec.pop("nodeName", None)
    body.pop("status", None)
    if not _request_node_affinity(spec):
        for c in spec.get("topologySpreadConstraints", []):
            c.setdefault("nodeAffinityPolicy", "Ignore")
    spec.setdefault("nodeSelector", {})[HOSTNAME] = node
    return body


def claim_node(sc: Scenario, name: str, claim: Obj, pools: dict[str, Obj]) -> Obj:
    """The Node a claim becomes when its cheapest instance type launches in the cheapest
    offering the claim allows, labelled as Karpenter labels it: the pool's template labels,
    a value for each requirement that names one, then the instance type's own labels."""
    itype = sc.instance_type(claim["instanceTypes"][0])
    offers = [
        o
        for o in itype["offerings"]
        if o["zone"] in claim["zones"]
        and o["capacityType"] in claim["capacityTypes"]
        and o.get("available", True)
    ]
    offer = min(offers, key=lambda o: (o["price"], o["zone"], o["capacityType"]))
    template = pools[claim["nodePool"]]["spec"]["template"]
    labels: dict[str, str] = dict(template.get("metadata", {}).get("labels", {}))
    for r in claim.get("requirements", []):
        if r["key"] == HOSTNAME:
            continue
        if r["operator"] == "In" and r.get("values"):
            labels[r["key"]] = sorted(r["values"])[0]
        elif r["operator"] == "Exists":
            labels.setdefault(r["key"], "any")
    labels |= type_labels(itype, offer["zone"], offer["capacityType"])
    labels |= {NODEPOOL: claim["nodePool"], "karpenter.sh/initialized": "true"}
    taints = template["spec"].get("taints", [])
    return node_object(name, labels, taints, allocatable(itype), sc.namespace)


def run_joinery(sc: Scenario, bound: list[Obj], workdir: Path, *, disruption: bool) -> Obj:
    """``joinery plan [--disruption]`` on the round's cluster, through the CLI's entry."""
    from worker.cli import main

    docs = [*sc.pools, *sc.nodes, *bound, *sc.daemonsets, *sc.pdbs, *sc.pending]
    manifests = workdir / f"cluster-{sc.seed}.json"
    manifests.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}))
    catalog = workdir / f"catalog-{sc.seed}.json"
    catalog.write_text(json.dumps(sc.catalog))
    argv = ["plan", "-f", str(manifests), "--catalog", str(catalog), "-o", "json"]
    if disruption:
        argv += ["--disruption", "--now", NOW]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    if code != 0:
        raise AssertionError(f"seed {sc.seed}: joinery plan exited {code}: {err.getvalue()}")
    doc: Obj = json.loads(out.getvalue())
    return doc


T = TypeVar("T")


def _each(call: Callable[[T], object], bodies: Iterable[T]) -> None:
    """``call`` on every body, eight at a time: the API round trips, not the API server, are
    what a round waits on when it creates forty pods one by one."""
    with ThreadPoolExecutor(8) as pool:
        for _ in pool.map(call, bodies):
            pass


class Stage:
    """One round's objects on the control plane: it creates them, watches the scheduler
    decide, and removes them all (its nodes by the round label, its pods with the
    namespace) so the next round starts on an empty cluster."""

    def __init__(self, admin: Kube, sc: Scenario) -> None:
        self.core = admin.core
        self.sc = sc
        self.ns = sc.namespace
        self.started_daemons = False

    # -- setting up ---------------------------------------------------------------------

    def open(self) -> None:
        self.core.create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=self.ns)))
        deadline = time.monotonic() + 30
        while True:
            try:
                self.core.read_namespaced_service_account("default", self.ns)
                return
            except k8s.ApiException as exc:
                if exc.status != 404 or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def create_nodes(self, nodes: list[Obj]) -> None:
        _each(self.core.create_node, nodes)
        self.wait_ready({n["metadata"]["name"] for n in nodes})

    def run_daemons(self, outcome: Outcome) -> None:
        """Start the round's DaemonSets (once) and wait for a pod of each bound on every
        node of the round, as on a cluster where a node counts as initialized only when its
        daemons run; a daemon pod the scheduler refuses is a failure of the round."""
        if not self.sc.daemonsets:
            return
        if not self.started_daemons:
            apps = k8s.AppsV1Api(self.core.api_client)
            for ds in self.sc.daemonsets:
                apps.create_namespaced_daemon_set(self.ns, ds)
            self.started_daemons = True
        deadline = time.monotonic() + SETTLE_SECONDS
        while True:
            nodes = {
                n.metadata.name
                for n in self.core.list_node(label_selector=f"{ROUND}={self.ns}").items
            }
            pods = self.core.list_namespaced_pod(self.ns, label_selector="daemon").items
            missing = {
                (ds["metadata"]["name"], node) for ds in self.sc.daemonsets for node in nodes
            } - {(p.metadata.labels["daemon"], p.spec.node_name) for p in pods}
            if not missing or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        for ds, node in sorted(missing):
            refused = [
                _unschedulable(p) or "not created"
                for p in pods
                if p.metadata.labels["daemon"] == ds and not p.spec.node_name
            ]
            message = refused[0] if refused else "no pod of the DaemonSet in time"
            outcome.failures.append(Failure(f"{self.ns}/daemonset {ds}", node, message))

    def daemon_pods(self) -> list[Obj]:
        """The bound daemon pods, as a live cluster's reader would see them."""
        pods = self.core.list_namespaced_pod(self.ns, label_selector="daemon").items
        serialize = self.core.api_client.sanitize_for_serialization
        return [
            {"apiVersion": "v1", "kind": "Pod", **serialize(p)} for p in pods if p.spec.node_name
        ]

    def wait_ready(self, names: set[str]) -> None:
        """Until kwok reports every node Ready and the not-ready taint is gone from each (a
        pod pinned to a node still tainted would be refused for a reason not Joinery's)."""
        deadline = time.monotonic() + 60
        while True:
            waiting = set(names)
            for node in self.core.list_node(label_selector=f"{ROUND}={self.ns}").items:
                ready = any(
                    c.type == "Ready" and c.status == "True" for c in (node.status.conditions or [])
                )
                tainted = any(
                    t.key.startswith("node.kubernetes.io/") for t in (node.spec.taints or [])
                )
                if ready and not tainted:
                    waiting.discard(node.metadata.name)
            if not waiting:
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"seed {self.sc.seed}: nodes never Ready: {sorted(waiting)}")
            time.sleep(0.05)

    def pods(self) -> dict[str, k8s.V1Pod]:
        return {p.metadata.name: p for p in self.core.list_namespaced_pod(self.ns).items}

    def place(self, pods: list[Obj]) -> dict[str, str]:
        """Let the scheduler place ``pods``; drop those it cannot. Pod name → node."""

        def create(body: Obj) -> object:
            return self.core.create_namespaced_pod(self.ns, body)

        if self.sc.placed is not None:
            placed = self.sc.placed
            _each(create, [_bound(p, placed[p["metadata"]["name"]]) for p in pods])
            return dict(placed)
        _each(create, pods)
        deadline = time.monotonic() + SETTLE_SECONDS
        while True:
            live = self.pods()
            open_ = [n for n, p in live.items() if not p.spec.node_name and not _unschedulable(p)]
            if not open_ or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        _each(self.delete_pod, [n for n, p in live.items() if not p.spec.node_name])
        return {
            n: p.spec.node_name
            for n, p in self.pods().items()
            if p.spec.node_name and p.metadata.deletion_timestamp is None
        }

    def delete_pod(self, name: str) -> None:
        with contextlib.suppress(k8s.ApiException):
            self.core.delete_namespaced_pod(name, self.ns, grace_period_seconds=0)

    # -- judging ------------------------------------------------------------------------

    def remove_nodes(self, names: set[str]) -> None:
        """Delete ``names`` and the pods on them (at once, as a finished drain leaves it).
        The nodes go first: a DaemonSet would put its pod back on a node still there."""
        _each(self.core.delete_node, sorted(names))
        deadline = time.monotonic() + 30
        while True:
            nodes = self.core.list_node(label_selector=f"{ROUND}={self.ns}").items
            left = [n for n, p in self.pods().items() if p.spec.node_name in names]
            _each(self.delete_pod, left)
            if not left and not any(n.metadata.name in names for n in nodes):
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"seed {self.sc.seed}: {sorted(names)} not deleted")
            time.sleep(0.05)

    def judge(self, moves: list[tuple[Obj, str]], outcome: Outcome) -> None:
        """Create each pod pinned to its node, in order, waiting for the scheduler's word on
        each; then let it retry the refused ones once the rest are in."""
        refused: dict[str, tuple[str, str]] = {}
        for pod, node in moves:
            name = pod["metadata"]["name"]
            self.core.create_namespaced_pod(self.ns, pinned(pod, node))
            outcome.judged += 1
            deadline = time.monotonic() + SETTLE_SECONDS
            while True:
                live = self.core.read_namespaced_pod(name, self.ns)
                if live.spec.node_name:
                    break
                message = _unschedulable(live)
                if message is not None or time.monotonic() > deadline:
                    refused[name] = (node, message or "no verdict in time")
                    break
                time.sleep(0.03)
        if not refused:
            return
        deadline = time.monotonic() + RETRY_SECONDS
        while refused and time.monotonic() < deadline:
            time.sleep(0.2)
            for name in list(refused):
                live = self.core.read_namespaced_pod(name, self.ns)
                if live.spec.node_name:
                    outcome.late.append(name)
                    del refused[name]
        for name, (node, message) in refused.items():
            live = self.core.read_namespaced_pod(name, self.ns)
            message = _unschedulable(live) or message
            on_node = self.core.list_pod_for_all_namespaces(field_selector=f"spec.nodeName={node}")
            foreign = [
                f"{p.metadata.namespace}/{p.metadata.name}"
                for p in on_node.items
                if p.metadata.namespace != self.ns
            ]
            if foreign:  # another round running at once on this control plane
                message += f" (pods of other namespaces on the node: {', '.join(foreign)})"
            outcome.failures.append(Failure(f"{self.ns}/{name}", node, message))

    # -- tearing down -------------------------------------------------------------------

    def close(self) -> None:
        with contextlib.suppress(k8s.ApiException):
            self.core.delete_collection_node(label_selector=f"{ROUND}={self.ns}")
        with contextlib.suppress(k8s.ApiException):
            self.core.delete_collection_namespaced_pod(self.ns, grace_period_seconds=0)
        with contextlib.suppress(k8s.ApiException):
            self.core.delete_namespace(self.ns, propagation_policy="Background")


def _bound(pod: Obj, node: str) -> Obj:
    body = copy.deepcopy(pod)
    body["spec"]["nodeName"] = node
    body["status"] = {"phase": "Running"}
    return body


def disruption_round(admin: Kube, sc: Scenario, workdir: Path) -> Outcome:
    """Place the pods, ask for a disruption round, apply it and judge every move."""
    began = time.monotonic()
    outcome = Outcome(sc.seed, "disruption")
    stage = Stage(admin, sc)
    stage.open()
    t = outcome.mark("namespace", began)
    try:
        stage.create_nodes(sc.nodes)
        stage.run_daemons(outcome)
        t = outcome.mark("nodes", t)
        placed = outcome.placed = stage.place(sc.pods)
        t = outcome.mark("place", t)
        bound = [
            _bound(p, placed[p["metadata"]["name"]])
            for p in sc.pods
            if p["metadata"]["name"] in placed
        ]
        outcome.daemon_pods = stage.daemon_pods()
        docs = [*bound, *outcome.daemon_pods]
        decision = run_joinery(sc, docs, workdir, disruption=True)["disruption"]
        t = outcome.mark("joinery", t)
        outcome.decision = decision
        outcome.commands = len(decision["commands"])
        pools = {p["metadata"]["name"]: p for p in sc.pools}
        gone: set[str] = set()
        new_nodes: list[Obj] = []
        moves: list[tuple[Obj, str]] = []
        by_name = {p["metadata"]["name"]: p for p in bound}
        for k, command in enumerate(decision["commands"]):
            names = {
                f"replacement-{j}": f"{sc.prefix}-r{k}x{j}"
                for j in range(len(command["replacements"]))
            }
            for j, claim in enumerate(command["replacements"]):
                new_nodes.append(claim_node(sc, names[f"replacement-{j}"], claim, pools))
            gone |= set(command["nodes"])
            for node in command["nodes"]:
                for pod in bound:  # the order the pods were bound in, node by node
                    key = f"{sc.namespace}/{pod['metadata']['name']}"
                    if pod["spec"]["nodeName"] == node:
                        if key not in command["pods"]:
                            outcome.failures.append(
                                Failure(key, "-", "evicted with no destination")
                            )
                            continue
                        target = command["pods"][key]
                        moves.append((by_name[pod["metadata"]["name"]], names.get(target, target)))
        if gone:
            stage.remove_nodes(gone)
        if new_nodes:
            stage.create_nodes(new_nodes)
            stage.run_daemons(outcome)
        t = outcome.mark("apply", t)
        stage.judge(moves, outcome)
        t = outcome.mark("judge", t)
    finally:
        stage.close()
        outcome.mark("close", t)
    outcome.seconds = time.monotonic() - began
    return outcome


def plan_round(admin: Kube, sc: Scenario, workdir: Path) -> Outcome:
    """Place the bound pods, ask `joinery plan` for the pending ones, launch its claims as
    Nodes and judge every pod it placed (on a claim or an existing node)."""
    began = time.monotonic()
    outcome = Outcome(sc.seed, "plan")
    stage = Stage(admin, sc)
    stage.open()
    try:
        stage.create_nodes(sc.nodes)
        stage.run_daemons(outcome)
        placed = outcome.placed = stage.place(sc.pods)
        bound = [
            _bound(p, placed[p["metadata"]["name"]])
            for p in sc.pods
            if p["metadata"]["name"] in placed
        ]
        outcome.daemon_pods = stage.daemon_pods()
        plan = run_joinery(sc, [*bound, *outcome.daemon_pods], workdir, disruption=False)
        outcome.decision = {k: plan[k] for k in ("nodeClaims", "existingNodes", "unschedulable")}
        outcome.commands = len(plan["nodeClaims"])
        pools = {p["metadata"]["name"]: p for p in sc.pools}
        where: dict[str, str] = {}
        claims = []
        for i, claim in enumerate(plan["nodeClaims"]):
            name = f"{sc.prefix}-c{i}"
            claims.append(claim_node(sc, name, claim, pools))
            where |= {key: name for key in claim["pods"]}
        for entry in plan["existingNodes"]:
            where |= {key: entry["name"] for key in entry["pods"]}
        if claims:
            stage.create_nodes(claims)
            stage.run_daemons(outcome)
        moves = [
            (p, where[f"{sc.namespace}/{p['metadata']['name']}"])
            for p in sc.pending
            if f"{sc.namespace}/{p['metadata']['name']}" in where
        ]
        stage.judge(moves, outcome)
    finally:
        stage.close()
    outcome.seconds = time.monotonic() - began
    return outcome


def describe(sc: Scenario, outcome: Outcome) -> str:
    """A failure report: the seed, the scheduler's words, what Joinery decided, the zones."""
    lines = [f"seed {sc.seed} ({outcome.kind}): {len(outcome.failures)} pod(s) refused"]
    lines += [f"  {f}" for f in outcome.failures]
    lines.append("  decision: " + json.dumps(outcome.decision, sort_keys=True)[:4000])
    zones = {n["metadata"]["name"]: n["metadata"]["labels"].get(ZONE) for n in sc.nodes}
    lines.append(f"  node zones: {zones}")
    return "\n".join(lines)
