"""A node-repair pass against the real control plane: a node NotReady past its toleration
has its NodeClaim stamped with the termination timestamp and deleted, and the lifecycle's
termination then drains against that deadline; a pool with too many unhealthy nodes is
left alone with a NodeRepairBlocked event. EC2 instance status checks: an impaired instance
is terminated forcefully, one with a scheduled event drained."""

from __future__ import annotations

from datetime import timedelta

import pytest

from activities.deps import Deps
from activities.ec2.instance_status import (
    EVENT_STATUS,
    INSTANCE_STATUS,
    SYSTEM_STATUS,
    Unhealthy,
)
from activities.kubernetes import conditions as cond
from activities.kubernetes import nodeclaims, nodes, raw
from activities.kubernetes.client import Kube
from activities.lifecycle import termination
from activities.lifecycle.types import BeginTerminationInput
from activities.repair.nodes import TERMINATION_TIMESTAMP, instance_status_pass, repair_pass
from activities.timestamps import parse_iso, utc_now
from tests.support.cloud import Cloud
from tests.support.initialized_nodes import launched_and_registered
from tests.support.kube_objects import ensure_nodepool, kill_node
from tests.support.waiting import eventually


@pytest.fixture
def deps_pool() -> str:
    return "repair"


def _not_ready(admin: Kube, node: str) -> None:
    kill_node(admin, node)
    eventually(lambda: not cond.is_true(nodes.get(admin, node), "Ready"), what="NotReady")


def test_a_node_not_ready_past_its_toleration_is_replaced(
    deps: Deps, admin: Kube, cloud: Cloud
) -> None:
    name, node, out = launched_and_registered(deps, admin, "repair")
    _not_ready(admin, node)
    soon = repair_pass(admin, utc_now() + timedelta(minutes=29))
    assert soon.repaired == [] and soon.next_check is not None
    assert not nodeclaims.get(admin, name)["metadata"].get("deletionTimestamp")

    at = utc_now() + timedelta(minutes=31)
    done = repair_pass(admin, at)
    assert done.repaired == [name]
    claim = nodeclaims.get(admin, name)
    assert claim["metadata"].get("deletionTimestamp")  # the finalizer holds it
    stamped = claim["metadata"]["annotations"][TERMINATION_TIMESTAMP]
    # The lifecycle's termination drains against that deadline: pods are deleted, not evicted.
    start = termination.begin(
        deps,
        BeginTerminationInput(name, claim["metadata"]["uid"], "Deleted", "", out.provider_id),
    )
    assert start.grace_deadline is not None
    assert parse_iso(start.grace_deadline) <= parse_iso(stamped)


def test_too_many_unhealthy_nodes_in_a_pool_block_repair(
    deps: Deps, admin: Kube, cloud: Cloud
) -> None:
    ensure_nodepool(admin, "repair-two")
    launched = [launched_and_registered(deps, admin, "repair-two") for _ in range(2)]
    for _, node, _ in launched:
        _not_ready(admin, node)
    pool_nodes = nodes.list_(admin, label_selector="karpenter.sh/nodepool=repair-two")
    sick = [n for n in pool_nodes if not cond.is_true(n, "Ready")]
    assert len(sick) * 5 > len(pool_nodes)  # more than 20% of the pool
    out = repair_pass(admin, utc_now() + timedelta(hours=1))
    assert out.repaired == []
    assert {node for _, node, _ in launched} <= set(out.blocked)
    for name, _, _ in launched:
        assert not nodeclaims.get(admin, name)["metadata"].get("deletionTimestamp")
    events = raw.call(admin.core.list_namespaced_event, "default")["items"]
    assert any(
        e["reason"] == "NodeRepairBlocked" and e["involvedObject"]["name"] == launched[0][1]
        for e in events
    )


def test_an_impaired_instance_is_terminated_forcefully_a_scheduled_event_drained(
    deps: Deps, admin: Kube, cloud: Cloud
) -> None:
    ensure_nodepool(admin, "repair-ec2")
    impaired, _, impaired_out = launched_and_registered(deps, admin, "repair-ec2")
    retiring, _, retiring_out = launched_and_registered(deps, admin, "repair-ec2")
    now = utc_now()
    deleted = instance_status_pass(
        admin,
        [
            Unhealthy(impaired_out.provider_id.rsplit("/", 1)[-1], frozenset({INSTANCE_STATUS})),
            Unhealthy(retiring_out.provider_id.rsplit("/", 1)[-1], frozenset({EVENT_STATUS})),
            Unhealthy("i-not-ours", frozenset({SYSTEM_STATUS})),
        ],
        now,
    )
    assert sorted(deleted) == sorted([impaired, retiring])
    forced = nodeclaims.get(admin, impaired)["metadata"]
    assert forced.get("deletionTimestamp") and TERMINATION_TIMESTAMP in forced["annotations"]
    drained = nodeclaims.get(admin, retiring)["metadata"]
    assert drained.get("deletionTimestamp")
    assert TERMINATION_TIMESTAMP not in (drained.get("annotations") or {})
