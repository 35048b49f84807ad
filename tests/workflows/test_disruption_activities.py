"""The disruption activities' logic against the real control plane and emulated EC2: the
engine's decision read from a live cluster, pause holding it, marking and unmarking,
replacements' readiness, deleting candidates."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from temporalio.testing import WorkflowEnvironment

from activities.deps import Deps
from activities.disruption import compute, marking, replacements
from activities.disruption import events as disruption_events
from activities.disruption.types import ComputeInput, LaunchInput, MarkInput
from activities.kubernetes import custom_objects, nodeclaims, nodes, raw
from activities.kubernetes.client import Kube
from activities.kubernetes.errors import NotFound
from activities.kubernetes.resources import NODEPOOL
from activities.planning.types import PlannedNodeClaim
from models import contract
from models import labels as L
from models.nodepool import NodePool
from models.nodepool_hash import hash_annotations
from scheduling.disruption.types import NodeVerdict
from tests.support.initialized_nodes import initialized_node
from tests.support.kube_objects import (
    M5,
    condition,
    create_claim,
    ensure_nodepool,
    nodeclaim,
)
from tests.support.manifests import nodepool_body
from tests.support.waiting import eventually
from worker.running.metrics import PrometheusCounters


def _initialized(deps: Deps, admin: Kube, pool: str = "acts") -> tuple[str, str]:
    return initialized_node(deps, admin, pool)


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
    decision = compute.compute(deps, ComputeInput(paused_all=True))
    assert not decision.commands and decision.held


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


# -- events and metrics, as Karpenter users read them ---------------------------------------


@pytest.fixture
def metered(deps: Deps) -> Deps:
    """The activities' deps with the worker's Prometheus hooks."""
    return Deps(kube=deps.kube, cloud=deps.cloud, counters=PrometheusCounters())


@pytest.fixture
def told(admin: Kube) -> Callable[[str, str], list[dict[str, Any]]]:
    """The Events about an object (by name) with a reason."""

    def events_of(name: str, reason: str) -> list[dict[str, Any]]:
        listed = raw.call(
            admin.core.list_namespaced_event,
            "default",
            field_selector=f"involvedObject.name={name},reason={reason}",
        )
        return list(listed.get("items") or [])

    return events_of


def test_a_budget_that_allows_nothing_blocks_and_says_so(
    metered: Deps, admin: Kube, told: Any, metrics_url: str, scrape: Any
) -> None:
    """DisruptionBlocked on the pool, its node and claim (once, however many rounds), the
    pool's allowed disruptions 0, the round timed and its candidates counted."""
    deps = metered
    pool = f"frozen-{uuid.uuid4().hex[:6]}"
    frozen = {"budgets": [{"nodes": "0"}], "consolidateAfter": "0s"}
    custom_objects.create(admin, NODEPOOL, nodepool_body(pool, requirements=M5, disruption=frozen))
    name, node = _initialized(deps, admin, pool)
    evaluated = "karpenter_voluntary_disruption_decision_evaluation_duration_seconds_count"
    before = scrape(metrics_url).value(evaluated)
    compute.compute(deps, ComputeInput())
    compute.compute(deps, ComputeInput())  # a second round tells nothing new
    on_pool = eventually(lambda: told(pool, "DisruptionBlocked"), what="pool event")
    assert on_pool[0]["message"].startswith("No allowed disruptions due to blocking budget")
    assert on_pool[0]["involvedObject"]["kind"] == "NodePool"
    on_node = eventually(lambda: told(node, "DisruptionBlocked"), what="node event")
    assert on_node[0]["message"] == (
        f"Cannot disrupt Node: nodepool {pool} budget allows no disruption now "
        "(1 initialized node(s), 0 already disrupting)"
    )
    assert on_node[0]["involvedObject"]["uid"] == nodes.get(admin, node)["metadata"]["uid"]
    on_claim = told(name, "DisruptionBlocked")
    assert on_claim[0]["message"].startswith("Cannot disrupt NodeClaim: nodepool")
    assert [e.get("count") for e in on_node + on_claim + on_pool] == [1, 1, 1]
    m = scrape(metrics_url)
    assert m.value(evaluated) == before + 2
    for reason in ("empty", "underutilized", "drifted"):
        assert m.has("karpenter_nodepools_allowed_disruptions", nodepool=pool, reason=reason)
        assert m.value("karpenter_nodepools_allowed_disruptions", nodepool=pool, reason=reason) == 0
    assert m.value("karpenter_voluntary_disruption_eligible_nodes", reason="empty") >= 0
    assert m.has("karpenter_voluntary_disruption_eligible_nodes", reason="underutilized")


def test_kept_nodes_are_told_unconsolidatable(deps: Deps, admin: Kube, told: Any) -> None:
    kube = deps.kube
    name = f"kept-{uuid.uuid4().hex[:6]}"
    create_claim(admin, name, "acts")
    subject = disruption_events.Subject("", name)
    verdict = NodeVerdict(name, "no cheaper way to run its pods was found")
    assert disruption_events.verdicts(kube, [], [verdict], {name: subject}, {}) == 1
    assert disruption_events.verdicts(kube, [], [verdict], {name: subject}, {}) == 0
    (event,) = told(name, "Unconsolidatable")
    assert event["message"] == "no cheaper way to run its pods was found"
    assert event["involvedObject"]["uid"] == nodeclaims.get(admin, name)["metadata"]["uid"]
    nodeclaims.delete(admin, name)


def test_a_command_tells_terminating_and_counts_decision_and_disruption(
    metered: Deps, admin: Kube, told: Any, metrics_url: str, scrape: Any
) -> None:
    deps = metered
    pool = f"cmd-{uuid.uuid4().hex[:6]}"
    ensure_nodepool(admin, pool)
    name, node = _initialized(deps, admin, pool)
    decisions = "karpenter_voluntary_disruption_decisions_total"
    labels = {"decision": "delete", "reason": "empty", "consolidation_type": "empty"}
    before = scrape(metrics_url)
    marking.mark(deps, MarkInput("Empty", [node], [name], "delete 1 empty node"))
    assert replacements.delete(deps, [name]) == 1
    assert replacements.delete(deps, [name]) == 1  # a retry counts and tells nothing more
    on_node = eventually(lambda: told(node, "DisruptionTerminating"), what="node event")
    assert on_node[0]["message"] == "Disrupting Node: Empty"
    (on_claim,) = told(name, "DisruptionTerminating")
    assert on_claim["message"] == "Disrupting NodeClaim: Empty"
    m = scrape(metrics_url)
    assert m.value(decisions, **labels) == before.value(decisions, **labels) + 1
    by_pool = "karpenter_voluntary_disruption_decisions_by_nodepool_total"
    assert m.value(by_pool, nodepool=pool, **labels) == 1
    assert m.value("karpenter_nodeclaims_disrupted_total", nodepool=pool, reason="empty") == 1
    transitions = "operator_nodeclaim_status_condition_transitions_total"
    for step in ("Launched", "Registered", "Initialized"):
        done = {"type": step, "status": "True", "karpenter_sh_nodepool": pool}
        assert m.value(transitions, **done) == 1
    assert m.value("karpenter_nodes_created_total", nodepool=pool) == 1
    # undoing a command counts a queue failure
    failures = "karpenter_voluntary_disruption_queue_failures_total"
    marking.unmark(deps, MarkInput("Underutilized", ["no-such-node"], [], replacements=1))
    undone = {"decision": "replace", "reason": "underutilized", "consolidation_type": "single"}
    assert scrape(metrics_url).value(failures, **undone) == m.value(failures, **undone) + 1


@pytest.mark.asyncio(loop_scope="session")
async def test_replacements_tell_launching_and_waiting(
    metered: Deps,
    admin: Kube,
    dev_env: WorkflowEnvironment,
    told: Any,
    metrics_url: str,
    scrape: Any,
) -> None:
    deps = metered
    pool = f"repl-{uuid.uuid4().hex[:6]}"
    ensure_nodepool(admin, pool)
    name = f"{pool}-r"
    body = nodeclaim(name, pool)
    inp = LaunchInput([PlannedNodeClaim(name, pool, body, ["m5.large"])], reason="Drifted")
    queue = f"nobody-{name}"
    await replacements.launch(dev_env.client, deps, queue, inp)
    await dev_env.client.get_workflow_handle(contract.nodeclaim_id(deps.cluster, name)).terminate(
        "test over"
    )
    (launching,) = told(name, "DisruptionLaunching")
    assert launching["message"] == "Launching NodeClaim: Drifted"
    assert replacements.readiness(deps, [name]).pending == [name]
    assert replacements.readiness(deps, [name]).pending == [name]
    (waiting,) = told(name, "DisruptionWaitingReadiness")
    assert waiting["message"] == "Waiting on readiness to continue disruption"
    assert waiting["count"] == 1
    m = scrape(metrics_url)
    assert m.value("karpenter_nodeclaims_created_total", nodepool=pool, reason="drifted") == 1
    replacements.delete(deps, [name])  # a replacement is not a disruption
    assert not told(name, "DisruptionTerminating")
    assert not scrape(metrics_url).has("karpenter_nodeclaims_disrupted_total", nodepool=pool)


def test_claims_get_consolidatable_and_drifted_as_karpenter_keeps_them(
    deps: Deps, admin: Kube
) -> None:
    pool = f"cond-{uuid.uuid4().hex[:6]}"
    ensure_nodepool(admin, pool)
    custom_objects.merge_patch(
        admin, NODEPOOL, pool, {"spec": {"disruption": {"consolidateAfter": "1h"}}}
    )
    name, _ = _initialized(deps, admin, pool)
    current = NodePool.model_validate(custom_objects.get(admin, NODEPOOL, pool))
    nodeclaims.patch_metadata(admin, name, annotations=hash_annotations(current))

    def conds() -> tuple[dict[str, Any] | None, dict[str, Any] | None, str]:
        claim = nodeclaims.get(admin, name)
        version = str(claim["metadata"]["resourceVersion"])
        return condition(claim, "Consolidatable"), condition(claim, "Drifted"), version

    compute.compute(deps, ComputeInput())
    assert conds()[:2] == (None, None)  # consolidateAfter (1h) has not passed since creation
    custom_objects.merge_patch(
        admin, NODEPOOL, pool, {"spec": {"disruption": {"consolidateAfter": "1s"}}}
    )

    def consolidatable() -> dict[str, Any] | None:
        compute.compute(deps, ComputeInput())
        return conds()[0]

    ready = eventually(consolidatable, what="Consolidatable")
    assert (ready["status"], ready["reason"]) == ("True", "Consolidatable")
    assert conds()[1] is None

    # the pool's template changes: the claim launched from the old one has drifted
    template = {"spec": {"template": {"metadata": {"labels": {"team": "blue"}}}}}
    custom_objects.merge_patch(admin, NODEPOOL, pool, template)
    compute.compute(deps, ComputeInput())
    again, drifted, version = conds()
    assert drifted is not None
    assert (drifted["status"], drifted["reason"]) == ("True", "NodePoolDrifted")
    assert again == ready  # untouched, its lastTransitionTime too
    compute.compute(deps, ComputeInput())
    assert conds()[2] == version  # nothing changed, nothing written

    # changed back: no longer drifted, the condition is removed
    back = {"spec": {"template": {"metadata": {"labels": None}}}}
    custom_objects.merge_patch(admin, NODEPOOL, pool, back)
    compute.compute(deps, ComputeInput())
    assert conds()[:2] == (ready, None)
