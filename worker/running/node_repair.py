"""The NodeRepair feature gate's loop: a node-repair pass (activities/repair/nodes.py) every
``period`` seconds, in a thread beside the watchers, like Karpenter's node health controller.

A pass reads Nodes and NodeClaims afresh, so several workers may run it at once (deleting a
claim twice is a no-op). It sleeps until the next toleration runs out when that is sooner.
With a cloud provider, each pass first reads its instance status checks
(``CloudProvider.unhealthy_instances``; EC2's: ``activities/ec2/instance_status.py``), as
Karpenter's AWS provider polls them every minute.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime

from activities.cloud.provider import CloudProvider
from activities.kubernetes.client import Kube
from activities.kubernetes.errors import translate
from activities.metrics import Counters
from activities.repair.nodes import instance_status_pass, repair_pass

log = logging.getLogger(__name__)
PERIOD_SECONDS = 30.0
STATUS_POLL_SECONDS = 60.0  # Karpenter's DescribeInstanceStatus interval


class NodeRepairLoop:
    def __init__(
        self,
        kube: Kube,
        counters: Counters | None = None,
        period: float = PERIOD_SECONDS,
        cloud: CloudProvider | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.kube = kube
        self.counters = counters
        self.cloud = cloud
        self._polled: datetime | None = None
        self.period = period
        self.clock = clock
        self.stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> NodeRepairLoop:
        self._thread = threading.Thread(target=self._run, name="node-repair", daemon=True)
        self._thread.start()
        log.info("node repair on (feature gate NodeRepair)")
        return self

    def close(self) -> None:
        self.stop.set()

    def run_once(self) -> float:
        """One pass; returns how long to wait before the next."""
        now = self.clock()
        if self.cloud is not None and (
            self._polled is None or (now - self._polled).total_seconds() >= STATUS_POLL_SECONDS
        ):
            self._polled = now
            # EC2's own status checks first: an impaired instance need not wait 30 minutes.
            try:
                impaired = self.cloud.unhealthy_instances(now)
            except Exception as exc:  # e.g. no ec2:DescribeInstanceStatus: node conditions go on
                log.warning("instance status checks failed: %s", exc)
            else:
                instance_status_pass(self.kube, impaired, now, self.counters)
        out = repair_pass(self.kube, now, self.counters)
        wait = self.period
        if out.next_check is not None:
            wait = min(wait, max(1.0, (out.next_check - now).total_seconds()))
        return wait

    def _run(self) -> None:
        wait = 0.0
        while not self.stop.wait(wait):
            try:
                wait = self.run_once()
            except Exception as exc:
                log.warning("node repair pass failed: %s", translate(exc))
                wait = self.period
