"""How fast the sandbox's own control plane may talk to its API server: an emulated gap.

A real kube-scheduler and kube-controller-manager start with client-side rate limits sized
for a small self-managed cluster: the scheduler 50 requests/s (burst 100), the
controller-manager 20/s (burst 30), and kwok plays each pod's and node's stages 4 at a time.
A burst of 1,000 pods then waits on those limits: the ReplicaSet controller creates pods at
most 20/s, the scheduler writes each pod's Unschedulable status and later its binding within
its 50/s, and kwok runs pods 4 at a time. EKS's control
plane is not configured that way: it scales with the cluster (and offers provisioned
tiers); AWS does not publish the components' flags, so the figures below are ours, chosen so
the limits stop being what a 1,000-node burst waits on here, not copied from EKS.

The simulated kubelets' heartbeats are the other gap. A real kubelet renews its Node's Lease
every 10 s (a quarter of the 40 s lease), from its own machine; here kwok renews every
simulated Node's Lease from this one, and 1,000 Nodes are 100 lease writes a second through
the same API server and etcd, on the same two cores as everything else. When kwok falls
behind, the node-lifecycle controller marks Nodes unreachable and taints them, which a real
cluster's healthy kubelets would never cause (session 25 saw 218 of 991 Nodes so marked in
a 1,000-pod burst). The sandbox therefore gives simulated Nodes a 400 s lease (renewed every
100 s) and the controller-manager a node-monitor grace period to match (450 s; upstream's
50 s is 10 s more than the 40 s lease).

The sandbox starts its control plane with these higher limits and longer leases
(``SANDBOX``). Set ``JOINERY_SANDBOX_CONTROL_PLANE_RATES=upstream`` to start it with the
upstream defaults (and kubelet's 40 s lease) instead (the before/after of
``benchmarks/scale.py --control-plane-rates``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

ENV = "JOINERY_SANDBOX_CONTROL_PLANE_RATES"
UPSTREAM_NAME = "upstream"


@dataclass(frozen=True)
class Rates:
    name: str
    scheduler_qps: int
    scheduler_burst: int
    controller_manager_qps: int
    controller_manager_burst: int
    kwok_parallelism: int  # kwok's pod and node stage workers (its client has no rate limit)
    node_lease_seconds: int  # simulated Nodes' Lease duration; kwok renews at a quarter of it
    node_monitor_grace_seconds: int  # the node-lifecycle controller's wait for a heartbeat


# The upstream defaults (kube-scheduler, kube-controller-manager and kwok v0.8 as built here).
UPSTREAM = Rates(UPSTREAM_NAME, 50, 100, 20, 30, 4, 40, 50)
SANDBOX = Rates("sandbox", 500, 1000, 500, 1000, 16, 400, 450)


def chosen() -> Rates:
    """``SANDBOX`` unless the environment asks for the upstream defaults."""
    return UPSTREAM if os.environ.get(ENV, "").strip() == UPSTREAM_NAME else SANDBOX


def scheduler_args(rates: Rates) -> list[str]:
    # deprecated flags that still apply when the scheduler gets no --config
    return [f"--kube-api-qps={rates.scheduler_qps}", f"--kube-api-burst={rates.scheduler_burst}"]


def controller_manager_args(rates: Rates) -> list[str]:
    return [
        f"--kube-api-qps={rates.controller_manager_qps}",
        f"--kube-api-burst={rates.controller_manager_burst}",
        f"--node-monitor-grace-period={rates.node_monitor_grace_seconds}s",
    ]


def kwok_lease_args(rates: Rates) -> list[str]:
    return [f"--node-lease-duration-seconds={rates.node_lease_seconds}"]


def kwok_args(rates: Rates, directory: Path) -> list[str]:
    """A second ``--config``: a KwokConfiguration with the stage parallelism; none for the
    upstream defaults. kwok v0.8 takes a given KwokConfiguration's missing numbers as 0, not
    as its defaults, so the other options are spelled out with their default values."""
    if rates.kwok_parallelism == UPSTREAM.kwok_parallelism:
        return []
    path = directory / "kwok-options.yaml"
    path.write_text(
        "apiVersion: config.kwok.x-k8s.io/v1alpha1\n"
        "kind: KwokConfiguration\n"
        "options:\n"
        f"  podPlayStageParallelism: {rates.kwok_parallelism}\n"
        f"  nodePlayStageParallelism: {rates.kwok_parallelism}\n"
        "  nodeLeaseParallelism: 4\n"
        "  podsOnNodeSyncParallelism: 1\n"
        "  enablePodsOnNodeSyncListPager: true\n"
        "  enablePodsOnNodeSyncStreamWatch: false\n"
        "  enableDebuggingHandlers: true\n"
        "  enableProfilingHandler: true\n"
    )
    return [f"--config={path}"]
