"""Watching a disruption from outside, as the ``consolidation`` and ``drift`` scenarios do.

A :class:`DisruptionWatch` thread samples the cluster twice a second while Joinery disrupts
it: the workload's Running pods (did the PDB keep them available?), the NodeClaims and
instances (when did the fleet last change, what does it cost?), the pool's nodes being
disrupted (tainted ``karpenter.sh/disrupted`` or deleting: the figure a budget caps) and the
cluster's DisruptionWorkflow status (rounds run, validation delays waited), read by the same
query ``joinery status`` uses. Samples are read afterwards; nothing here steers Joinery.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from models import conditions
from models import labels as L
from sandbox.scenarios.common import (
    SCENARIO_LABEL,
    Obj,
    Sandbox,
    ScenarioFailed,
    Summary,
    deployment,
    time_left,
)

NODEPOOL_LABEL = L.NODEPOOL


@dataclass(frozen=True)
class RoundState:
    """The DisruptionWorkflow's status query answer, the parts a scenario reads."""

    phase: str = ""
    rounds: int = 0
    validations: int = 0
    last_summary: str = ""

    @property
    def idle_with_nothing_to_do(self) -> bool:
        return self.phase == "Idle" and self.last_summary.startswith("nothing to disrupt")


@dataclass(frozen=True)
class Sample:
    at: float  # time.monotonic()
    running: int  # the workload's pods Running and not deleting
    pods: int  # the workload's pods not deleting (Running or not)
    claims: frozenset[str]  # NodeClaims not being deleted
    deleting_claims: int
    uninitialized_claims: int
    instances: frozenset[str]  # live instance ids
    cost: float  # $/h of the live instances
    disrupting: frozenset[str]  # the pool's nodes tainted karpenter.sh/disrupted or deleting
    rounds: RoundState


def disrupting_nodes(nodes: list[Obj], claims: list[Obj], pool: str) -> set[str]:
    """The pool's Nodes that are being disrupted: tainted, being deleted, or whose NodeClaim
    is being deleted (Karpenter's budgets count exactly these)."""
    deleting_claim_nodes = {
        (c.get("status") or {}).get("nodeName")
        for c in claims
        if c["metadata"].get("deletionTimestamp")
    }
    out: set[str] = set()
    for node in nodes:
        meta = node["metadata"]
        if (meta.get("labels") or {}).get(NODEPOOL_LABEL) != pool:
            continue
        taints = (node.get("spec") or {}).get("taints") or []
        tainted = any(t.get("key") == L.DISRUPTED_TAINT_KEY for t in taints)
        if tainted or meta.get("deletionTimestamp") or meta["name"] in deleting_claim_nodes:
            out.add(meta["name"])
    return out


def _initialized(claim: Obj) -> bool:
    return any(
        c.get("type") == conditions.INITIALIZED and c.get("status") == "True"
        for c in (claim.get("status") or {}).get("conditions") or []
    )


class RoundStatus:
    """Queries the cluster's DisruptionWorkflow (``status``) from a thread of its own."""

    def __init__(self, sandbox: Sandbox) -> None:
        from models import contract

        temporal = sandbox.stack.temporal
        assert temporal is not None
        self._address, self._namespace = temporal.address, temporal.namespace
        self._workflow_id = contract.disruption_id(sandbox.stack.options.cluster_name)
        self._query = contract.QUERY_STATUS
        self._loop = asyncio.new_event_loop()
        self._client: Any = None

    def read(self) -> RoundState:
        return self._loop.run_until_complete(self._read())

    async def _read(self) -> RoundState:
        from temporalio.client import Client

        if self._client is None:
            self._client = await Client.connect(self._address, namespace=self._namespace)
        status: dict[str, Any] = await self._client.get_workflow_handle(self._workflow_id).query(
            self._query
        )
        return RoundState(
            phase=str(status.get("phase", "")),
            rounds=int(status.get("rounds", 0)),
            validations=int(status.get("validations", 0)),
            last_summary=str(status.get("last_summary", "")),
        )

    def close(self) -> None:
        self._loop.close()


@dataclass
class DisruptionWatch:
    """Samples every ``interval`` seconds in a thread until ``stop``; ``samples`` in order."""

    sandbox: Sandbox
    namespace: str
    selector: str
    pool: str = "default"
    interval: float = 0.5
    samples: list[Sample] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> DisruptionWatch:
        self._thread = threading.Thread(target=self._run, name="disruption-watch", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def latest(self) -> Sample | None:
        with self._lock:
            return self.samples[-1] if self.samples else None

    def since(self, moment: float) -> list[Sample]:
        with self._lock:
            return [s for s in self.samples if s.at >= moment]

    def _run(self) -> None:
        status = RoundStatus(self.sandbox)
        try:
            while not self._stop.is_set():
                began = time.monotonic()
                try:
                    sample = self.sample(status.read)
                except Exception as exc:  # a failed read is reported, the watch goes on
                    if len(self.errors) < 20:
                        self.errors.append(f"{type(exc).__name__}: {exc}".splitlines()[0])
                else:
                    with self._lock:
                        self.samples.append(sample)
                self._stop.wait(max(0.0, self.interval - (time.monotonic() - began)))
        finally:
            status.close()

    def sample(self, rounds: Callable[[], RoundState]) -> Sample:
        sb = self.sandbox
        at = time.monotonic()
        pods = [
            p
            for p in sb.pods(self.namespace, self.selector)
            if not p["metadata"].get("deletionTimestamp")
        ]
        claims = sb.nodeclaims()
        nodes = sb.nodes()
        instances = sb.live_instances()
        return Sample(
            at=at,
            running=len(sb.running(pods)),
            pods=len(pods),
            claims=frozenset(
                c["metadata"]["name"] for c in claims if not c["metadata"].get("deletionTimestamp")
            ),
            deleting_claims=sum(1 for c in claims if c["metadata"].get("deletionTimestamp")),
            uninitialized_claims=sum(1 for c in claims if not _initialized(c)),
            instances=frozenset(i.id for i in instances),
            cost=sb.cost_per_hour(instances),
            disrupting=frozenset(disrupting_nodes(nodes, claims, self.pool)),
            rounds=rounds(),
        )


def last_change(samples: list[Sample], key: Callable[[Sample], object]) -> Sample | None:
    """The first sample showing the last value of ``key`` (when it last changed)."""
    if not samples:
        return None
    final = key(samples[-1])
    first = samples[-1]
    for s in reversed(samples):
        if key(s) != final:
            break
        first = s
    return first


def create_nodepool(
    sandbox: Sandbox,
    name: str,
    *,
    requirements: list[Obj],
    disruption: Obj,
    cpu_limit: str = "100",
    node_class: str | None = None,
) -> None:
    """A NodePool of the scenario's own: the default pool's template (its EC2NodeClass and
    requirements) plus ``requirements``, with its own ``disruption`` block. The scenario's
    pods select it by ``karpenter.sh/nodepool``, so the default pool stays as it was. With
    ``node_class``, its template names that node class (of the default's kind) instead."""
    from activities.kubernetes.resources import NODEPOOL

    default = sandbox.custom.get_cluster_custom_object(
        NODEPOOL.group, NODEPOOL.version, NODEPOOL.plural, "default"
    )
    template = default["spec"]["template"]
    template["spec"]["requirements"] = [*template["spec"].get("requirements", []), *requirements]
    if node_class is not None:
        template["spec"]["nodeClassRef"]["name"] = node_class
    body = {
        "apiVersion": f"{NODEPOOL.group}/{NODEPOOL.version}",
        "kind": NODEPOOL.kind,
        "metadata": {"name": name},
        "spec": {"template": template, "limits": {"cpu": cpu_limit}, "disruption": disruption},
    }
    sandbox.custom.create_cluster_custom_object(
        NODEPOOL.group, NODEPOOL.version, NODEPOOL.plural, body
    )


def patch_nodepool(sandbox: Sandbox, name: str, body: Obj) -> None:
    """Merge-patch a NodePool, as ``kubectl patch nodepool NAME --type merge`` does."""
    from activities.kubernetes.resources import NODEPOOL

    sandbox.custom.patch_cluster_custom_object(
        NODEPOOL.group, NODEPOOL.version, NODEPOOL.plural, name, body
    )


def delete_nodepool(sandbox: Sandbox, name: str) -> None:
    from activities.kubernetes.resources import NODEPOOL

    sandbox.delete_custom(NODEPOOL, name)


def pdb(name: str, app: str, max_unavailable: int) -> Obj:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name},
        "spec": {"maxUnavailable": max_unavailable, "selector": {"matchLabels": {"app": app}}},
    }


def _joinery(sandbox: Sandbox, what: str, *args: str) -> str:
    """Run ``joinery ARGS`` with the worker's environment; its stdout, or ScenarioFailed."""
    import subprocess

    from sandbox.dev import REPO, joinery_command

    done = subprocess.run(
        joinery_command(*args),
        capture_output=True,
        text=True,
        env=sandbox.stack.worker_env(),
        cwd=REPO,
        check=False,
        timeout=300,
    )
    if done.returncode != 0:
        raise ScenarioFailed(f"{what} failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


def plan_disruption(sandbox: Sandbox) -> Obj:
    """The ``disruption`` object of ``joinery plan --disruption --kubeconfig`` on the live
    cluster now (``joinery catalog`` against the emulator first): what one round would do,
    and why every other node stays. Raises ScenarioFailed if either command fails."""
    import json

    stack = sandbox.stack
    assert stack.cluster is not None
    catalog = stack.workdir / "plan-catalog.yaml"
    catalog.write_text(
        _joinery(sandbox, "joinery catalog", "catalog", *sandbox.cloud.catalog_args())
    )
    out = _joinery(
        sandbox,
        "joinery plan --disruption",
        "plan",
        "--disruption",
        "--kubeconfig",
        str(stack.cluster.admin_kubeconfig_path),
        "--catalog",
        str(catalog),
    )
    decision: Obj = json.loads(out)["disruption"]
    return decision


def explain(decision: Obj) -> list[str]:
    """One line per node of a plan's ``disruption`` object: its command, or why it stays."""
    lines = [
        f"command {c['reason']}: {', '.join(c['nodes'])} (saves ${c['savingsPerHour']}/h)"
        for c in decision["commands"]
    ]
    lines += [f"blocked {b['node']}: {b['reason']}" for b in decision["blocked"]]
    lines += [f"kept {k['node']}: {k['reason']}" for k in decision["kept"]]
    return lines


def log_plan(sandbox: Sandbox) -> None:
    """Log what ``joinery plan --disruption`` says now (when a scenario did not settle)."""
    try:
        lines = explain(plan_disruption(sandbox))
    except ScenarioFailed as exc:
        lines = [str(exc)]
    for line in lines:
        sandbox.log(f"joinery plan --disruption: {line}")


def round_timeline(samples: list[Sample], since: float) -> dict[str, float]:
    """Seconds from ``since`` to when each round was first seen in each phase (``r3
    Executing``) and to each change in the fleet's size (``claims 6→5, instances 6→6``):
    the scenario's ``breakdown``."""
    out: dict[str, float] = {}
    previous: Sample | None = None
    for s in samples:
        moments = [f"r{s.rounds.rounds} {s.rounds.phase}"]
        if previous is not None and (
            len(s.claims) != len(previous.claims) or len(s.instances) != len(previous.instances)
        ):
            moments.append(
                f"claims {len(previous.claims)}→{len(s.claims)}, instances "
                f"{len(previous.instances)}→{len(s.instances)}"
            )
        for moment in moments:
            key, n = moment, 1
            while key in out and not key.startswith("r"):
                n += 1
                key = f"{moment} #{n}"
            out.setdefault(key, s.at - since)
        previous = s
    return out


def steady(s: Sample, pods: int) -> bool:
    """Nothing in flight: ``pods`` pods Running, every claim initialized, none deleting, no
    node disrupting, and one live instance per claim."""
    return (
        s.pods == pods
        and s.running == pods
        and not s.deleting_claims
        and not s.uninitialized_claims
        and not s.disrupting
        and len(s.instances) == len(s.claims)
    )


@dataclass
class DisruptionRun:
    """What the disruption scenarios share: a namespace, a NodePool and a PDB of their own, a
    Deployment on that pool, the watch, and the cleanup (``with DisruptionRun(...) as run``).

    ``start`` brings the Deployment up and returns the settled fleet; ``began`` (set by the
    scenario when it makes its change) is where the summary's timeline starts."""

    sandbox: Sandbox
    summary: Summary
    scenario: str
    pool: str
    app: str
    deadline: float
    namespace: str = ""
    selector: str = ""
    began: float | None = None
    watch: DisruptionWatch | None = None

    def __enter__(self) -> DisruptionRun:
        self.namespace = self.sandbox.namespace(self.scenario)
        self.selector = f"{SCENARIO_LABEL}={self.scenario}"
        self.watch = DisruptionWatch(self.sandbox, self.namespace, self.selector, self.pool)
        return self

    def setup(
        self,
        *,
        requirements: list[Obj],
        disruption: Obj,
        max_unavailable: int,
        node_class: str | None = None,
    ) -> None:
        create_nodepool(
            self.sandbox,
            self.pool,
            requirements=requirements,
            disruption=disruption,
            node_class=node_class,
        )
        self.sandbox.kube.policy.create_namespaced_pod_disruption_budget(
            self.namespace, pdb(self.app, self.app, max_unavailable)
        )

    def start(self, replicas: int, cpu: str, memory: str, *, one_per_node: bool = False) -> Sample:
        """Create the Deployment on the pool, wait for its pods to run (the summary's
        ``secondsToAllRunning``), start the watch and wait until nothing is in flight."""
        assert self.watch is not None
        self.summary.pods = replicas
        began = time.monotonic()
        self.sandbox.create_deployment(
            self.namespace,
            deployment(
                self.app,
                scenario=self.scenario,
                replicas=replicas,
                cpu=cpu,
                memory=memory,
                one_per_node=one_per_node,
                node_selector={NODEPOOL_LABEL: self.pool},
            ),
        )
        self.sandbox.wait_all_running(
            self.namespace, self.selector, replicas, timeout=time_left(self.deadline)
        )
        self.summary.secondsToAllRunning = time.monotonic() - began
        self.watch.start()
        return self.wait_for("the fleet to settle", lambda s: steady(s, replicas), replicas)

    def wait_for(self, what: str, done: Callable[[Sample], bool], pods: int) -> Sample:
        """Poll the latest sample until ``done`` holds; the first such sample. Logs progress
        and, on a timeout, what ``joinery plan --disruption`` says of the cluster."""
        watch = self.watch
        assert watch is not None
        found: list[Sample] = []

        def check() -> bool:
            s = watch.latest()
            if s is not None and done(s):
                found.append(s)
            return bool(found)

        def progress() -> str:
            s = watch.latest()
            if s is None:
                return "no sample yet"
            return (
                f"{len(s.claims)} claims ({s.deleting_claims} deleting), {len(s.instances)} "
                f"instances ${s.cost:.4f}/h, {len(s.disrupting)} node(s) disrupting, "
                f"{s.running}/{pods} pods Running; round {s.rounds.rounds} {s.rounds.phase}: "
                f"{s.rounds.last_summary}"
            )

        try:
            self.sandbox.wait(
                what, check, timeout=time_left(self.deadline), interval=1.0, progress=progress
            )
        except ScenarioFailed:
            log_plan(self.sandbox)
            raise
        return found[0]

    def __exit__(self, *exc: object) -> None:
        sandbox = self.sandbox
        if self.watch is not None:
            self.watch.stop()
            if self.began is not None:
                self.summary.breakdown = round_timeline(self.watch.since(self.began), self.began)
            if self.watch.errors:
                sandbox.log(f"watch read errors (first): {self.watch.errors[0]}")
        sandbox.delete_deployments(self.namespace, [self.app])
        sandbox.wait(
            "the Deployment's pods to go",
            lambda: not sandbox.pods(self.namespace, self.selector),
            timeout=time_left(self.deadline),
        )
        sandbox.remove_empty_nodes(timeout=time_left(self.deadline))
        delete_nodepool(sandbox, self.pool)
        sandbox.core.delete_namespace(self.namespace)
