"""Keeps NodePool and node-class status current (Karpenter's nodepool/nodeclass status
controllers): conditions, resolved subnets/security groups/AMIs, usage, events.

The watchers name what changed; this one thread does the writing, off the watch threads
(resolving a NodeClass calls the cloud). Requests for the same object coalesce, bursts (a hundred
NodeClaims appearing) are absorbed by a short delay, failures are retried after a pause,
and everything is re-checked every ``resync_seconds`` (AMIs and subnets change in AWS
without a Kubernetes event). Several workers may report at once: each write carries the
resourceVersion it read, and the transition event is recorded only by the one that won.
"""

from __future__ import annotations

import heapq
import logging
import threading
import time
from dataclasses import dataclass, field

from activities.cloud.provider import CloudProvider
from activities.kubernetes import nodeclasses, nodepools
from activities.kubernetes.client import Kube
from activities.kubernetes.errors import translate
from activities.kubernetes.object_cache import ObjectCache
from activities.kubernetes.resources import EC2NODECLASS, CustomResource
from activities.status import nodeclasses as nodeclass_status
from activities.status import nodepools as nodepool_status

log = logging.getLogger(__name__)
NODEPOOL = "NodePool"
NODECLASS = "NodeClass"
Key = tuple[str, str]


@dataclass
class StatusReporter:
    kube: Kube
    cloud: CloudProvider | None = None
    # The NodeClaim watch's cache (activities/kubernetes/object_cache.py): a pool's usage is
    # counted from it while it is synced, not from a list of the pool's claims.
    claims: ObjectCache | None = None
    resync_seconds: float = 300.0
    retry_seconds: float = 10.0
    stop: threading.Event = field(default_factory=threading.Event)
    _due: list[tuple[float, Key]] = field(default_factory=list)
    _queued: dict[Key, float] = field(default_factory=dict)
    _wake: threading.Condition = field(default_factory=threading.Condition)
    _thread: threading.Thread | None = None

    # -- what the watchers call ----------------------------------------------------------------
    def nodepool(self, name: str, delay: float = 0.0) -> None:
        self._enqueue((NODEPOOL, name), delay)

    def nodeclass(self, name: str, delay: float = 0.0) -> None:
        if self.cloud is not None:
            self._enqueue((NODECLASS, name), delay)

    def start(self) -> StatusReporter:
        self._thread = threading.Thread(target=self._run, name="status-reporter", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        self.stop.set()
        with self._wake:
            self._wake.notify_all()

    # -- the loop ----------------------------------------------------------------------------
    def _enqueue(self, key: Key, delay: float) -> None:
        at = time.monotonic() + delay
        with self._wake:
            if key in self._queued and self._queued[key] <= at:
                return  # already due sooner
            self._queued[key] = at
            heapq.heappush(self._due, (at, key))
            self._wake.notify()

    def _next(self) -> Key | None:
        with self._wake:
            while not self.stop.is_set():
                now = time.monotonic()
                while self._due and self._queued.get(self._due[0][1]) != self._due[0][0]:
                    heapq.heappop(self._due)  # superseded by an earlier request
                if self._due and self._due[0][0] <= now:
                    _, key = heapq.heappop(self._due)
                    del self._queued[key]
                    return key
                self._wake.wait(self._due[0][0] - now if self._due else None)
        return None

    def _run(self) -> None:
        resync = threading.Thread(target=self._resync, name="status-resync", daemon=True)
        resync.start()
        while (key := self._next()) is not None:
            kind, name = key
            try:
                if kind == NODECLASS and self.cloud is not None:
                    nodeclass_status.report(self.kube, self.cloud, name)
                    for pool in self._pools_using(name):
                        self.nodepool(pool)
                else:
                    nodepool_status.report(self.kube, name, self.claims, self._nodeclasses())
            except Exception as exc:  # report and retry later; never let the thread die
                log.warning("status of %s %s not updated: %s", kind, name, translate(exc))
                self._enqueue(key, self.retry_seconds)

    def _pools_using(self, nodeclass: str) -> list[str]:
        pools, _ = nodepools.list_(self.kube)
        return [
            str(p["metadata"]["name"])
            for p in pools
            if nodepool_status.nodeclass_ref(p).get("name") == nodeclass
        ]

    def _nodeclasses(self) -> CustomResource:
        """The cluster's node class kind (EC2NodeClass without a provider)."""
        return self.cloud.nodeclass_kind.resource if self.cloud is not None else EC2NODECLASS

    def _resync(self) -> None:
        while not self.stop.wait(self.resync_seconds):
            try:
                for c in nodeclasses.list_(self.kube, self._nodeclasses())[0]:
                    self.nodeclass(str(c["metadata"]["name"]))
                for p in nodepools.list_(self.kube)[0]:
                    self.nodepool(str(p["metadata"]["name"]))
            except Exception as exc:
                log.warning("status resync failed: %s", translate(exc))
