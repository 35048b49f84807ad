"""What every scenario does to the sandbox: workloads, waits, counts, cleanup, the summary.

Scenarios act as a cluster user and an outside observer would: they create Deployments with
the admin kubeconfig, watch Pods, NodeClaims and Nodes, read the emulated cloud (EC2 or Azure,
through ``cloud_view``) for what is really running and what it costs, and delete NodeClaims
the way ``kubectl delete nodeclaim`` does. They never call Joinery's code: whatever happens
is the worker's doing.
"""

from __future__ import annotations

import contextlib
import json
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException

from activities.ec2.instances import InstanceProvider
from activities.kubernetes.resources import NODECLAIM, CustomResource
from sandbox.dev import DevStack
from sandbox.scenarios import cloud_view
from sandbox.scenarios.cloud_view import CloudView, Machine

# What scenarios read of an instance or a VM (the name EC2's scenarios knew it by).
Instance = Machine

Obj = dict[str, Any]
SCENARIO_LABEL = "joinery.dev/scenario"
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"
ZONE_LABEL = "topology.kubernetes.io/zone"
HOSTNAME_LABEL = "kubernetes.io/hostname"


class ScenarioFailed(Exception):
    """A step did not hold; the message says which and why (one line)."""


@dataclass
class Summary:
    """The one-line JSON a scenario prints last; ``ok`` only if every check held."""

    scenario: str
    pods: int = 0
    nodes: int = 0
    costPerHour: float = 0.0
    secondsToAllRunning: float | None = None
    instancesLeftRunning: int = -1
    # The scenario ended with its fleet still serving its workload, on purpose (``scale``
    # with ``JOINERY_SCALE_RETIRE=0``): the final cleanup leaves it to the stack's teardown,
    # which stops the emulator, instead of waiting for nodes that cannot empty.
    fleetKept: bool = False
    ok: bool = False
    failures: list[str] = field(default_factory=list)
    # Optional, printed only when set: seconds per milestone (burst: ``Sandbox.timeline``).
    breakdown: dict[str, float] = field(default_factory=dict)
    # Optional scenario-specific figures, printed as top-level keys (consolidation, drift).
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        out: dict[str, Any] = {
            "scenario": self.scenario,
            "pods": self.pods,
            "nodes": self.nodes,
            "costPerHour": round(self.costPerHour, 5),
            "secondsToAllRunning": (
                None if self.secondsToAllRunning is None else round(self.secondsToAllRunning, 2)
            ),
            "instancesLeftRunning": self.instancesLeftRunning,
            **({"fleetKept": True} if self.fleetKept else {}),
            "ok": self.ok,
            "failures": self.failures,
        }
        out.update((k, v) for k, v in self.extra.items() if k not in out)
        if self.breakdown:
            out["breakdown"] = {k: round(v, 1) for k, v in self.breakdown.items()}
        return json.dumps(out, separators=(",", ":"))


class Sandbox:
    """A scenario's handle on a running ``DevStack``."""

    def __init__(self, stack: DevStack, log: Callable[[str], None]) -> None:
        assert stack.admin
        self.stack = stack
        self.log = log
        self.kube = stack.admin
        self.core = stack.admin.core
        self.custom = stack.admin.custom
        self.apps = k8s.AppsV1Api(stack.admin.api_client)
        self.region = stack.options.region
        self.cloud: CloudView = cloud_view.for_stack(stack)

    def close(self) -> None:
        """Stop what the scenario's view of the cloud started."""
        self.cloud.close()

    # -- the EC2 emulator, for the scenarios that exist on AWS only ----------------------------

    def _aws(self) -> Any:
        if self.stack.aws is None or self.stack.emulation is None:
            raise ScenarioFailed("this scenario runs on the EC2 emulator only (--provider aws)")
        return self.stack.aws

    @property
    def ec2(self) -> Any:
        return self._aws().ec2

    @property
    def sqs(self) -> Any:
        return self._aws().sqs

    @property
    def instances(self) -> InstanceProvider:
        return InstanceProvider(self._aws().ec2, self.stack.options.cluster_name)

    @property
    def emulation(self) -> Any:
        self._aws()
        return self.stack.emulation

    # -- namespaces and workloads -----------------------------------------------------------

    def namespace(self, prefix: str) -> str:
        name = f"{prefix}-{uuid.uuid4().hex[:6]}"
        self.core.create_namespace({"metadata": {"name": name}})
        # Pods need the namespace's default ServiceAccount (the controller-manager adds it).
        self.wait(
            f"namespace {name} ready",
            lambda: _exists(lambda: self.core.read_namespaced_service_account("default", name)),
            timeout=30,
        )
        return name

    def create_deployment(self, namespace: str, body: Obj) -> None:
        self.apps.create_namespaced_deployment(namespace, body)

    def delete_deployments(self, namespace: str, names: Iterable[str]) -> None:
        for name in names:
            try:
                self.apps.delete_namespaced_deployment(
                    name, namespace, propagation_policy="Foreground"
                )
            except ApiException as exc:
                if exc.status != 404:
                    raise

    def pods(self, namespace: str, selector: str) -> list[Obj]:
        out = self.core.list_namespaced_pod(namespace, label_selector=selector)
        return [self.kube.api_client.sanitize_for_serialization(p) for p in out.items]

    @staticmethod
    def running(pods: Iterable[Obj]) -> list[Obj]:
        return [
            p
            for p in pods
            if (p.get("status") or {}).get("phase") == "Running"
            and (p.get("spec") or {}).get("nodeName")
            and not (p.get("metadata") or {}).get("deletionTimestamp")
        ]

    def wait_all_running(
        self, namespace: str, selector: str, expected: int, *, timeout: float
    ) -> list[Obj]:
        """Wait until exactly ``expected`` pods match and all are Running; returns them."""
        found: list[Obj] = []

        def done() -> bool:
            nonlocal found
            pods = [
                p
                for p in self.pods(namespace, selector)
                if not (p.get("metadata") or {}).get("deletionTimestamp")
            ]
            found = self.running(pods)
            return len(pods) == expected and len(found) == expected

        self.wait(
            f"{expected} pods ({selector}) Running",
            done,
            timeout=timeout,
            progress=lambda: (
                f"{len(found)}/{expected} Running, {len(self.nodeclaims())} NodeClaims"
            ),
        )
        return found

    # -- nodes, claims, instances ----------------------------------------------------------

    def nodeclaims(self) -> list[Obj]:
        result = self.custom.list_cluster_custom_object(
            NODECLAIM.group, NODECLAIM.version, NODECLAIM.plural
        )
        return list(result.get("items") or [])

    def nodes(self) -> list[Obj]:
        return [
            self.kube.api_client.sanitize_for_serialization(n) for n in self.core.list_node().items
        ]

    def live_instances(self) -> list[Instance]:
        """Instances (VMs) Joinery launched for this cluster that are not terminated."""
        return self.cloud.live()

    def cost_per_hour(self, instances: Iterable[Instance]) -> float:
        total = 0.0
        for i in instances:
            price = self.cloud.price(i)
            if price != float("inf"):
                total += price
        return total

    def delete_nodeclaim(self, name: str) -> None:
        self.delete_custom(NODECLAIM, name)

    def delete_custom(self, resource: CustomResource, name: str) -> None:
        """Delete a cluster-scoped custom object (``kubectl delete``); gone is fine."""
        try:
            self.custom.delete_cluster_custom_object(
                resource.group, resource.version, resource.plural, name
            )
        except ApiException as exc:
            if exc.status != 404:
                raise

    def workload_pods_on(self, node_name: str) -> list[Obj]:
        """Pods on a node that would stop it from being empty (DaemonSet pods do not count)."""
        out = self.core.list_pod_for_all_namespaces(field_selector=f"spec.nodeName={node_name}")
        pods = [self.kube.api_client.sanitize_for_serialization(p) for p in out.items]
        return [
            p
            for p in pods
            if not any(
                ref.get("kind") == "DaemonSet"
                for ref in (p["metadata"].get("ownerReferences") or [])
            )
            and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
        ]

    def remove_empty_nodes(self, *, timeout: float) -> int:
        """Delete the NodeClaims of empty nodes until none is left; returns how many.

        Stands in for consolidation (not built yet): ``kubectl delete nodeclaim`` on every
        claim whose node carries no workload pods, then wait for Joinery to drain, terminate
        the instance and drop the finalizer.
        """
        deleted: set[str] = set()

        def sweep() -> bool:
            claims = self.nodeclaims()
            for claim in claims:
                name = claim["metadata"]["name"]
                if name in deleted or claim["metadata"].get("deletionTimestamp"):
                    continue
                node_name = (claim.get("status") or {}).get("nodeName")
                if node_name and self.workload_pods_on(node_name):
                    continue
                self.delete_nodeclaim(name)
                deleted.add(name)
            return not claims

        self.wait("every NodeClaim removed", sweep, timeout=timeout, interval=1.0)
        return len(deleted)

    def wait_instances_terminated(self, *, timeout: float) -> int:
        left: list[Instance] = []

        def done() -> bool:
            nonlocal left
            left = self.live_instances()
            return not left

        with contextlib.suppress(ScenarioFailed):
            self.wait("every instance terminated", done, timeout=timeout, interval=1.0)
        return len(left)

    def wait_leftovers_gone(self, *, timeout: float) -> dict[str, int]:
        """What launches made besides machines (Azure: NICs, disks) still there after
        ``timeout``."""
        left: dict[str, int] = {}

        def done() -> bool:
            nonlocal left
            left = self.cloud.leftovers()
            return not any(left.values())

        with contextlib.suppress(ScenarioFailed):
            self.wait("every NIC and disk deleted", done, timeout=timeout, interval=1.0)
        return left

    # -- timings -------------------------------------------------------------------------------

    def timeline(self, namespace: str, selector: str, since: float) -> dict[str, float]:
        """Seconds from ``since`` (wall clock) to each milestone, read off the objects.

        Kubernetes timestamps have whole seconds, so each figure is good to about 1 s. A
        milestone some object has not reached yet is left out. Counts the pods ``selector``
        matches (created by their ReplicaSets, so not all at once), the NodeClaims created
        since ``since`` and their Nodes.
        """
        claims = [
            c
            for c in self.nodeclaims()
            if (_at(c["metadata"].get("creationTimestamp")) or 0.0) >= int(since)
        ]
        node_names = {(c.get("status") or {}).get("nodeName") for c in claims}
        nodes = [n for n in self.nodes() if n["metadata"]["name"] in node_names]
        pods = self.pods(namespace, selector)
        created = [_at(c["metadata"].get("creationTimestamp")) for c in claims]
        scheduled = [_condition_at(p, "PodScheduled") for p in pods]
        moments: dict[str, float | None] = {
            "allPodsCreated": _latest([_at(p["metadata"].get("creationTimestamp")) for p in pods]),
            "firstNodeClaim": min((t for t in created if t is not None), default=None),
            "lastNodeClaim": _latest(created),
            "allLaunched": _latest([_condition_at(c, "Launched") for c in claims]),
            "allRegistered": _latest([_condition_at(c, "Registered") for c in claims]),
            "allNodesReady": (
                _latest([_condition_at(n, "Ready") for n in nodes])
                if len(nodes) == len(claims)
                else None
            ),
            "allInitialized": _latest([_condition_at(c, "Initialized") for c in claims]),
            "firstScheduled": min((t for t in scheduled if t is not None), default=None),
            "allScheduled": _latest(scheduled),
        }
        return {k: max(0.0, t - since) for k, t in moments.items() if t is not None}

    # -- interruption ------------------------------------------------------------------------

    def send_spot_interruption(self, instance: Instance) -> str:
        """A spot interruption of one machine, as its cloud announces it (EC2: the EventBridge
        warning on the interruption queue; Azure: an eviction notice on its Node)."""
        return self.cloud.interrupt(instance)

    # -- waiting -------------------------------------------------------------------------------

    def wait(
        self,
        what: str,
        check: Callable[[], bool],
        *,
        timeout: float,
        interval: float = 0.5,
        progress: Callable[[], str] | None = None,
    ) -> None:
        """Poll ``check`` until true; ScenarioFailed after ``timeout``. Worker death fails fast."""
        began = time.monotonic()
        last_report = began
        while True:
            worker = self.stack.worker
            if worker is not None and not worker.alive():
                raise ScenarioFailed(
                    f"the worker exited ({worker.popen.returncode}) while waiting for {what}; "
                    f"last log lines: {worker.log_tail(5)!r}"
                )
            if check():
                return
            now = time.monotonic()
            if now - began > timeout:
                extra = f" ({progress()})" if progress else ""
                raise ScenarioFailed(f"timed out after {timeout:.0f}s waiting for {what}{extra}")
            if progress and now - last_report > 15:
                self.log(f"waiting for {what}: {progress()}")
                last_report = now
            time.sleep(interval)


def _exists(read: Callable[[], object]) -> bool:
    try:
        read()
    except ApiException as exc:
        if exc.status == 404:
            return False
        raise
    return True


def _at(stamp: object) -> float | None:
    """A Kubernetes timestamp (RFC 3339 text or a datetime) as seconds since the epoch."""
    if not stamp:
        return None
    when = stamp if isinstance(stamp, datetime) else datetime.fromisoformat(str(stamp))
    return when.timestamp()


def _condition_at(obj: Obj, kind: str) -> float | None:
    """When ``obj``'s condition ``kind`` last became True; None if it is not True."""
    for condition in (obj.get("status") or {}).get("conditions") or []:
        if condition.get("type") == kind and condition.get("status") == "True":
            return _at(condition.get("lastTransitionTime"))
    return None


def _latest(times: Sequence[float | None]) -> float | None:
    """The last of ``times``; None if there are none or one is missing (not reached yet)."""
    known = [t for t in times if t is not None]
    return max(known) if known and len(known) == len(times) else None


def deployment(
    name: str,
    *,
    scenario: str,
    replicas: int,
    cpu: str,
    memory: str,
    zonal_spread: bool = False,
    one_per_node: bool = False,
    extra_labels: Mapping[str, str] | None = None,
    node_selector: Mapping[str, str] | None = None,
    extra_requests: Mapping[str, str] | None = None,
) -> Obj:
    """A pause-container Deployment with requests (``extra_requests``: extended resources,
    requested as limits too, as Kubernetes requires of them) and, optionally, spread
    constraints."""
    labels = {"app": name, SCENARIO_LABEL: scenario, **(extra_labels or {})}
    spec: Obj = {
        "terminationGracePeriodSeconds": 0,
        "containers": [
            {
                "name": "app",
                "image": PAUSE_IMAGE,
                "resources": {"requests": {"cpu": cpu, "memory": memory}},
            }
        ],
    }
    if extra_requests:
        resources = spec["containers"][0]["resources"]
        resources["requests"].update(extra_requests)
        resources["limits"] = dict(extra_requests)
    if node_selector:
        spec["nodeSelector"] = dict(node_selector)
    if zonal_spread:
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": ZONE_LABEL,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": name}},
            }
        ]
    if one_per_node:
        spec["affinity"] = {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "topologyKey": HOSTNAME_LABEL,
                        "labelSelector": {"matchLabels": {"app": name}},
                    }
                ]
            }
        }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": labels}, "spec": spec},
        },
    }


def per_zone(pods: Iterable[Obj], zone_of_node: Mapping[str, str]) -> dict[str, int]:
    """How many of ``pods`` run in each zone."""
    counts: dict[str, int] = {}
    for pod in pods:
        zone = zone_of_node.get(pod["spec"]["nodeName"], "")
        counts[zone] = counts.get(zone, 0) + 1
    return dict(sorted(counts.items()))


# -- the shape most scenarios share: workloads up, all Running, workloads and nodes gone -----

Workload = tuple[str, int, str, str]  # Deployment name, replicas, cpu, memory


def time_left(deadline: float) -> float:
    """Seconds until ``deadline`` (``time.monotonic()``), but at least 10 for the next step."""
    return max(10.0, deadline - time.monotonic())


@dataclass
class Started:
    """Workloads that ``start_workloads`` brought up."""

    namespace: str
    selector: str
    pods: list[Obj]  # all Running
    instances: list[Instance]  # live when the last pod was Running
    created_at: float  # wall clock (time.time()) just before the first Deployment was created


def start_workloads(
    sandbox: Sandbox,
    summary: Summary,
    scenario: str,
    workloads: Sequence[Workload],
    *,
    deadline: float,
    zonal_spread: bool = False,
    one_per_node: bool = False,
    extra_requests: Mapping[str, str] | None = None,
) -> Started:
    """Create every Deployment at once in a new namespace, then wait until all pods Run.

    Fills in the summary's ``pods``, ``secondsToAllRunning`` (from the first create),
    ``nodes`` and ``costPerHour``; Running pods without any launched instance are a failure.
    """
    namespace = sandbox.namespace(scenario)
    expected = sum(replicas for _, replicas, _, _ in workloads)
    summary.pods = expected
    selector = f"{SCENARIO_LABEL}={scenario}"
    created_at = time.time()
    began = time.monotonic()
    for name, replicas, cpu, memory in workloads:
        sandbox.create_deployment(
            namespace,
            deployment(
                name,
                scenario=scenario,
                replicas=replicas,
                cpu=cpu,
                memory=memory,
                zonal_spread=zonal_spread,
                one_per_node=one_per_node,
                extra_requests=extra_requests,
            ),
        )
    sandbox.log(f"created {expected} pods in {namespace}; waiting for Joinery to launch nodes")
    pods = sandbox.wait_all_running(namespace, selector, expected, timeout=time_left(deadline))
    summary.secondsToAllRunning = time.monotonic() - began
    instances = sandbox.live_instances()
    summary.nodes = len(instances)
    summary.costPerHour = sandbox.cost_per_hour(instances)
    sandbox.log(
        f"all {expected} pods Running after {summary.secondsToAllRunning:.1f}s on "
        f"{summary.nodes} node(s): "
        + ", ".join(f"{i.instance_type}/{i.capacity_type}/{i.zone}" for i in instances)
        + f" (${summary.costPerHour:.4f}/h)"
    )
    if not instances:
        summary.failures.append("pods are Running but no instance was launched")
    return Started(namespace, selector, pods, instances, created_at)


def remove_workloads(
    sandbox: Sandbox, started: Started, workloads: Sequence[Workload], *, deadline: float
) -> None:
    """Delete the Deployments, then the emptied nodes' NodeClaims, and wait for the instances
    to be terminated (a leak shows up as the summary's ``instancesLeftRunning``)."""
    namespace, selector = started.namespace, started.selector
    sandbox.delete_deployments(namespace, [name for name, _, _, _ in workloads])
    sandbox.wait(
        "the Deployments' pods to go",
        lambda: not sandbox.pods(namespace, selector),
        timeout=time_left(deadline),
    )
    removed = sandbox.remove_empty_nodes(timeout=time_left(deadline))
    sandbox.log(f"deleted {removed} empty NodeClaim(s); waiting for their instances to go")
    left = sandbox.wait_instances_terminated(timeout=time_left(deadline))
    if not left:
        sandbox.log("every instance is terminated")
    sandbox.core.delete_namespace(namespace)
