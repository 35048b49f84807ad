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

    def nodeclaim_launched(self, nodepool: str) -> None: ...

    def nodeclaim_registered(self, nodepool: str) -> None: ...

    def nodeclaim_initialized(self, nodepool: str) -> None: ...

    def nodeclaim_terminated(
        self, nodepool: str, reason: str, capacity_type: str = "", zone: str = ""
    ) -> None: ...

    def nodeclaim_disrupted(self, nodepool: str, reason: str, capacity_type: str = "") -> None: ...

    def node_created(self, nodepool: str, zone: str = "") -> None: ...

    def node_terminated(self, nodepool: str, zone: str = "") -> None: ...

    def pods_evicted(self, count: int) -> None: ...

    # Provisioning --------------------------------------------------------------------------
    def scheduling(
        self, controller: str, seconds: float, queued: int, unschedulable: int
    ) -> None: ...

    # Disruption ----------------------------------------------------------------------------
    def disruption_evaluated(
        self,
        seconds: float,
        eligible: Mapping[str, int],
        allowed: Mapping[tuple[str, str], int],
    ) -> None:
        """One round computed: its duration, eligible nodes per reason, and what each
        (nodepool, reason) budget allows now."""

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
