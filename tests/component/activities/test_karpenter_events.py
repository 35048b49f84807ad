"""Karpenter's events, each on its trigger, read back from the Events API of the real control
plane: the termination events (TerminationGracePeriodExpiring, Evicted, Disrupted,
AwaitingVolumeDetachment), the interruption events of its AWS provider, and Nominated."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from activities.deps import Deps
from activities.ec2.interruption import (
    NOOP,
    REBALANCE_RECOMMENDATION,
    SCHEDULED_CHANGE,
    SPOT_INTERRUPTION,
    STATE_CHANGE,
)
from activities.kubernetes import events, nodes, raw
from activities.kubernetes.client import Kube
from activities.kubernetes.retries import retry_conflicts
from activities.lifecycle import drain, interruption_events, termination
from activities.lifecycle.types import BeginTerminationInput, DrainInput, VolumesInput
from activities.planning import pod_events
from activities.planning.types import PlanOutcome
from activities.timestamps import iso, utc_now
from tests.support.cloud import Cloud
from tests.support.initialized_nodes import launched_and_registered
from tests.support.kube_objects import create_claim, create_namespace, create_pod, pod

Told = Callable[..., list[dict[str, Any]]]


@pytest.fixture
def told(admin: Kube) -> Told:
    """The Events about an object (by name, in its namespace) with a reason."""

    def events_of(name: str, reason: str, namespace: str = "default") -> list[dict[str, Any]]:
        listed = raw.call(
            admin.core.list_namespaced_event,
            namespace,
            field_selector=f"involvedObject.name={name},reason={reason}",
        )
        return list(listed.get("items") or [])

    return events_of


def _untainted(admin: Kube, node: str) -> None:
    retry_conflicts(
        lambda: nodes.remove_taint(admin, nodes.get(admin, node), "karpenter.sh/unregistered")
    )


def test_termination_tells_grace_expiring_evicted_disrupted_and_volumes(
    deps: Deps, admin: Kube, cloud: Cloud, told: Told
) -> None:
    name, node, out = launched_and_registered(deps, admin, "acts", terminationGracePeriod="1h")
    _untainted(admin, node)
    ns = f"t-{uuid.uuid4().hex[:8]}"
    create_namespace(admin, ns)
    create_pod(admin, pod("web-0", ns, node=node))
    held = {"annotations": {"karpenter.sh/do-not-disrupt": "true"}, "labels": {"app": "keep"}}
    create_pod(
        admin,
        pod("keep-0", ns, node=node, metadata=held, spec={"terminationGracePeriodSeconds": 30}),
    )

    start = termination.begin(
        deps, BeginTerminationInput(name, "", "Expired", "test", out.provider_id)
    )
    assert start.grace_deadline is not None
    for kind_name in (node, name):
        (expiring,) = told(kind_name, "TerminationGracePeriodExpiring")
        assert expiring["type"] == "Warning"
        assert expiring["message"] == f"All pods will be deleted by {start.grace_deadline}"

    status = drain.drain_pass(deps, DrainInput(name, node, start.grace_deadline))
    assert status.evicted == [f"{ns}/web-0"] and status.held == [f"{ns}/keep-0"]
    (evicted,) = told("web-0", "Evicted", ns)
    assert evicted["message"] == "Evicted pod: Expired"
    assert evicted["involvedObject"]["kind"] == "Pod"
    assert not told("keep-0", "Evicted", ns)

    # 10 s before the deadline a pod with a 30 s grace period is deleted, and told why
    soon = iso(utc_now() + timedelta(seconds=10))
    last = drain.drain_pass(deps, DrainInput(name, node, soon))
    assert last.deleted == [f"{ns}/keep-0"]
    (disrupted,) = told("keep-0", "Disrupted", ns)
    assert disrupted["message"].startswith(
        f"Deleting the pod to accommodate the terminationTime {soon}"
    )
    assert "of its 30 terminationGracePeriodSeconds" in disrupted["message"]

    attachment = f"va-{uuid.uuid4().hex[:8]}"
    raw.call(
        admin.storage.create_volume_attachment,
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "VolumeAttachment",
            "metadata": {"name": attachment},
            "spec": {
                "attacher": "ebs.csi.aws.com",
                "nodeName": node,
                "source": {"persistentVolumeName": f"pv-{attachment}"},
            },
        },
    )
    assert termination.volumes_attached(deps, VolumesInput(name, node)) == 1
    (awaiting,) = told(node, "AwaitingVolumeDetachment")
    assert awaiting["message"] == f"Awaiting deletion of bound volumeattachments ({attachment})"


def test_a_claim_without_a_grace_period_tells_no_expiry(
    deps: Deps, admin: Kube, told: Told
) -> None:
    name, node, out = launched_and_registered(deps, admin, "acts")
    start = termination.begin(deps, BeginTerminationInput(name, "", "Deleted", "", out.provider_id))
    assert start.grace_deadline is None
    assert not told(node, "TerminationGracePeriodExpiring")
    assert not told(name, "TerminationGracePeriodExpiring")


@pytest.mark.parametrize(
    ("kind", "detail", "reason", "warning", "message"),
    [
        (
            SPOT_INTERRUPTION,
            "terminate",
            "SpotInterrupted",
            True,
            "Spot interruption warning was triggered",
        ),
        (
            REBALANCE_RECOMMENDATION,
            "",
            "SpotRebalanceRecommendation",
            False,
            "Spot rebalance recommendation was triggered",
        ),
        (STATE_CHANGE, "stopping", "InstanceStopping", True, "Instance is stopping"),
        (STATE_CHANGE, "terminated", "InstanceTerminating", True, "Instance is terminating"),
        (
            SCHEDULED_CHANGE,
            "AWS_EC2_SYSTEM_REBOOT_MAINTENANCE_SCHEDULED",
            "InstanceUnhealthy",
            True,
            "An unhealthy warning was triggered for the instance",
        ),
    ],
)
def test_each_interruption_message_tells_karpenters_event(
    admin: Kube, told: Told, kind: str, detail: str, reason: str, warning: bool, message: str
) -> None:
    claim, node = f"int-{uuid.uuid4().hex[:6]}", f"node-{uuid.uuid4().hex[:6]}"
    draining = kind != REBALANCE_RECOMMENDATION
    said = interruption_events.tell(admin, kind, detail, node, claim, draining)
    assert said[0] == reason
    for name in (node, claim):
        (event,) = told(name, reason)
        assert event["message"] == message
        assert event["type"] == ("Warning" if warning else "Normal")
    if draining:
        (on_claim,) = told(claim, "TerminatingOnInterruption")
        assert on_claim["message"] == "Interruption triggered termination for the NodeClaim"
        (on_node,) = told(node, "TerminatingOnInterruption")
        assert on_node["message"] == "Interruption triggered termination for the Node"
        assert on_node["involvedObject"]["kind"] == "Node"
    else:  # a rebalance recommendation drains nothing
        assert not told(claim, "TerminatingOnInterruption")


def test_a_message_about_nothing_tells_nothing() -> None:
    assert interruption_events.what(NOOP) is None


def test_nominated_pods_are_told_where_they_should_schedule_once(admin: Kube, told: Told) -> None:
    ns = f"t-{uuid.uuid4().hex[:8]}"
    create_namespace(admin, ns)
    made = create_pod(admin, pod("web-0", ns))
    create_pod(admin, pod("web-1", ns))
    claim = f"nom-{uuid.uuid4().hex[:6]}"
    create_claim(admin, claim, "acts")
    outcome = PlanOutcome(
        nominated={f"{ns}/web-0": f"nodeclaim/{claim}", f"{ns}/web-1": "node/node-a"},
        pod_uids={f"{ns}/web-0": made["metadata"]["uid"]},
    )
    recent = events.Dedupe()
    assert pod_events.nominate(admin, outcome, recent) == 2
    assert pod_events.nominate(admin, outcome, recent) == 0  # within Karpenter's window
    (first,) = told("web-0", "Nominated", ns)
    assert first["message"] == f"Pod should schedule on: nodeclaim/{claim}"
    assert first["involvedObject"]["uid"] == made["metadata"]["uid"]
    assert first["type"] == "Normal"
    (second,) = told("web-1", "Nominated", ns)
    assert second["message"] == "Pod should schedule on: node/node-a"
