"""``interruption``: a spot interruption warning for one node → drained, replaced, Running.

Four pods that must each have a node of their own (required pod anti-affinity on the
hostname), so the interrupted node's pod cannot fit anywhere that exists: Joinery has to
cordon and drain the node, launch a replacement, and terminate the interrupted instance. On
EC2 the warning is the EventBridge "EC2 Spot Instance Interruption Warning", sent to the
interruption queue the worker polls; on Azure, a spot eviction notice (the Node condition
``PreemptionScheduled``) with the VM taken 30 s later.
"""

from __future__ import annotations

import time

from sandbox.scenarios.common import SCENARIO_LABEL, Sandbox, ScenarioFailed, Summary, deployment

NAME = "interruption"
CAPACITY_TYPE_LABEL = "karpenter.sh/capacity-type"
REPLICAS = 4


def run(sandbox: Sandbox, summary: Summary, timeout: float) -> None:
    deadline = time.monotonic() + timeout

    def left() -> float:
        return max(10.0, deadline - time.monotonic())

    ns = sandbox.namespace(NAME)
    summary.pods = REPLICAS
    selector = f"{SCENARIO_LABEL}={NAME}"
    began = time.monotonic()
    # Azure evicts only Spot VMs (and, pricing spot as on-demand, the emulated region would
    # launch on-demand ones): the pods ask for spot there.
    spot = {CAPACITY_TYPE_LABEL: "spot"} if sandbox.cloud.name == "azure" else None
    sandbox.create_deployment(
        ns,
        deployment(
            "spread",
            scenario=NAME,
            replicas=REPLICAS,
            cpu="500m",
            memory="1Gi",
            one_per_node=True,
            node_selector=spot,
        ),
    )
    pods = sandbox.wait_all_running(ns, selector, REPLICAS, timeout=left())
    summary.secondsToAllRunning = time.monotonic() - began
    before = sandbox.live_instances()
    summary.costPerHour = sandbox.cost_per_hour(before)
    claims_before = {c["metadata"]["name"] for c in sandbox.nodeclaims()}
    sandbox.log(
        f"{REPLICAS} pods Running after {summary.secondsToAllRunning:.1f}s on {len(before)} node(s)"
    )

    # Interrupt the node of one pod, preferring a spot instance (that is what gets the warning).
    by_node = {i.id: i for i in before}
    victims = [by_node[p["spec"]["nodeName"]] for p in pods if p["spec"]["nodeName"] in by_node]
    if not victims:
        raise ScenarioFailed("no Running pod is on an instance Joinery launched")
    victims.sort(key=lambda i: (i.capacity_type != "spot", i.id))
    victim = victims[0]
    victim_pods = {p["metadata"]["name"] for p in pods if p["spec"]["nodeName"] == victim.id}
    sandbox.send_spot_interruption(victim)
    interrupted = time.monotonic()
    sandbox.log(
        f"sent a spot interruption warning for {victim.id} ({victim.instance_type}/"
        f"{victim.capacity_type}/{victim.zone}), which runs {sorted(victim_pods)}"
    )

    def node_gone() -> bool:
        return all(n["metadata"]["name"] != victim.id for n in sandbox.nodes())

    sandbox.wait(f"node {victim.id} drained and deleted", node_gone, timeout=left())
    # On Azure the VM is taken 30 s after the notice: a node gone sooner was drained by Joinery
    # on the notice, not lost with its VM.
    summary.extra["secondsToNodeGone"] = round(time.monotonic() - interrupted, 1)

    def replaced() -> bool:
        current = sandbox.running(sandbox.pods(ns, selector))
        return len(current) == REPLICAS and all(
            p["spec"]["nodeName"] != victim.id and p["metadata"]["name"] not in victim_pods
            for p in current
        )

    sandbox.wait(
        "the interrupted pod Running again on another node",
        replaced,
        timeout=left(),
        progress=lambda: f"{len(sandbox.running(sandbox.pods(ns, selector)))}/{REPLICAS} Running",
    )
    sandbox.wait(
        f"instance {victim.id} terminated",
        lambda: victim.id not in {i.id for i in sandbox.live_instances()},
        timeout=left(),
    )
    new_claims = {c["metadata"]["name"] for c in sandbox.nodeclaims()} - claims_before
    summary.nodes = len(before) + len(new_claims)
    sandbox.log(
        f"interruption handled in {time.monotonic() - interrupted:.1f}s: "
        f"{len(new_claims)} replacement NodeClaim(s) {sorted(new_claims)}"
    )
    if not new_claims:
        summary.failures.append("no replacement NodeClaim was launched")

    sandbox.delete_deployments(ns, ["spread"])
    sandbox.wait(
        "the Deployment's pods to go", lambda: not sandbox.pods(ns, selector), timeout=left()
    )
    sandbox.remove_empty_nodes(timeout=left())
    sandbox.core.delete_namespace(ns)
