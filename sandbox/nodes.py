"""Simulated kubelets: every launched NodeClaim's instance "boots" and registers a Node.

In a real cluster the instance's kubelet creates the Node, with the labels and taints the
launch put in its user data. Here ``NodeSimulator`` does it once a NodeClaim carries a
``status.providerID`` (set by the launch activity against the emulated EC2): the Node gets
the claim's labels and taints, Karpenter's ``karpenter.sh/unregistered`` taint, the claim's
capacity, and the kwok annotation, so kwok marks it Ready and runs the pods bound to it.
Joinery's registration phase then finds it by providerID, exactly as in production.

Every instance's kubelet registers on its own, so a burst's Nodes appear together. The
simulator creates them on a pool of threads (``REGISTER_THREADS``): one at a time, on a
loaded 2-core box a 1,000-claim burst's claims waited for their Node p50 121 s, p99 260 s
after their launch (docs/performance.md), a wait no real cluster has.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from activities.kubernetes import nodeclaims, raw
from activities.kubernetes.client import Kube
from activities.kubernetes.errors import AlreadyExists, KubernetesError
from activities.kubernetes.resources import NODECLAIM
from models import labels as L
from sandbox.cluster import KWOK_NODE_ANNOTATION, KWOK_NODE_ANNOTATION_VALUE

log = logging.getLogger(__name__)

Obj = dict[str, Any]

DEFAULT_CAPACITY = {"cpu": "2", "memory": "8Gi", "pods": "110"}
# Nodes being created at once (kubelets registering together).
REGISTER_THREADS = 16
# The simulated kubelets' name to the API server (its audit log tells clients apart by it).
USER_AGENT = "joinery-sandbox-nodes"


def node_name(provider_id: str) -> str:
    """EKS-style resource name: the instance id (``aws:///us-east-1a/i-0abc`` -> ``i-0abc``)."""
    return provider_id.rstrip("/").rsplit("/", 1)[-1]


def node_for(claim: Mapping[str, Any], addresses: list[dict[str, str]] | None = None) -> Obj:
    """The Node a kubelet on ``claim``'s instance would register; ``addresses`` are its
    ``status.addresses`` (the instance's, :func:`sandbox.ec2.ipv6.node_addresses`)."""
    status = claim.get("status") or {}
    spec = claim.get("spec") or {}
    provider_id = str(status["providerID"])
    name = node_name(provider_id)
    labels: dict[str, str] = {}
    # Single-valued In requirements become labels, as Karpenter's launch does.
    for requirement in spec.get("requirements") or []:
        values = requirement.get("values") or []
        if requirement.get("operator") == "In" and len(values) == 1:
            labels[requirement["key"]] = values[0]
    labels.update((claim.get("metadata") or {}).get("labels") or {})
    labels.setdefault("kubernetes.io/os", "linux")
    labels.setdefault("kubernetes.io/arch", "amd64")
    labels["kubernetes.io/hostname"] = name
    taints = [
        *(spec.get("taints") or []),
        *(spec.get("startupTaints") or []),
        {"key": L.UNREGISTERED_TAINT_KEY, "effect": "NoExecute"},
    ]
    capacity = dict(status.get("capacity") or DEFAULT_CAPACITY)
    allocatable = dict(status.get("allocatable") or capacity)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": labels,
            "annotations": {KWOK_NODE_ANNOTATION: KWOK_NODE_ANNOTATION_VALUE},
        },
        "spec": {"providerID": provider_id, "taints": taints},
        "status": {
            "capacity": capacity,
            "allocatable": allocatable,
            **({"addresses": addresses} if addresses else {}),
        },
    }


# The Node a claim's machine registers, or None while it cannot (not running yet): EC2's
# is ``node_for``; Azure's reads the emulated VM (``sandbox.azure.vm_nodes``).
NodeFor = Callable[[Mapping[str, Any]], Obj | None]


def register(
    admin: Kube, claim: Mapping[str, Any], addresses: list[dict[str, str]] | None = None
) -> Obj:
    """Create the claim's Node (idempotent: an existing one is returned)."""
    return register_node(admin, node_for(claim, addresses))


def register_node(admin: Kube, node: Obj) -> Obj:
    """Create ``node`` (idempotent: an existing one is returned)."""
    try:
        return raw.call(admin.core.create_node, node)
    except AlreadyExists:
        return raw.call(admin.core.read_node, node["metadata"]["name"])


class NodeSimulator:
    """Registers Nodes for launched NodeClaims after ``boot_seconds``, on a background thread.

    ``should_register(claim)`` returning False simulates an instance that never joins (for
    registration-timeout tests). ``make_node`` builds the Node from the claim's machine (the
    emulated Azure VM's: ``sandbox.azure.vm_nodes``), None while it does not run; without
    it, the Node is the claim's (``node_for``). Runs until ``stop()``; also a context manager.
    """

    def __init__(
        self,
        admin: Kube,
        *,
        boot_seconds: float = 0.0,
        interval: float = 0.25,
        should_register: Callable[[Mapping[str, Any]], bool] = lambda _claim: True,
        addresses: Callable[[Mapping[str, Any]], list[dict[str, str]]] | None = None,
        make_node: NodeFor | None = None,
    ) -> None:
        # the instance's addresses, as its kubelet reports them (none: the Node has none)
        self._addresses = addresses
        self._admin = admin
        self._make_node = make_node
        self._boot_seconds = boot_seconds
        self._interval = interval
        self._should_register = should_register
        self._first_seen: dict[str, float] = {}
        self._registered: set[str] = set()
        self._registering: set[str] = set()
        # claims deleted (or deleting) before their kubelet registered: an instance
        # terminated before it joined never registers
        self._gone: set[str] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="node-simulator", daemon=True)
        self._kubelets = ThreadPoolExecutor(REGISTER_THREADS, thread_name_prefix="kubelet")

    @property
    def registered(self) -> frozenset[str]:
        """providerIDs whose Node this simulator created."""
        with self._lock:
            return frozenset(self._registered)

    def start(self) -> NodeSimulator:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        self._kubelets.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> NodeSimulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def step(self) -> None:
        """One pass over a fresh list: every launched, not-deleting claim whose boot time
        has passed gets its Node (each from a kubelet thread)."""
        claims, _ = nodeclaims.list_(self._admin)
        for claim in claims:
            self._consider(claim)

    def _consider(self, claim: Mapping[str, Any]) -> bool:
        """Have ``claim``'s Node registered if it is due (by a kubelet thread); False while
        it waits for its boot time."""
        provider_id = (claim.get("status") or {}).get("providerID")
        if not provider_id:
            return True
        if (claim.get("metadata") or {}).get("deletionTimestamp"):
            self._forget(claim)
            return True
        with self._lock:
            if provider_id in self._registered or provider_id in self._registering:
                return True
        now = time.monotonic()
        first = self._first_seen.setdefault(provider_id, now)
        if now - first < self._boot_seconds or not self._should_register(claim):
            return False
        with self._lock:
            self._registering.add(provider_id)
        self._kubelets.submit(self._register, claim, str(provider_id))
        return True

    def _forget(self, claim: Mapping[str, Any]) -> None:
        """The claim is deleting or gone: a registration still queued for it is dropped."""
        provider_id = (claim.get("status") or {}).get("providerID")
        if provider_id:
            with self._lock:
                self._gone.add(str(provider_id))

    def _register(self, claim: Mapping[str, Any], provider_id: str) -> None:
        """One kubelet's registration, tried again until it holds or the simulator stops;
        none once the claim is deleting (its instance is being terminated)."""
        while not self._stop.is_set():
            with self._lock:
                if provider_id in self._gone:
                    self._registering.discard(provider_id)
                    return
            try:
                if self._make_node is None and self._addresses is not None:
                    register(self._admin, claim, self._addresses(claim))
                elif self._make_node is None:
                    register(self._admin, claim)
                else:
                    node = self._make_node(claim)
                    if node is None:
                        self._stop.wait(self._interval)  # the machine is not running (yet)
                        continue
                    register_node(self._admin, node)
            except Exception as exc:  # the API server busy or restarting: a kubelet retries
                log.debug("node simulator: registering %s: %s", provider_id, exc)
                self._stop.wait(self._interval)
                continue
            with self._lock:
                self._registered.add(provider_id)
                self._registering.discard(provider_id)
            log.info("registered node %s for %s", node_name(provider_id), claim["metadata"]["name"])
            return

    def _run(self) -> None:
        """List the claims once, then follow their watch; claims still booting are looked
        at again at least every ``interval`` (rounded up to the watch's 1-second timeout).

        It listed every NodeClaim every 0.25 s: at 1,000 claims that was megabytes a second
        for the API server and this process, on the cores Joinery runs on
        (docs/performance.md)."""
        while not self._stop.is_set():
            booting: dict[str, Mapping[str, Any]] = {}
            try:
                claims, version = nodeclaims.list_(self._admin)
                for claim in claims:
                    self._remember(booting, claim, self._consider(claim))
                while not self._stop.is_set():
                    for kind, claim in raw.watch(
                        self._admin.custom.list_cluster_custom_object,
                        NODECLAIM.group,
                        NODECLAIM.version,
                        NODECLAIM.plural,
                        resource_version=version,
                        timeout_seconds=max(1, round(self._interval)),
                    ):
                        if kind == "ERROR":
                            raise KubernetesError(str(claim.get("message") or "watch error"))
                        version = str(claim["metadata"].get("resourceVersion") or version)
                        if kind in (raw.ADDED, raw.MODIFIED):
                            self._remember(booting, claim, self._consider(claim))
                        elif kind == raw.DELETED:
                            booting.pop(str(claim["metadata"].get("name")), None)
                            self._forget(claim)
                        if self._stop.is_set():
                            return
                    for waiting in list(booting.values()):
                        self._remember(booting, waiting, self._consider(waiting))
            except Exception as exc:  # re-list after any failure
                log.debug("node simulator: %s", exc)
                self._stop.wait(self._interval)

    @staticmethod
    def _remember(
        booting: dict[str, Mapping[str, Any]], claim: Mapping[str, Any], done: bool
    ) -> None:
        name = str((claim.get("metadata") or {}).get("name"))
        if done:
            booting.pop(name, None)
        else:
            booting[name] = claim
