"""A spot eviction in the sandbox, played as Azure and AKS play it.

Azure announces the eviction to the VM (a ``Preempt`` Scheduled Event with its ``NotBefore``);
on AKS the node-problem-detector on the VM turns that into the Node condition
``PreemptionScheduled`` and re-asserts it every few seconds while it stands; at ``NotBefore``
Azure takes the VM (eviction policy Delete: the VM and its disks go, its NIC stays for
whoever made it to remove). :class:`SpotEvictions` does the two outside parts: a thread
re-asserts the condition on the Node (the simulated nodes have no detector of their own),
and once the deadline passes deletes the VM through ARM as Azure would. What Joinery does in
between (cordon, drain, a replacement, its own delete) is the worker's.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from activities.azure.eviction import CONDITION, REASON, notice_message

log = logging.getLogger(__name__)

# Azure gives a spot VM at least 30 s of notice.
NOTICE_SECONDS = 30.0
REASSERT_SECONDS = 1.0


@dataclass
class Eviction:
    vm: str  # the VM's name (its Node's name)
    not_before: datetime
    event_id: str
    announced: datetime


@dataclass
class SpotEvictions:
    """Outstanding evictions; ``patch_node_status(name, body)`` writes a Node's status and
    ``delete_vm(name)`` takes a VM away (both raise nothing when the object is gone)."""

    patch_node_status: Callable[[str, dict[str, Any]], None]
    delete_vm: Callable[[str], None]
    now: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    _pending: dict[str, Eviction] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    evicted: list[str] = field(default_factory=list)

    def evict(self, vm: str, notice_seconds: float = NOTICE_SECONDS) -> Eviction:
        """Announce the eviction of ``vm`` now, to happen ``notice_seconds`` from now, and
        keep the notice up (and take the VM) from a thread of its own."""
        eviction = self.announce(vm, notice_seconds)
        self.step()
        self._start()
        return eviction

    def announce(self, vm: str, notice_seconds: float = NOTICE_SECONDS) -> Eviction:
        """Record the eviction; ``step`` acts on it."""
        now = self.now()
        eviction = Eviction(
            vm, now + timedelta(seconds=notice_seconds), f"preempt-{vm}-{len(self.evicted)}", now
        )
        with self._lock:
            self._pending[vm] = eviction
        return eviction

    def step(self) -> None:
        """Re-assert every notice still ahead of its deadline; take the VMs whose is past."""
        now = self.now()
        with self._lock:
            pending = list(self._pending.values())
        for e in pending:
            if now >= e.not_before:
                with contextlib.suppress(Exception):
                    self.delete_vm(e.vm)
                    with self._lock:
                        self._pending.pop(e.vm, None)
                    self.evicted.append(e.vm)
                continue
            stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
            condition = {
                "type": CONDITION,
                "status": "True",
                "reason": REASON,
                "message": notice_message(e.not_before, e.event_id),
                "lastHeartbeatTime": stamp,
                "lastTransitionTime": e.announced.strftime("%Y-%m-%dT%H:%M:%SZ"),
            }
            try:
                self.patch_node_status(e.vm, {"status": {"conditions": [condition]}})
            except Exception as exc:  # the Node may be gone already: the VM still goes
                log.debug("node %s: condition not written: %s", e.vm, exc)

    def pending(self) -> list[str]:
        with self._lock:
            return sorted(self._pending)

    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="spot-evictions", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(REASSERT_SECONDS):
            self.step()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
