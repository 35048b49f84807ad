"""The rules that turn cluster events into workflow starts and signals.

The threads doing list + watch, and the hand-offs to the asyncio loop that owns the Temporal
client and to the status writer, are the plumbing in ``worker.running.watch``; here is what
each event means. Every action is idempotent (signals set flags, starts use USE_EXISTING),
so several workers may watch at once.

- Pods: an unschedulable pod → ``pods_pending`` to the provisioner, at most one signal in
  flight and one per ``PODS_PENDING_SPACING``: pods that turn unschedulable meanwhile get one
  follow-up (a burst of 1,000 pods is a few signals a second, not 1,000 workflow tasks); every
  ``resync`` seconds,
  any still-unschedulable pod triggers again; ``karpenter_pods_state``.
- NodeClaims: a new claim → its workflow is started (covers a crash between create and
  start, and claims made by others); a deletionTimestamp → ``deleted``.
- Nodes: a Node not yet initialized → ``node_changed`` hint to its claim's workflow; a
  deletionTimestamp → ``deleted("Node")``. A Node or NodeClaim that starts going away →
  ``pods_pending`` too: the round plans for its pods before they are evicted.
- NodePools: a spec change (new generation) → ``pods_pending`` (a new pool may fit waiting
  pods); every change → the status reporter. Node classes and NodeClaims → the status
  reporter (NodeClass resolution; a pool's readiness and usage).
- Interruption source (the provider's, when configured): events → ``interrupted`` on the
  claim's workflow.
- NodeClaim status: a claim stamped with another template-hash version is re-stamped with
  its pool's hash (never drift); a pod bound to or leaving a node moves its claim's
  ``status.lastPodEventTime`` (deduplicated). Writes go through one writer thread.
- Disruption: a pod bound to, moved from or deleted off a node, a node added, initialized
  or deleted, a NodePool spec change → ``cluster_changed`` to the cluster's disruption
  workflow, coalesced to one signal per ``DISRUPTION_COALESCE`` (the workflow debounces too).
  The signal names the NodeClaims whose Nodes went away or whose ``InstanceTerminating``
  turned True meanwhile (their budget is free: the workflow's next round need not wait).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from temporalio.client import Client

from activities.cloud import kinds
from activities.cloud.interruption import DRAINING_EVENTS, InterruptionEvent
from activities.cloud.kinds import NodeClassKind
from activities.cloud.provider import CloudProvider
from activities.kubernetes import conditions as cond
from activities.kubernetes import raw
from activities.kubernetes.client import Kube
from activities.kubernetes.errors import translate
from activities.kubernetes.node_index import NodeIndex
from activities.kubernetes.nodeclass_store import NodeClassStore
from activities.kubernetes.object_cache import WatchedObjects
from activities.kubernetes.resources import NODECLAIM, NODEPOOL
from activities.lifecycle import interruption_events
from activities.lifecycle.start import start_lifecycle
from activities.planning.cluster_state import unschedulable
from activities.planning.summary import summary_of_claim
from activities.status import claims as claim_status
from models import contract
from models import labels as L
from models.conditions import INSTANCE_TERMINATING
from worker.running import metrics
from worker.running.heartbeats import essentials
from worker.running.metrics import PROVISIONING_SIGNALS
from worker.running.status_reporter import StatusReporter
from worker.running.watch import (
    LoopCalls,
    StatusWriter,
    Streams,
    WatchTarget,
    ignore_missing,
    synced_to,
)
from worker.running.watch_metrics import NodeStates, PodStates, PoolStates
from workflows.provisioner import BATCH_IDLE_SECONDS

log = logging.getLogger(__name__)
Obj = dict[str, Any]
DISRUPTION_COALESCE = 1.0
# At most one pods_pending signal per this many seconds. Half the provisioner's batch idle
# time, so a burst still reaches it as signals less than the idle time apart and the round
# waits for the burst to end, as one signal per pod did (a signal's round trip is milliseconds:
# without spacing a burst still sent about one per pod, 545 in its first minute at 1,000).
# The default's; a worker given BATCH_IDLE_DURATION spaces by half of that.
PODS_PENDING_SPACING = BATCH_IDLE_SECONDS / 2


def pod_healthy(pod: Obj) -> bool:
    """Running and Ready: what a PodDisruptionBudget counts as healthy."""
    status = pod.get("status") or {}
    ready = any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in status.get("conditions") or []
    )
    return status.get("phase") == "Running" and ready


@dataclass
class Watchers:
    kube: Kube
    client: Client
    loop: asyncio.AbstractEventLoop
    cluster: str
    task_queue: str
    search_attributes: bool = False
    # The cluster's cloud (activities.cloud): its node-class kind, its interruption source.
    cloud: CloudProvider | None = None
    status: StatusReporter | None = None
    # The launches' node-class reads (activities/kubernetes/nodeclass_store.py): kept
    # current from this watch.
    nodeclass_store: NodeClassStore | None = None
    # The registration checks' Nodes by providerID (activities/kubernetes/node_index.py):
    # kept current from the Node watch.
    node_index: NodeIndex | None = None
    # Pods, Nodes and NodeClaims for the provisioning round (activities/kubernetes/
    # object_cache.py): kept current from these watches.
    watched: WatchedObjects | None = None
    resync_seconds: float = 30.0
    adopt_delay: float = 5.0
    pods_pending_spacing: float = PODS_PENDING_SPACING
    stop: threading.Event = field(default_factory=threading.Event)
    _claims_by_provider: dict[str, str] = field(default_factory=dict)
    _deleting: set[str] = field(default_factory=set)
    _last_hint: dict[str, float] = field(default_factory=dict)
    _pods: PodStates = field(default_factory=PodStates)
    _node_states: NodeStates = field(default_factory=NodeStates)
    _pool_states: PoolStates = field(default_factory=PoolStates)
    _pending_on_list: bool = False
    _pool_generations: dict[str, int] = field(default_factory=dict)
    # Node-class name -> what of it drift reads (its generation, its resolved ids).
    _class_drift_facts: dict[str, str] = field(default_factory=dict)
    _bound: dict[str, str] = field(default_factory=dict)  # "ns/name" -> node
    _healthy: dict[str, bool] = field(default_factory=dict)  # "ns/name" -> Running and Ready
    _initialized: set[str] = field(default_factory=set)
    # Initialized Nodes as last handled, without what heartbeats change
    # (worker/running/heartbeats.py).
    _node_seen: dict[str, Obj] = field(default_factory=dict)
    _disruption_pending: bool = False
    _disruption_lock: threading.Lock = field(default_factory=threading.Lock)
    # NodeClaims whose Nodes went away (or whose instances began terminating) since the last
    # cluster_changed was sent: named in it
    _disruption_gone: set[str] = field(default_factory=set)
    # NodeClaims already named for their InstanceTerminating condition
    _terminating: set[str] = field(default_factory=set)
    _provisioning_lock: threading.Lock = field(default_factory=threading.Lock)
    _provisioning_in_flight: bool = False
    _provisioning_again: bool = False
    _pools: dict[str, Obj] = field(default_factory=dict)
    _claim_by_node: dict[str, str] = field(default_factory=dict)
    # NodeClaim name -> (instance type, zone) from its labels: what a spot interruption marks.
    _claim_offering: dict[str, tuple[str, str]] = field(default_factory=dict)
    _pod_event_sent: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._streams = Streams(self.stop)
        self._calls = LoopCalls(self.loop, self.stop)
        self._writer = StatusWriter(self.stop)

    @property
    def synced(self) -> set[str]:
        """The watches that have listed their resource whole at least once."""
        return self._streams.synced

    @property
    def nodeclass_kind(self) -> NodeClassKind:
        """The cluster's node-class kind: its provider's (the default provider's without)."""
        return self.cloud.nodeclass_kind if self.cloud is not None else kinds.DEFAULT

    def start(self) -> Watchers:
        custom = self.kube.custom
        watched = self.watched
        nodeclasses = self.nodeclass_kind.resource
        targets: list[tuple[WatchTarget, Callable[[str, Obj], None]]] = [
            (
                WatchTarget(
                    "nodeclaims",
                    custom.list_cluster_custom_object,
                    (NODECLAIM.group, NODECLAIM.version, NODECLAIM.plural),
                    on_sync=synced_to(watched.nodeclaims if watched else None),
                ),
                self.on_nodeclaim,
            ),
            (
                WatchTarget(
                    "nodes",
                    self.kube.core.list_node,
                    on_sync=synced_to(watched.nodes if watched else None, self.node_index),
                ),
                self.on_node,
            ),
            (
                WatchTarget(
                    "pods",
                    self.kube.core.list_pod_for_all_namespaces,
                    on_sync=synced_to(watched.pods if watched else None),
                ),
                self.on_pod,
            ),
            (
                WatchTarget(
                    "nodepools",
                    custom.list_cluster_custom_object,
                    (NODEPOOL.group, NODEPOOL.version, NODEPOOL.plural),
                ),
                self.on_nodepool,
            ),
            (
                WatchTarget(
                    nodeclasses.plural,
                    custom.list_cluster_custom_object,
                    (nodeclasses.group, nodeclasses.version, nodeclasses.plural),
                ),
                self.on_nodeclass,
            ),
        ]
        for target, handler in targets:
            self._streams.watch(target, handler)
        self._streams.spawn(self._resync, name="watch-resync")
        queue = self.cloud.interruption_source() if self.cloud else None
        if queue is not None:
            self._streams.spawn(
                queue.run,
                self.on_interruption,
                self.stop,
                received=metrics.interruption_received,
                deleted=metrics.interruption_deleted,
            )
        return self

    def close(self) -> None:
        self.stop.set()
        self._writer.close()

    def pod_event(self, node: str) -> None:
        """A pod was bound to or left ``node``: move its claim's lastPodEventTime."""
        claim = self._claim_by_node.get(node)
        if claim is None:
            return
        now = time.monotonic()
        if now - self._pod_event_sent.get(claim, -1e9) < claim_status.POD_EVENT_DEDUPE:
            return
        self._pod_event_sent[claim] = now
        at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        self._writer.write(
            f"lastPodEventTime of {claim}",
            lambda: claim_status.record_pod_event(self.kube, claim, at),
        )

    @property
    def ready(self) -> bool:
        return {"nodeclaims", "nodes", "pods", "nodepools"} <= self.synced

    # -- actions -----------------------------------------------------------------------------
    def trigger_provisioning(self) -> None:
        """Tell the provisioner pods are pending: at most one signal in flight, and none
        sooner than ``PODS_PENDING_SPACING`` after the last.

        A trigger while a signal is being sent or spaced asks for one follow-up, so a pod seen
        after the provisioner took the signal still starts a round of its own. The follow-ups
        keep the provisioner's batch window open while a burst lasts, as separate signals did.
        """
        with self._provisioning_lock:
            if self._provisioning_in_flight:
                self._provisioning_again = True
                return
            self._provisioning_in_flight = True
        self._calls.submit(self._send_pods_pending())

    async def _send_pods_pending(self) -> None:
        handle = self.client.get_workflow_handle(contract.provisioner_id(self.cluster))
        try:
            while True:
                with self._provisioning_lock:
                    self._provisioning_again = False
                PROVISIONING_SIGNALS.inc()
                try:
                    await handle.signal(contract.SIGNAL_PODS_PENDING, 1)
                except Exception as exc:  # the resync lists pods and triggers again
                    log.warning("pods_pending signal failed: %s", exc)
                    self._pending_on_list = True
                await asyncio.sleep(self.pods_pending_spacing)  # triggers meanwhile: one more
                with self._provisioning_lock:
                    if not self._provisioning_again:
                        self._provisioning_in_flight = False
                        return
        except BaseException:  # cancelled with the loop: the next trigger must send again
            with self._provisioning_lock:
                self._provisioning_in_flight = False
            raise

    def trigger_disruption(self, gone: str | None = None) -> None:
        """Tell the disruption workflow the cluster changed; one signal per second at most.
        ``gone``: the NodeClaim of a Node that went away, named in the signal (the workflow
        starts its next round at once when the nodes its commands deleted are all gone)."""
        with self._disruption_lock:
            if gone:
                self._disruption_gone.add(gone)
            if self._disruption_pending:
                return
            self._disruption_pending = True
        handle = self.client.get_workflow_handle(contract.disruption_id(self.cluster))

        async def send() -> None:
            await asyncio.sleep(DISRUPTION_COALESCE)
            with self._disruption_lock:
                self._disruption_pending = False
                names, self._disruption_gone = sorted(self._disruption_gone), set()
            if names:
                await ignore_missing(handle.signal(contract.SIGNAL_CLUSTER_CHANGED, names))
            else:
                await ignore_missing(handle.signal(contract.SIGNAL_CLUSTER_CHANGED))

        self._calls.submit(send())

    def start_lifecycle(
        self, name: str, summary: str, delay: float = 0.0, *, deleting: bool = False
    ) -> None:
        """Start (or find running) the claim's workflow, after ``delay`` seconds so the
        provisioner, which also starts it, usually wins and sets the richer summary."""

        async def start() -> None:
            if delay:
                await asyncio.sleep(delay)
            await start_lifecycle(
                self.client,
                cluster=self.cluster,
                task_queue=self.task_queue,
                name=name,
                summary=summary,
                search_attributes=self.search_attributes,
                rerun_completed=not deleting,
            )

        self._calls.submit(start())

    def signal_claim(self, name: str, signal: str, *args: Any) -> None:
        handle = self.client.get_workflow_handle(contract.nodeclaim_id(self.cluster, name))
        self._calls.submit(
            ignore_missing(handle.signal(signal, *args) if args else handle.signal(signal))
        )

    # -- handlers ----------------------------------------------------------------------------
    def on_pod(self, kind: str, pod: Obj) -> None:
        if self.watched is not None:
            self.watched.pods.observe(kind, pod)
        meta = pod.get("metadata") or {}
        ns, name = str(meta.get("namespace")), str(meta.get("name"))
        key = f"{ns}/{name}"
        if kind == raw.DELETED:
            self._pods.delete(ns, name)
            self._healthy.pop(key, None)
            left = self._bound.pop(key, None)
            if left:
                self.pod_event(left)
                self.trigger_disruption()
            return
        node = str((pod.get("spec") or {}).get("nodeName") or "")
        if node and self._bound.get(key) != node:
            self._bound[key] = node
            if kind != raw.LISTED:  # a re-list is not news; a pod created bound is
                self.pod_event(node)
            self.trigger_disruption()
        healthy = pod_healthy(pod)
        if node and kind != raw.LISTED and self._healthy.get(key, healthy) != healthy:
            # A pod turning Ready (or not) changes what its PodDisruptionBudget allows: a
            # round that found a node blocked by it must not wait for the slow timer.
            self.trigger_disruption()
        self._healthy[key] = healthy
        self._pods.update(pod)
        if unschedulable(pod):
            self._pods.acked(ns, name)
        if unschedulable(pod) and kind != raw.LISTED:
            self.trigger_provisioning()
        elif unschedulable(pod):
            self._pending_on_list = True

    def on_nodepool(self, kind: str, pool: Obj) -> None:
        meta = pool.get("metadata") or {}
        name = str(meta.get("name"))
        if kind == raw.DELETED:
            self._pool_generations.pop(name, None)
            self._pools.pop(name, None)
            self._pool_states.delete(name)
            return
        self._pools[name] = pool
        self._pool_states.update(pool)
        if self.status is not None:
            self.status.nodepool(name)
        # Status writes (ours included) do not change the generation; only spec edits do.
        generation = int(meta.get("generation") or 0)
        if self._pool_generations.get(name) != generation:
            self._pool_generations[name] = generation
            self.trigger_provisioning()
            self.trigger_disruption()  # drift

    def on_nodeclass(self, kind: str, nodeclass: Obj) -> None:
        if self.nodeclass_store is not None:
            self.nodeclass_store.observe(kind, nodeclass)
        name = str((nodeclass.get("metadata") or {}).get("name"))
        if kind == raw.DELETED:
            self._class_drift_facts.pop(name, None)
            return
        if self.status is not None:
            self.status.nodeclass(name)
        # A spec edit, or a newly resolved AMI, subnet or security group, may drift nodes:
        # a round now rather than at the slow timer. Condition-only status writes do not.
        facts = self.nodeclass_kind.drift_facts(nodeclass)
        if self._class_drift_facts.get(name) != facts:
            self._class_drift_facts[name] = facts
            self.trigger_disruption()

    def on_nodeclaim(self, kind: str, claim: Obj) -> None:
        if not self._managed(claim):
            return
        if self.watched is not None:
            self.watched.nodeclaims.observe(kind, claim)
        meta = claim.get("metadata") or {}
        name = str(meta.get("name"))
        provider_id = (claim.get("status") or {}).get("providerID")
        pool = (meta.get("labels") or {}).get(L.NODEPOOL)
        if pool and self.status is not None:  # its usage changed, maybe; bursts coalesce
            self.status.nodepool(str(pool), delay=2.0)
        node_name = (claim.get("status") or {}).get("nodeName")
        if kind == raw.DELETED:
            self._deleting.discard(name)
            self._terminating.discard(name)
            self._pod_event_sent.pop(name, None)
            self._claim_offering.pop(name, None)
            if provider_id:
                self._claims_by_provider.pop(provider_id, None)
            if node_name:
                self._claim_by_node.pop(str(node_name), None)
            return
        if node_name:
            self._claim_by_node[str(node_name)] = name
        labels = meta.get("labels") or {}
        if labels.get(L.INSTANCE_TYPE) and labels.get(L.ZONE):
            self._claim_offering[name] = (str(labels[L.INSTANCE_TYPE]), str(labels[L.ZONE]))
        pool_obj = self._pools.get(str(pool)) if pool else None
        if pool_obj is not None and claim_status.needs_stamp(claim):
            self._writer.write(
                f"re-stamp {name}",
                lambda: claim_status.restamp(
                    self.kube, claim, pool_obj, self._nodeclass_of(pool_obj)
                ),
            )
        if provider_id and self._claims_by_provider.get(str(provider_id)) != name:
            self._claims_by_provider[str(provider_id)] = name
            self._hint_known_node(name, str(provider_id))
        if kind in (raw.LISTED, raw.ADDED) and not (
            meta.get("deletionTimestamp") and not meta.get("finalizers")
        ):
            self.start_lifecycle(
                name,
                summary_of_claim(claim),
                delay=self.adopt_delay,
                deleting=bool(meta.get("deletionTimestamp")),
            )
        if meta.get("deletionTimestamp") and name not in self._deleting:
            self._deleting.add(name)
            self.signal_claim(name, contract.SIGNAL_DELETED, "NodeClaim")
            self._node_going_away(kind)
        if name not in self._terminating and cond.is_true(claim, INSTANCE_TERMINATING):
            # its budget is free (scheduling/disruption/budgets.py): a round may go on now
            self._terminating.add(name)
            self.trigger_disruption(gone=name)

    def _managed(self, claim: Obj) -> bool:
        """Karpenter's IsManaged: a claim whose nodeClassRef names another provider's kind
        is that provider's to launch and retire; this worker neither starts its lifecycle
        nor counts it. A claim without a ref (not valid in v1) is taken as ours."""
        ref = (claim.get("spec") or {}).get("nodeClassRef") or {}
        if not ref.get("group") and not ref.get("kind"):
            return True
        resource = self.nodeclass_kind.resource
        return (ref.get("group"), ref.get("kind")) == (resource.group, resource.kind)

    def _node_going_away(self, kind: str) -> None:
        """A node started going away: a provisioning round plans for its pods now, as
        Karpenter's provisioner counts the pods of deleting nodes (``scheduling.going_away``),
        rather than once they are evicted. Found on a (re)list: once the watches are synced."""
        if kind == raw.LISTED:
            self._pending_on_list = True
        else:
            self.trigger_provisioning()

    def _nodeclass_of(self, pool: Obj) -> Obj | None:
        """The node class ``pool`` refers to, as the launches read it (None when it cannot
        be read now: the claim's next event tries again)."""
        ref = ((pool.get("spec") or {}).get("template") or {}).get("spec") or {}
        name = (ref.get("nodeClassRef") or {}).get("name")
        if not name or self.nodeclass_store is None:
            return None
        try:
            return self.nodeclass_store.get(str(name))
        except Exception as exc:  # gone, or the API unreachable: no NodeClass stamp now
            log.debug("%s %s: %s", self.nodeclass_kind.kind, name, exc)
            return None

    def _hint_known_node(self, claim: str, provider_id: str) -> None:
        """The claim's providerID is new here: if its Node was watched first (the Node
        watcher then knew no claim to hint), hint the claim now rather than at its next poll.
        """
        if self.node_index is None:  # a hint only wakes the workflow: stale is harmless
            return
        node = self.node_index.name_of(provider_id)
        if node is not None and node not in self._initialized:
            self._last_hint[node] = time.monotonic()
            self.signal_claim(claim, contract.SIGNAL_NODE_CHANGED, node)

    def _claim_of_node(self, node: Obj) -> str | None:
        provider_id = (node.get("spec") or {}).get("providerID")
        if provider_id and provider_id in self._claims_by_provider:
            return self._claims_by_provider[provider_id]
        for owner in (node.get("metadata") or {}).get("ownerReferences") or []:
            if owner.get("kind") == "NodeClaim":
                return str(owner.get("name"))
        return None

    def on_node(self, kind: str, node: Obj) -> None:
        if self.watched is not None:  # heartbeats too: the round reads the Node as listed
            self.watched.nodes.observe(kind, node)
        meta = node.get("metadata") or {}
        name = str(meta.get("name"))
        if kind == raw.DELETED:
            self._node_seen.pop(name, None)
        elif (meta.get("labels") or {}).get(L.NODE_INITIALIZED) == "true":
            # An initialized Node's heartbeat changes nothing this handler reads: skip it.
            # Uninitialized Nodes go on as before (their events re-send the claim's hint).
            seen = essentials(node)
            if kind == raw.MODIFIED and self._node_seen.get(name) == seen:
                return
            self._node_seen[name] = seen
        else:
            self._node_seen.pop(name, None)
        if self.node_index is not None:
            self.node_index.observe(kind, node)
        if kind == raw.DELETED:
            self._node_states.delete(name)
            self._deleting.discard(f"node/{name}")
            self._last_hint.pop(name, None)
            self._initialized.discard(name)
            self.trigger_disruption(gone=self._claim_of_node(node))
            return
        self._node_states.update(node)
        initialized = (meta.get("labels") or {}).get(L.NODE_INITIALIZED) == "true"
        if initialized and name not in self._initialized:
            self._initialized.add(name)
            self.trigger_disruption()
        claim = self._claim_of_node(node)
        if claim is None:
            return
        if meta.get("deletionTimestamp"):
            key = f"node/{name}"
            if key not in self._deleting:
                self._deleting.add(key)
                self.signal_claim(claim, contract.SIGNAL_DELETED, "Node")
                self._node_going_away(kind)
            return
        if (meta.get("labels") or {}).get(L.NODE_INITIALIZED) == "true":
            return
        now = time.monotonic()
        if now - self._last_hint.get(name, 0.0) >= 2.0:
            self._last_hint[name] = now
            self.signal_claim(claim, contract.SIGNAL_NODE_CHANGED, name)

    def on_interruption(self, event: InterruptionEvent) -> bool:
        """False while an instance has no known NodeClaim: the queue keeps the message."""
        metrics.interruption_latency(event.time)
        # Like Karpenter, a rebalance recommendation is news, not a reason to drain.
        draining = event.kind in DRAINING_EVENTS
        if not draining:
            metrics.interruption_action("NoAction")
        known = True
        for instance_id in event.instance_ids:
            claim = next(
                (c for p, c in self._claims_by_provider.items() if p.endswith("/" + instance_id)),
                None,
            )
            if claim is None:
                known = known and not draining
                continue
            self._tell_interruption(event, claim, draining)
            if draining:
                metrics.interruption_action("CordonAndDrain")
                if self.cloud is not None:  # Karpenter: the interrupted spot pool goes unused
                    offering = self._claim_offering.get(claim, ("", ""))
                    self.cloud.offering_interrupted(event, *offering)
                self.signal_claim(claim, contract.SIGNAL_INTERRUPTED, event.kind)
        return known

    def _tell_interruption(self, event: InterruptionEvent, claim: str, draining: bool) -> None:
        """Karpenter's interruption events on the claim and its Node (off this thread)."""
        node = next((n for n, c in self._claim_by_node.items() if c == claim), None)
        self._writer.write(
            f"interruption events of {claim}",
            lambda: interruption_events.tell(
                self.kube, event.kind, event.detail, node, claim, draining
            ),
        )

    def _resync(self) -> None:
        """Pods that stay unschedulable (e.g. after a claim hit insufficient capacity) are
        planned for again every ``resync_seconds``.

        The pods come from the pod watch's cache while it is synced: listing every pod in
        the cluster each time cost the API server (and this process) a full read per
        ``resync_seconds`` that the watch already holds."""
        while not self.stop.wait(self.resync_seconds if self.synced else 1.0):
            try:
                if self._pending_on_list or any(unschedulable(p) for p in self._all_pods()):
                    self._pending_on_list = False
                    self.trigger_provisioning()
            except Exception as exc:
                log.warning("resync failed: %s", translate(exc))

    def _all_pods(self) -> list[Obj]:
        """Every pod: as the watch holds them, or listed when its cache is not synced."""
        if self.watched is not None and self.watched.pods.synced:
            return self.watched.pods.items()
        return list(raw.list_all(self.kube.core.list_pod_for_all_namespaces))
