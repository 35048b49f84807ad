"""``reserved``: a pool preferring capacity reservations, falling back, and a block expiring.

The emulator gets an on-demand capacity reservation (2 places, m5.large) and a capacity block
(1 place, c5.large, ending in two hours), both tagged for the scenario; an EC2NodeClass of the
scenario's own selects them by that tag, and its NodePool allows ``reserved`` and
``on-demand``. Then, as a user would:

1. three pods that each need an m5.large of their own: two land on the reservation (nodes
   labelled ``karpenter.sh/capacity-type: reserved`` with the reservation's id), the third
   falls back to on-demand, since the reservation is full;
2. one pod that needs a c5.large: it lands in the capacity block;
3. the block's end is brought to 35 minutes from now (inside Karpenter's 40): the worker's
   garbage-collection pass deletes the block's claim, so its node drains, and the pod runs
   again on an on-demand c5.large.

Summary figures beyond the common ones: ``reservedNodes``, ``onDemandFallbacks``,
``capacityBlockNodes``, ``secondsToBlockDrained``.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

from sandbox.scenarios.common import SCENARIO_LABEL, Sandbox, ScenarioFailed, Summary, deployment

NAME = "reserved"
POOL = "reserved"
ODCR_TYPE, BLOCK_TYPE = "m5.large", "c5.large"
ODCR_PLACES = 2
SPREAD = 3
CT = "karpenter.sh/capacity-type"
RESERVATION = "karpenter.k8s.aws/capacity-reservation-id"
POOL_LABEL = "karpenter.sh/nodepool"
TYPE_LABEL = "node.kubernetes.io/instance-type"


def run(sandbox: Sandbox, summary: Summary, timeout: float) -> None:
    deadline = time.monotonic() + timeout

    def left() -> float:
        return max(10.0, deadline - time.monotonic())

    emulation = sandbox.stack.emulation
    if emulation is None:
        raise ScenarioFailed("the scenario needs the sandbox's EC2 emulation")
    zones: list[str] = []

    def resolved() -> bool:
        zones[:] = _zones(sandbox)
        return bool(zones)

    sandbox.wait("EC2NodeClass default resolved", resolved, timeout=left())
    zone = zones[0]
    tags = {SCENARIO_LABEL: NAME}
    odcr = emulation.reservations.add(ODCR_TYPE, zone, ODCR_PLACES, tags=tags)
    end = datetime.now(UTC) + timedelta(hours=2)
    block = emulation.reservations.add(
        BLOCK_TYPE, zone, 1, reservation_type="capacity-block", end=end, tags=tags
    )
    sandbox.log(f"reservations in {zone}: {odcr} ({ODCR_PLACES} x {ODCR_TYPE}), block {block}")
    _create_nodeclass_and_pool(sandbox)
    ns = sandbox.namespace(NAME)
    began = time.monotonic()

    # 1. the reservation first, then on-demand
    sandbox.create_deployment(ns, _pods("spread", SPREAD, ODCR_TYPE))
    sandbox.wait_all_running(ns, "app=spread", SPREAD, timeout=left())
    spread = _claims_of(sandbox, ODCR_TYPE)
    reserved = [c for c in spread if _labels(c).get(CT) == "reserved"]
    fallback = [c for c in spread if _labels(c).get(CT) == "on-demand"]
    summary.extra["reservedNodes"] = len(reserved)
    summary.extra["onDemandFallbacks"] = len(fallback)
    if len(reserved) != ODCR_PLACES or any(_labels(c).get(RESERVATION) != odcr for c in reserved):
        summary.failures.append(
            f"{len(reserved)} claims in reservation {odcr}; it has {ODCR_PLACES} places"
        )
    if len(fallback) != SPREAD - ODCR_PLACES:
        summary.failures.append(f"{len(fallback)} on-demand fallbacks, not {SPREAD - ODCR_PLACES}")

    # 2. the capacity block
    sandbox.create_deployment(ns, _pods("block", 1, BLOCK_TYPE))
    sandbox.wait_all_running(ns, "app=block", 1, timeout=left())
    summary.secondsToAllRunning = time.monotonic() - began
    in_block = [c for c in _claims_of(sandbox, BLOCK_TYPE) if _labels(c).get(RESERVATION) == block]
    summary.extra["capacityBlockNodes"] = len(in_block)
    if len(in_block) != 1:
        raise ScenarioFailed(f"the capacity-block pod is not on a node of block {block}")
    block_claim = in_block[0]["metadata"]["name"]
    summary.costPerHour = sandbox.cost_per_hour(sandbox.live_instances())

    # 3. the block's end comes near: drained, and the pod moves to on-demand
    emulation.reservations.by_id[block].end = datetime.now(UTC) + timedelta(minutes=35)
    expired = time.monotonic()
    sandbox.log(f"capacity block {block} now ends in 35 minutes; waiting for {block_claim}")

    def moved() -> bool:
        claims = _claims_of(sandbox, BLOCK_TYPE)
        if any(c["metadata"]["name"] == block_claim for c in claims):
            return False
        pods = sandbox.running(sandbox.pods(ns, "app=block"))
        on_demand = {
            str((c.get("status") or {}).get("nodeName"))
            for c in claims
            if _labels(c).get(CT) == "on-demand"
        }
        return len(pods) == 1 and pods[0]["spec"].get("nodeName") in on_demand

    sandbox.wait("the block's pod Running on on-demand", moved, timeout=left())
    summary.extra["secondsToBlockDrained"] = round(time.monotonic() - expired, 1)
    summary.pods = SPREAD + 1
    summary.nodes = len(_claims_of(sandbox, ODCR_TYPE)) + len(_claims_of(sandbox, BLOCK_TYPE))

    sandbox.delete_deployments(ns, ["spread", "block"])
    sandbox.wait(
        "the pods to go", lambda: not sandbox.pods(ns, f"{SCENARIO_LABEL}={NAME}"), timeout=left()
    )
    sandbox.remove_empty_nodes(timeout=left())
    sandbox.core.delete_namespace(ns)


def _labels(obj: dict[str, Any]) -> dict[str, str]:
    return dict(obj["metadata"].get("labels") or {})


def _pods(name: str, replicas: int, instance_type: str) -> dict[str, Any]:
    return deployment(
        name,
        scenario=NAME,
        replicas=replicas,
        cpu="1",
        memory="1Gi",
        one_per_node=True,
        node_selector={POOL_LABEL: POOL, TYPE_LABEL: instance_type},
    )


def _claims_of(sandbox: Sandbox, instance_type: str) -> list[dict[str, Any]]:
    return [
        c
        for c in sandbox.nodeclaims()
        if _labels(c).get(POOL_LABEL) == POOL
        and _labels(c).get(TYPE_LABEL) == instance_type
        and not c["metadata"].get("deletionTimestamp")
    ]


def _zones(sandbox: Sandbox) -> list[str]:
    """The zones of EC2NodeClass default's resolved subnets (none before its first status)."""
    from activities.kubernetes.resources import EC2NODECLASS

    default = sandbox.custom.get_cluster_custom_object(
        EC2NODECLASS.group, EC2NODECLASS.version, EC2NODECLASS.plural, "default"
    )
    return sorted(str(s["zone"]) for s in (default.get("status") or {}).get("subnets") or [])


def _create_nodeclass_and_pool(sandbox: Sandbox) -> None:
    """Copies of the default EC2NodeClass (selecting the scenario's reservations) and
    NodePool (allowing reserved and on-demand)."""
    from activities.kubernetes.resources import EC2NODECLASS, NODEPOOL

    nc = sandbox.custom.get_cluster_custom_object(
        EC2NODECLASS.group, EC2NODECLASS.version, EC2NODECLASS.plural, "default"
    )
    spec = dict(nc["spec"])
    spec["capacityReservationSelectorTerms"] = [{"tags": {SCENARIO_LABEL: NAME}}]
    sandbox.custom.create_cluster_custom_object(
        EC2NODECLASS.group,
        EC2NODECLASS.version,
        EC2NODECLASS.plural,
        {
            "apiVersion": f"{EC2NODECLASS.group}/{EC2NODECLASS.version}",
            "kind": EC2NODECLASS.kind,
            "metadata": {"name": POOL},
            "spec": spec,
        },
    )
    pool = sandbox.custom.get_cluster_custom_object(
        NODEPOOL.group, NODEPOOL.version, NODEPOOL.plural, "default"
    )
    template = pool["spec"]["template"]
    template["spec"]["nodeClassRef"] = {**template["spec"]["nodeClassRef"], "name": POOL}
    template["spec"]["requirements"] = [
        {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
        {"key": CT, "operator": "In", "values": ["reserved", "on-demand"]},
        {"key": TYPE_LABEL, "operator": "In", "values": [ODCR_TYPE, BLOCK_TYPE]},
    ]
    sandbox.custom.create_cluster_custom_object(
        NODEPOOL.group,
        NODEPOOL.version,
        NODEPOOL.plural,
        {
            "apiVersion": f"{NODEPOOL.group}/{NODEPOOL.version}",
            "kind": NODEPOOL.kind,
            "metadata": {"name": POOL},
            "spec": {
                "template": template,
                "limits": {"cpu": "100"},
                "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "0s"},
            },
        },
    )
