"""The disruption activities' logic against the real control plane and emulated EC2: the
engine's decision read from a live cluster, pause holding it, marking and unmarking,
replacements' readiness, deleting candidates."""

from __future__ import annotations

import uuid

import pytest
from claim_steps import launched_and_registered
from k8s_objects import (
    condition,
    ensure_nodeclass,
    ensure_nodepool,
    eventually,
)
from temporalio.testing import WorkflowEnvironment
from workflow_realparts import Cloud

from activities.disruption import compute, marking, replacements
from activities.disruption.types import ComputeInput, LaunchInput, MarkInput
from activities.kubernetes import custom_objects, nodeclaims, nodes
from activities.kubernetes.client import Kube
from activities.kubernetes.errors import NotFound
from activities.kubernetes.resources import NODEPOOL
from activities.lifecycle import claims, initialization
from activities.lifecycle.common import Deps
from activities.lifecycle.types import InitializeInput
from activities.planning.types import PlannedNodeClaim
from models import contract
from models import labels as L
from models.nodepool import NodePool
from models.nodepool_hash import hash_annotations


@pytest.fixture
def deps(kube: Kube, admin: Kube, cloud: Cloud) -> Deps:
    ensure_nodeclass(admin)
    ensure_nodepool(admin, "acts")
    return Deps(kube=kube, ec2=cloud.provider)


def _initialized(deps: Deps, admin: Kube, pool: str = "acts") -> tuple[str, str]:
    name, node, _ = launched_and_registered(deps, admin, pool)
    claim = claims.prepare(deps, name)
    assert claim is not None
    eventually(lambda: initialization.initialize(deps, InitializeInput(claim, node)).initialized)
    return name, node


def _taints(admin: Kube, node: str) -> set[tuple[str, str]]:
    return {(t["key"], t["effect"]) for t in nodes.get(admin, node)["spec"].get("taints", [])}


def test_mark_and_unmark(deps: Deps, admin: Kube) -> None:
    name, node = _initialized(deps, admin)
    inp = MarkInput("Underutilized", [node, "no-such-node"], [name, "no-such-claim"], "why")
    assert marking.mark(deps, inp) == 1
    assert marking.mark(deps, inp) == 1  # idempotent
    assert (L.DISRUPTED_TAINT_KEY, "NoSchedule") in _taints(admin, node)
    reason = condition(nodeclaims.get(admin, name), "DisruptionReason")
    assert reason is not None and reason["reason"] == "Underutilized"
    assert reason["message"] == "why"
    assert marking.unmark(deps, inp) == 1
    assert (L.DISRUPTED_TAINT_KEY, "NoSchedule") not in _taints(admin, node)
    assert condition(nodeclaims.get(admin, name), "DisruptionReason") is None
    # the lifecycle conditions are untouched
    assert condition(nodeclaims.get(admin, name), "Initialized")["status"] == "True"  # type: ignore[index]


def test_an_empty_node_is_decided_and_a_pause_holds_it(deps: Deps, admin: Kube) -> None:
    pool = f"empty-{uuid.uuid4().hex[:6]}"
    ensure_nodepool(admin, pool)
    name, _ = _initialized(deps, admin, pool)

    def mine(inp: ComputeInput) -> list[str]:
        decision = compute.compute(deps, inp)
        # emptiness deletes every empty node of the round in one command, so other tests'
        # empty nodes may share it
        made = [
            f"{c.reason}:{len(c.replacements)}"
            for c in decision.commands
            if name in c.claims and pool in c.pools
        ]
        return made + [h for h in decision.held if f"{pool} paused" in h]

    assert eventually(lambda: mine(ComputeInput())) == ["Empty:0"]
    held = mine(ComputeInput(paused_pools=[pool]))
    assert len(held) == 1 and "empty node" in held[0] and held[0].endswith(f"{pool} paused)")
    held = compute.compute(deps, ComputeInput(paused_all=True))
    assert not held.commands and held.held


@pytest.mark.asyncio(loop_scope="session")
async def test_replacements_launch_and_report_readiness(
    deps: Deps, admin: Kube, dev_env: WorkflowEnvironment
) -> None:
    pool = NodePool.model_validate(custom_objects.get(admin, NODEPOOL, "acts"))
    name = f"acts-{uuid.uuid4().hex[:6]}"
    body = {
        "metadata": {
            "name": name,
            "labels": {L.NODEPOOL: "acts"},
            "annotations": hash_annotations(pool),
        },
        "spec": {
            "nodeClassRef": {
                "group": "karpenter.k8s.aws",
                "kind": "EC2NodeClass",
                "name": "default",
            },
            "requirements": [
                {"key": L.INSTANCE_TYPE, "operator": "In", "values": ["m5.large"]},
            ],
            "resources": {"requests": {"cpu": "1"}},
        },
    }
    inp = LaunchInput([PlannedNodeClaim(name, "acts", body, ["m5.large"], price=0.1)])
    queue = f"nobody-{name}"  # no worker: the lifecycle is started, not run
    assert await replacements.launch(dev_env.client, deps, queue, inp) == [name]
    # a retry finds its own claim and the lifecycle it started
    assert await replacements.launch(dev_env.client, deps, queue, inp) == [name]
    lifecycle = dev_env.client.get_workflow_handle(contract.nodeclaim_id(deps.cluster, name))
    described = await lifecycle.describe()
    assert described.task_queue == queue and described.workflow_type == "NodeClaim"
    await lifecycle.terminate("test over")
    made = nodeclaims.get(admin, name)
    assert made["metadata"]["annotations"] == hash_annotations(pool)
    state = replacements.readiness(deps, [name, "no-such-claim"])
    assert state.pending == [name] and "no-such-claim" in state.failed
    assert replacements.delete(deps, [name, "no-such-claim"]) == 2
    with pytest.raises(NotFound):
        # no finalizer was added (no lifecycle ran), so the claim is gone at once
        nodeclaims.get(admin, name)
