"""The garbage-collection activities' logic against the real control plane and emulated EC2:
an orphan instance terminated after the grace period and not before; a claim whose instance
was terminated behind Joinery's back removed (and its lifecycle's termination ending without
a drain); a deleted NodePool's claims removed; an unused launch template deleted."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import timedelta

import pytest

from activities.deps import Deps
from activities.ec2.launch_templates import LT_ID_TAG, TAG_CLUSTER
from activities.garbage import (
    claims_without_instance,
    claims_without_nodepool,
    launch_templates,
    orphan_instances,
)
from activities.garbage.types import CollectInput
from activities.kubernetes import conditions as cond
from activities.kubernetes import custom_objects, nodeclaims, nodes
from activities.kubernetes.client import Kube
from activities.kubernetes.errors import NotFound
from activities.kubernetes.resources import NODEPOOL
from activities.lifecycle import claims, termination
from activities.lifecycle.types import (
    BeginTerminationInput,
    FinalizeInput,
    InstanceInput,
    LaunchOutcome,
)
from activities.timestamps import utc_now
from models import labels as L
from tests.support.cloud import Cloud
from tests.support.initialized_nodes import launched_and_registered
from tests.support.kube_objects import (
    CLUSTER,
    create_claim,
    ensure_nodepool,
    kill_node,
)
from tests.support.waiting import eventually

GRACE = CollectInput()


@pytest.fixture
def deps_pool() -> str:
    return "gc"


def _launched(deps: Deps, admin: Kube) -> tuple[str, LaunchOutcome, str]:
    name, node, out = launched_and_registered(deps, admin, "gc")
    return name, out, node


def _gone(read: Callable[[], object]) -> bool:
    try:
        read()
    except NotFound:
        return True
    return False


def test_an_orphan_instance_is_terminated_after_the_grace_period_and_not_before(
    deps: Deps, admin: Kube, cloud: Cloud
) -> None:
    kept, kept_launch, _ = _launched(deps, admin)
    name, out, node = _launched(deps, admin)
    # the claim vanishes behind Joinery's back: its finalizer stripped, then deleted
    nodeclaims.delete(admin, name)
    nodeclaims.remove_finalizer(admin, nodeclaims.get(admin, name))
    eventually(lambda: _gone(lambda: nodeclaims.get(admin, name)), what="claim gone")
    launched_at = cloud.provider.instances.get(out.instance_id).launch_time
    assert launched_at is not None

    early = orphan_instances.collect(deps, GRACE, launched_at + timedelta(seconds=29))
    assert out.instance_id not in early.removed
    assert cloud.instances_of(name) == [out.instance_id]

    late = orphan_instances.collect(deps, GRACE, launched_at + timedelta(seconds=31))
    assert out.instance_id in late.removed
    assert cloud.instances_of(name) == []
    # its Node is deleted and let go of (nothing else holds its finalizer)
    eventually(lambda: _gone(lambda: nodes.get(admin, node)), what="orphan's node gone")
    # an instance whose claim exists is never collected, however old
    assert cloud.instances_of(kept) == [kept_launch.instance_id]
    again = orphan_instances.collect(deps, GRACE, utc_now() + timedelta(hours=1))
    assert kept_launch.instance_id not in again.removed and out.instance_id not in again.removed


def test_a_claim_whose_instance_was_terminated_behind_joinerys_back_is_removed(
    deps: Deps, admin: Kube, cloud: Cloud
) -> None:
    name, out, node = _launched(deps, admin)
    cloud.clients.ec2.terminate_instances(InstanceIds=[out.instance_id])
    # within the grace after its launch, the claim is not even looked at
    assert name not in claims_without_instance.collect(deps, GRACE, utc_now()).removed
    later = utc_now() + timedelta(seconds=31)
    # its Node is still Ready: a live kubelet outweighs what the cloud API says (Karpenter)
    eventually(lambda: cond.is_true(nodes.get(admin, node), "Ready"), what="node Ready")
    held = claims_without_instance.collect(deps, GRACE, later)
    assert name in held.waiting and name not in held.removed
    assert not nodeclaims.get(admin, name)["metadata"].get("deletionTimestamp")

    kill_node(admin, node)
    eventually(lambda: not cond.is_true(nodes.get(admin, node), "Ready"), what="NotReady")
    removed = claims_without_instance.collect(deps, GRACE, later)
    assert name in removed.removed
    claim = nodeclaims.get(admin, name)
    assert claim["metadata"].get("deletionTimestamp")  # the finalizer holds it for the lifecycle

    # the lifecycle's termination: the dead node is not drained, the instance is already gone
    start = termination.begin(
        deps,
        BeginTerminationInput(name, claim["metadata"]["uid"], "Deleted", "", out.provider_id),
    )
    assert start.node_name == node and start.instance_gone
    assert termination.terminate_instance(deps, InstanceInput(name, out.provider_id)) is True
    termination.finalize(deps, FinalizeInput(name, node, "Deleted"))
    eventually(lambda: _gone(lambda: nodeclaims.get(admin, name)), what="claim removed")
    eventually(lambda: _gone(lambda: nodes.get(admin, node)), what="node removed")


def test_the_pass_records_where_an_adopted_claims_instance_was_placed(
    deps: Deps, admin: Kube, cloud: Cloud
) -> None:
    name, out, _ = _launched(deps, admin)
    placed = {
        k: v
        for k, v in nodeclaims.get(admin, name)["metadata"]["annotations"].items()
        if k in (L.SUBNET_ID_ANNOTATION, L.SECURITY_GROUP_IDS_ANNOTATION)
    }
    assert set(placed) == {L.SUBNET_ID_ANNOTATION, L.SECURITY_GROUP_IDS_ANNOTATION}
    # as Karpenter (or an older Joinery) launched it: no placement recorded
    nodeclaims.patch_metadata(admin, name, annotations=dict.fromkeys(placed))
    claims_without_instance.collect(deps, GRACE, utc_now())
    noted = nodeclaims.get(admin, name)["metadata"]["annotations"]
    assert {k: noted.get(k) for k in placed} == placed  # what the launch had recorded
    instance = cloud.provider.instances.get(out.instance_id)
    assert noted[L.SUBNET_ID_ANNOTATION] == instance.subnet_id
    # a recorded placement is never rewritten from EC2
    nodeclaims.patch_metadata(admin, name, annotations={L.SUBNET_ID_ANNOTATION: "subnet-kept"})
    claims_without_instance.collect(deps, GRACE, utc_now())
    kept = nodeclaims.get(admin, name)["metadata"]["annotations"]
    assert kept[L.SUBNET_ID_ANNOTATION] == "subnet-kept"


def test_a_live_nodes_termination_still_drains(deps: Deps, admin: Kube) -> None:
    name, out, node = _launched(deps, admin)
    eventually(lambda: cond.is_true(nodes.get(admin, node), "Ready"), what="node Ready")
    uid = nodeclaims.get(admin, name)["metadata"]["uid"]
    start = termination.begin(
        deps, BeginTerminationInput(name, uid, "Deleted", "", out.provider_id)
    )
    assert start.node_name == node and not start.instance_gone


def test_the_claims_of_a_deleted_nodepool_are_removed(deps: Deps, admin: Kube) -> None:
    pool = f"gone-{uuid.uuid4().hex[:6]}"
    ensure_nodepool(admin, pool)
    doomed = f"{pool}-a"
    create_claim(admin, doomed, pool)  # by hand: no owner reference for Kubernetes to follow
    assert claims.prepare(deps, doomed) is not None  # Joinery's finalizer on it
    other = f"gc-{uuid.uuid4().hex[:6]}"
    create_claim(admin, other, "gc")
    assert claims_without_nodepool.collect(deps, GRACE, utc_now()).removed.count(doomed) == 0

    custom_objects.delete(admin, NODEPOOL, pool)
    eventually(lambda: _gone(lambda: custom_objects.get(admin, NODEPOOL, pool)), what="pool gone")
    result = claims_without_nodepool.collect(deps, GRACE, utc_now())
    assert doomed in result.removed and other not in result.removed
    assert nodeclaims.get(admin, doomed)["metadata"].get("deletionTimestamp")
    assert not nodeclaims.get(admin, other)["metadata"].get("deletionTimestamp")
    # idempotent: a claim already being deleted is not deleted again
    assert doomed not in claims_without_nodepool.collect(deps, GRACE, utc_now()).removed


def test_an_unused_launch_template_is_deleted(deps: Deps, admin: Kube, cloud: Cloud) -> None:
    _, out, _ = _launched(deps, admin)
    in_use = cloud.provider.instances.get(out.instance_id).tags[LT_ID_TAG]
    unused = f"joinery-gc-{uuid.uuid4().hex[:6]}"
    cloud.clients.ec2.create_launch_template(
        LaunchTemplateName=unused,
        LaunchTemplateData={"InstanceType": "m5.large"},
        TagSpecifications=[
            {"ResourceType": "launch-template", "Tags": [{"Key": TAG_CLUSTER, "Value": CLUSTER}]}
        ],
    )

    def names() -> set[str]:
        listed = cloud.clients.ec2.describe_launch_templates()["LaunchTemplates"]
        return {t["LaunchTemplateName"] for t in listed}

    # young: a launch may be about to use it
    assert unused not in launch_templates.collect(deps, GRACE, utc_now()).removed
    assert unused in names()
    result = launch_templates.collect(deps, GRACE, utc_now() + timedelta(minutes=10))
    assert unused in result.removed and unused not in names()
    listed = cloud.clients.ec2.describe_launch_templates()["LaunchTemplates"]
    assert in_use in {t["LaunchTemplateId"] for t in listed}


def _reserved(admin: Kube, name: str, node: str, reservation: str, kind: str) -> None:
    """The claim and its node as a launch into ``reservation`` labels them."""
    labels = {
        L.CAPACITY_TYPE: L.CAPACITY_TYPE_RESERVED,
        L.CAPACITY_RESERVATION_ID: reservation,
        L.CAPACITY_RESERVATION_TYPE: kind,
        L.CAPACITY_RESERVATION_INTERRUPTIBLE: "false",
    }
    nodeclaims.patch_metadata(admin, name, labels=labels)
    nodes.patch_metadata(admin, node, labels=labels)


def test_an_ended_reservations_claims_become_on_demand(
    deps: Deps, admin: Kube, cloud: Cloud
) -> None:
    name, out, node = _launched(deps, admin)
    rid = cloud.emulation.reservations.add(out.instance_type, out.zone, 1)
    _reserved(admin, name, node, rid, "default")
    claims_without_instance.collect(deps, GRACE, utc_now())
    assert nodeclaims.get(admin, name)["metadata"]["labels"][L.CAPACITY_TYPE] == "reserved"
    cloud.emulation.reservations.cancel(rid)
    claims_without_instance.collect(deps, GRACE, utc_now())
    for labels in (
        nodeclaims.get(admin, name)["metadata"]["labels"],
        nodes.get(admin, node)["metadata"]["labels"],
    ):
        assert labels[L.CAPACITY_TYPE] == "on-demand"
        assert not set(L.RESERVATION_LABELS) & set(labels)


def test_an_expiring_capacity_blocks_claims_are_deleted(
    deps: Deps, admin: Kube, cloud: Cloud
) -> None:
    name, out, node = _launched(deps, admin)
    end = utc_now() + timedelta(minutes=35)  # within Karpenter's 40 minutes
    rid = cloud.emulation.reservations.add(
        out.instance_type, out.zone, 1, reservation_type="capacity-block", end=end
    )
    _reserved(admin, name, node, rid, "capacity-block")
    claims_without_instance.collect(deps, GRACE, utc_now())
    assert nodeclaims.get(admin, name)["metadata"].get("deletionTimestamp")
