"""What activities tell the worker's metrics: one hook per fact, no-ops by default.

Activities hold all I/O, so they are where things happen that Karpenter counts (a claim
launched, a node disrupted, a cloud call timed); but which metric system records them is
the worker's business (``worker/running/metrics.py`` implements these hooks with Prometheus). Hooks
never raise and never decide anything. Workflow code never calls them: a replayed workflow
would count twice.

Label values follow Karpenter's: reasons in snake case (``underutilized``, ``drifted``,
``spot_interrupted``), decisions ``delete``/``replace``, consolidation types ``empty``,
``single``, ``multi`` (and empty for drift).
"""

from __future__ import annotations

import re
from collections.abc import Mapping


def snake(reason: str) -> str:
    """``SpotInterruption`` → ``spot_interruption``, as Karpenter writes reason labels."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", reason).replace("-", "_").lower()


class Counters:
    """Hooks the worker plugs its Prometheus metrics into; no-ops by default."""

    # NodeClaim lifecycle -------------------------------------------------------------------
    def nodeclaim_created(
        self, nodepool: str, reason: str = "provisioned", min_values_relaxed: bool = False
    ) -> None: ...

    def nodeclaim_launched(self, nodepool: str, nodeclass: str = "") -> None: ...

    def nodeclaim_registered(self, nodepool: str, nodeclass: str = "") -> None: ...

    def nodeclaim_initialized(self, nodepool: str, nodeclass: str = "") -> None: ...

    def nodeclaim_terminated(
        self, nodepool: str, reason: str, capacity_type: str = "", zone: str = ""
    ) -> None: ...

    def nodeclaim_disrupted(self, nodepool: str, reason: str, capacity_type: str = "") -> None: ...

    def node_created(self, nodepool: str, zone: str = "") -> None: ...

    def node_terminated(
        self,
        nodepool: str,
        zone: str = "",
        *,
        deleting_seconds: float | None = None,
        lifetime_seconds: float | None = None,
    ) -> None:
        """A Node's finalizer was removed: how long it was deleting, and its whole age."""

    def nodeclaim_termination_duration(
        self, nodepool: str, seconds: float, instance_seconds: float | None = None
    ) -> None:
        """A NodeClaim's deletion took ``seconds`` (its instance's, ``instance_seconds``)."""

    def nodeclaim_unhealthy_disrupted(
        self, condition: str, nodepool: str, capacity_type: str = "", image_id: str = ""
    ) -> None:
        """Node repair replaced a claim whose ``condition`` stayed bad."""

    def pods_evicted(self, count: int, code: str = "200") -> None: ...

    def node_drained(self, nodepool: str) -> None:
        """A node's drain completed."""

    def pods_drained(self, reason: str, count: int) -> None:
        """``count`` pods were evicted from a node disrupted for ``reason``."""

    # Provisioning --------------------------------------------------------------------------
    def scheduling(
        self, controller: str, seconds: float, queued: int, unschedulable: int
    ) -> None: ...

    def scheduling_started(self, controller: str, scheduling_id: str) -> None:
        """A scheduling simulation began (``scheduling_finished`` with the same id ends it)."""

    def scheduling_finished(self, controller: str, scheduling_id: str) -> None: ...

    def pods_decided(
        self,
        placed: list[tuple[str, str]],
        undecided: list[tuple[str, str]],
        ignored: int = 0,
        zones: Mapping[str, int] | None = None,
    ) -> None:
        """A provisioning round decided on pods (``placed`` on a claim or node, the others
        told unschedulable), left ``ignored`` invalid pods out, and saw its pending pods'
        effective zones (a zone, ``flexible`` or ``none`` → count)."""

    # Disruption ----------------------------------------------------------------------------
    def disruption_evaluated(
        self,
        seconds: float,
        eligible: Mapping[str, int],
        allowed: Mapping[tuple[str, str], int],
        consuming: Mapping[tuple[str, str], int] | None = None,
    ) -> None:
        """One round computed: its duration, eligible nodes per reason, what each
        (nodepool, reason) budget allows now and how many nodes use it up."""

    def disruption_validation_failed(self, consolidation_type: str) -> None:
        """A command's candidates changed during the validation delay: it was dropped."""

    def disruption_decision(
        self, decision: str, reason: str, consolidation_type: str, pools: list[str]
    ) -> None:
        """A validated command started (its candidates were marked)."""

    def disruption_failed(self, decision: str, reason: str, consolidation_type: str) -> None:
        """A started command was undone."""

    # Cloud provider ------------------------------------------------------------------------
    def cloudprovider_call(self, method: str, seconds: float, error: str | None) -> None:
        """A call to the EC2 provider (``Create``, ``Delete``, ``Get``, ``List``,
        ``GetInstanceTypes``), with the error's type when it failed."""

    def launch_failed(self, zone: str, zone_id: str, capacity_type: str, reason: str) -> None:
        """An offering a launch asked for was refused (insufficient capacity, ...)."""

    def termination_failed(self, zone: str = "", zone_id: str = "") -> None:
        """A terminate call failed."""

    def batch(self, batcher: str, seconds: float, size: int) -> None:
        """A batch of cloud calls was sent after staying open ``seconds``."""

    def instance_status_unhealthy(self, category: str) -> None:
        """An instance status check (``DescribeInstanceStatus``) came back unhealthy."""
