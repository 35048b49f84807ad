"""``migration``: a fleet Karpenter left behind is adopted as it is, then disrupted per the table.

With the worker stopped (as when Karpenter has just been scaled to zero), the scenario stages
what Karpenter v1.14 would have left (``karpenter_fleet``): a NodePool of its own, four EC2
instances, their NodeClaims and Nodes, and a Deployment whose four pods (one per node) run on
them. Three claims carry Karpenter's hash of the pool as it is; one carries Karpenter's hash of
an older template (its pool changed after launch), which Karpenter itself would call drifted.
Then the worker starts, and the checks are:

1. **Adoption**: the three current claims keep their names, uids and instances: none is
   deleted, drifted or replaced; each is re-stamped with Joinery's hash version; no instance
   is terminated and none is launched beyond the one drift replacement, through at least one
   garbage-collection round and several disruption rounds. The stale claim is replaced
   (``NodePoolDrifted``), as Karpenter would replace it.
2. **Drift**: a label added to the pool's template drifts every node; all are replaced
   (budget ``100%``) and the pods run on the new nodes, which carry the label.
3. **Consolidation**: the Deployment scaled to one pod leaves three nodes empty; they are
   removed (``Empty``), and one node is left.

Summary figures beyond the common ones: ``adopted``, ``restamped``, ``rolledOnAdoption``
(must be 0), ``staleReplaced``, ``instancesTerminatedOnAdoption`` (must be 0),
``gcRoundsDuringAdoption``, ``driftRolled``, ``nodesAfterConsolidation``.
"""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

from activities.kubernetes.resources import EC2NODECLASS, NODECLAIM, NODEPOOL
from models import nodepool_hash
from sandbox.cluster import KWOK_NODE_ANNOTATION, KWOK_NODE_ANNOTATION_VALUE
from sandbox.scenarios import karpenter_fleet as fleet
from sandbox.scenarios.common import (
    SCENARIO_LABEL,
    Obj,
    Sandbox,
    ScenarioFailed,
    Summary,
    deployment,
    time_left,
)
from sandbox.scenarios.disruption_watch import create_nodepool, delete_nodepool, patch_nodepool

NAME = "migration"
POOL = "migration"
APP = "legacy"
NODECLASS = "default"
INSTANCE_TYPE = "m5.large"
CURRENT = 3  # claims stamped with the pool's hash as it is
REPLICAS = CURRENT + 1  # plus one stamped from an older template
DRIFT_LABEL = {"joinery.dev/migrated": "rolled"}


def run(sandbox: Sandbox, summary: Summary, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    nodeclass = _resolved_nodeclass(sandbox, deadline)
    # Queries need a worker: the GC round count is read before it stops.
    gc_before = _rounds(sandbox, "garbage", deadline)
    sandbox.log("stopping the worker: the cluster is staged as Karpenter left it")
    sandbox.stack.stop_worker()
    namespace = sandbox.namespace(NAME)
    selector = f"{SCENARIO_LABEL}={NAME}"
    try:
        create_nodepool(
            sandbox,
            POOL,
            requirements=[
                {
                    "key": "node.kubernetes.io/instance-type",
                    "operator": "In",
                    "values": [INSTANCE_TYPE],
                },
                {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
            ],
            disruption={
                "consolidationPolicy": "WhenEmptyOrUnderutilized",
                "consolidateAfter": "0s",
                "budgets": [{"nodes": "100%"}],
            },
        )
        pool = sandbox.custom.get_cluster_custom_object(
            NODEPOOL.group, NODEPOOL.version, NODEPOOL.plural, POOL
        )
        staged = _stage_fleet(sandbox, pool, nodeclass)
        summary.pods = REPLICAS
        sandbox.create_deployment(
            namespace,
            deployment(
                APP,
                scenario=NAME,
                replicas=REPLICAS,
                cpu="500m",
                memory="512Mi",
                one_per_node=True,
                node_selector={"karpenter.sh/nodepool": POOL},
            ),
        )
        began = time.monotonic()
        sandbox.wait_all_running(namespace, selector, REPLICAS, timeout=time_left(deadline))
        summary.secondsToAllRunning = time.monotonic() - began  # on Karpenter's nodes
        sandbox.log(f"{REPLICAS} pods Running on Karpenter's nodes; starting Joinery")
        _adoption(sandbox, summary, staged, gc_before, deadline)
        _drift(sandbox, summary, namespace, selector, deadline)
        _consolidation(sandbox, summary, namespace, selector, deadline)
        summary.nodes = len(_live_claims(sandbox))
        summary.costPerHour = sandbox.cost_per_hour(sandbox.live_instances())
    finally:
        sandbox.stack.start_worker()  # a failed step may leave it stopped; cleanup needs it
        sandbox.delete_deployments(namespace, [APP])
        delete_nodepool(sandbox, POOL)


def _resolved_nodeclass(sandbox: Sandbox, deadline: float) -> Obj:
    """The default EC2NodeClass once the worker resolved its AMIs, subnets and groups."""
    found: list[Obj] = []

    def ready() -> bool:
        obj = sandbox.custom.get_cluster_custom_object(
            EC2NODECLASS.group, EC2NODECLASS.version, EC2NODECLASS.plural, NODECLASS
        )
        status = obj.get("status") or {}
        if status.get("amis") and status.get("subnets") and status.get("securityGroups"):
            found.append(obj)
            return True
        return False

    sandbox.wait("EC2NodeClass default resolved", ready, timeout=min(60.0, time_left(deadline)))
    return found[-1]


def _stage_fleet(sandbox: Sandbox, pool: Obj, nodeclass: Obj) -> dict[str, Obj]:
    """Instances, NodeClaims and Nodes as Karpenter leaves them; the claims by name (the
    last one stamped from an older template)."""
    status = nodeclass["status"]
    image = fleet.ami_for(status["amis"], INSTANCE_TYPE)
    groups = [g["id"] for g in status["securityGroups"]]
    subnets = status["subnets"]
    cluster = sandbox.stack.options.cluster_name
    rng = random.Random()
    older = {
        **pool["spec"]["template"],
        "metadata": {"labels": {"team": "before-the-change"}},
    }
    staged: dict[str, Obj] = {}
    for i in range(REPLICAS):
        subnet = subnets[i % len(subnets)]
        name = fleet.claim_name(POOL, rng)
        launched = sandbox.ec2.run_instances(
            ImageId=image,
            InstanceType=INSTANCE_TYPE,
            MinCount=1,
            MaxCount=1,
            SubnetId=subnet["id"],
            SecurityGroupIds=groups,
        )["Instances"][0]
        at = fleet.Placement(name, launched["InstanceId"], subnet["zone"], INSTANCE_TYPE, image)
        tags = fleet.instance_tags(cluster, POOL, NODECLASS, name, at.node_name)
        sandbox.ec2.create_tags(
            Resources=[at.instance_id], Tags=[{"Key": k, "Value": v} for k, v in tags.items()]
        )
        notes = fleet.hash_annotations(pool, template=older if i == CURRENT else None)
        body = fleet.nodeclaim(pool, NODECLASS, at, notes)
        claim = sandbox.custom.create_cluster_custom_object(
            NODECLAIM.group, NODECLAIM.version, NODECLAIM.plural, body
        )
        claim["status"] = fleet.nodeclaim_status(at, int(claim["metadata"].get("generation", 1)))
        claim = sandbox.custom.replace_cluster_custom_object_status(
            NODECLAIM.group, NODECLAIM.version, NODECLAIM.plural, name, claim
        )
        sandbox.core.create_node(
            fleet.node(claim, at, (KWOK_NODE_ANNOTATION, KWOK_NODE_ANNOTATION_VALUE))
        )
        staged[name] = claim
    sandbox.log(
        f"staged {REPLICAS} Karpenter NodeClaims, Nodes and instances "
        f"({CURRENT} current, 1 from an older template)"
    )
    return staged


def _live_claims(sandbox: Sandbox) -> dict[str, Obj]:
    return {
        c["metadata"]["name"]: c
        for c in sandbox.nodeclaims()
        if (c["metadata"].get("labels") or {}).get("karpenter.sh/nodepool") == POOL
        and not c["metadata"].get("deletionTimestamp")
    }


def _pool_instances(sandbox: Sandbox) -> set[str]:
    return {i.id for i in sandbox.instances.list_owned(POOL)}


def _query_rounds(sandbox: Sandbox, which: str) -> int | None:
    """``rounds`` from the cluster's disruption or garbage-collection workflow's status
    query; None while no worker answers queries yet (just started)."""
    from temporalio.client import Client

    from models import contract

    temporal = sandbox.stack.temporal
    assert temporal is not None
    cluster = sandbox.stack.options.cluster_name
    workflow_id = (
        contract.garbage_collection_id(cluster)
        if which == "garbage"
        else contract.disruption_id(cluster)
    )

    async def read() -> int:
        client = await Client.connect(temporal.address, namespace=temporal.namespace)
        status: dict[str, Any] = await client.get_workflow_handle(workflow_id).query(
            contract.QUERY_STATUS
        )
        return int(status.get("rounds", 0))

    try:
        return asyncio.run(read())
    except Exception:  # RPCError "no poller seen": the worker is still starting
        return None


def _rounds(sandbox: Sandbox, which: str, deadline: float) -> int:
    """``_query_rounds`` once a worker answers."""
    found: list[int] = []

    def answered() -> bool:
        value = _query_rounds(sandbox, which)
        if value is not None:
            found.append(value)
        return bool(found)

    sandbox.wait(f"the {which} workflow's status", answered, timeout=min(60.0, time_left(deadline)))
    return found[0]


def _adoption(
    sandbox: Sandbox, summary: Summary, staged: dict[str, Obj], gc_before: int, deadline: float
) -> None:
    names = list(staged)
    current, stale = names[:CURRENT], names[CURRENT]
    instances = {str(c["status"]["providerID"]).rsplit("/", 1)[-1] for c in staged.values()}
    sandbox.stack.start_worker()
    rounds_before = _rounds(sandbox, "disruption", deadline)
    seen_terminated: set[str] = set()
    rolled: dict[str, str] = {}

    def adopted() -> bool:
        live = _live_claims(sandbox)
        now = _pool_instances(sandbox)
        seen_terminated.update(instances - now - {_instance(staged[stale])})
        for name in current:
            claim = live.get(name)
            if claim is None or claim["metadata"]["uid"] != staged[name]["metadata"]["uid"]:
                rolled[name] = "deleted or replaced"
            elif _drifted(claim):
                rolled[name] = _drifted(claim)
        if rolled or seen_terminated:
            raise ScenarioFailed(f"adoption rolled {rolled} / terminated {sorted(seen_terminated)}")
        restamped = all(
            (live[n]["metadata"].get("annotations") or {}).get(
                nodepool_hash.HASH_VERSION_ANNOTATION
            )
            == nodepool_hash.HASH_VERSION
            for n in current
        )
        return (
            restamped
            and stale not in live
            and len(live) == REPLICAS
            and (_query_rounds(sandbox, "garbage") or 0) > gc_before
            and (_query_rounds(sandbox, "disruption") or 0) >= rounds_before + 2
        )

    began = time.monotonic()
    sandbox.wait(
        "adoption: claims re-stamped, the stale one replaced, a GC round and two disruption rounds",
        adopted,
        timeout=time_left(deadline),
        interval=1.0,
    )
    live = _live_claims(sandbox)
    new = set(live) - set(current)
    if len(new) != 1:
        raise ScenarioFailed(f"adoption launched {sorted(new)}, expected one replacement")
    # The current claims' instances all run, and one more (the stale one's replacement; the
    # stale instance itself may still be terminating).
    running = _pool_instances(sandbox)
    if not instances - {_instance(staged[stale])} <= running or len(running - instances) != 1:
        raise ScenarioFailed(f"after adoption the pool runs instances {sorted(running)}")
    summary.extra.update(
        adopted=CURRENT,
        restamped=CURRENT,
        rolledOnAdoption=len(rolled),
        staleReplaced=1,
        instancesTerminatedOnAdoption=len(seen_terminated),
        gcRoundsDuringAdoption=_rounds(sandbox, "garbage", deadline) - gc_before,
        secondsToAdopted=round(time.monotonic() - began, 1),
    )
    sandbox.log(f"adopted {CURRENT} claims untouched; stale {stale} replaced by {sorted(new)}")


def _instance(claim: Obj) -> str:
    return str(claim["status"]["providerID"]).rsplit("/", 1)[-1]


def _drifted(claim: Obj) -> str:
    """The claim's Drifted condition as ``reason: message`` ("" when not drifted)."""
    for c in (claim.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Drifted" and c.get("status") == "True":
            return f"{c.get('reason')}: {c.get('message')}"
    return ""


def _drift(
    sandbox: Sandbox, summary: Summary, namespace: str, selector: str, deadline: float
) -> None:
    before = set(_live_claims(sandbox))
    patch_nodepool(sandbox, POOL, {"spec": {"template": {"metadata": {"labels": DRIFT_LABEL}}}})
    sandbox.log(f"template label added: {len(before)} nodes drift")

    def rolled() -> bool:
        live = _live_claims(sandbox)
        pods = sandbox.running(sandbox.pods(namespace, selector))
        return (
            not (set(live) & before)
            and len(live) == REPLICAS
            and len(pods) == REPLICAS
            and all(
                (c["metadata"].get("labels") or {}).items() >= DRIFT_LABEL.items()
                for c in live.values()
            )
        )

    sandbox.wait("every drifted node replaced", rolled, timeout=time_left(deadline), interval=1.0)
    summary.extra["driftRolled"] = len(before)


def _consolidation(
    sandbox: Sandbox, summary: Summary, namespace: str, selector: str, deadline: float
) -> None:
    sandbox.apps.patch_namespaced_deployment_scale(APP, namespace, {"spec": {"replicas": 1}})
    sandbox.log(f"scaled {APP} to 1: {REPLICAS - 1} nodes empty")

    def consolidated() -> bool:
        return len(_live_claims(sandbox)) == 1 and len(_pool_instances(sandbox)) == 1

    sandbox.wait(
        "empty nodes consolidated", consolidated, timeout=time_left(deadline), interval=1.0
    )
    summary.pods = 1
    summary.extra["nodesAfterConsolidation"] = 1
