"""Pods of nodes that are going away are planned for when the node starts going, as Karpenter's
provisioner counts the pods of deleting nodes: a Node deleting, or its NodeClaim deleting or
``InstanceTerminating``; of its pods, the ones Karpenter would reschedule (not DaemonSet or
mirror pods, not terminating unless a StatefulSet's, not ``do-not-disrupt: "true"``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from activities.kubernetes.object_cache import WatchedObjects
from activities.planning.cluster_state import ClusterState, add_watched
from benchmarks.round_reading import synced
from tests.support.labels import ARCH, CAPACITY_TYPE
from tests.support.manifests import node, nodeclaim, nodepool, pod, req
from tests.support.plans import plan, where

AMD_OD = [req(CAPACITY_TYPE, "In", "on-demand"), req(ARCH, "In", "amd64")]
DELETED_AT = "2026-11-23T11:59:00Z"


def _claim_of(node_name: str, *, deleting: bool = False, terminating: bool = False) -> Any:
    body = nodeclaim(f"{node_name}-claim")
    body["status"] = {"nodeName": node_name, "providerID": f"aws:///us-east-1a/i-{node_name}"}
    if deleting:
        body["metadata"]["deletionTimestamp"] = DELETED_AT
    if terminating:
        body["status"]["conditions"] = [{"type": "InstanceTerminating", "status": "True"}]
    return body


def _node(name: str) -> Any:
    body = node(name, "4", "16Gi", nodepool="default")
    body["spec"]["providerID"] = f"aws:///us-east-1a/i-{name}"
    return body


def _with_meta(body: dict[str, Any], **meta: Any) -> dict[str, Any]:
    body["metadata"].update(meta)
    return body


def _pods_on(node_name: str) -> list[Mapping[str, Any]]:
    sts = pod("db-0", "1", "1Gi", node_name=node_name, owner_kind="StatefulSet")
    return [
        pod("web", "1", "1Gi", node_name=node_name, owner_kind="ReplicaSet"),
        _with_meta(sts, deletionTimestamp=DELETED_AT),  # a StatefulSet's: rescheduled
        _with_meta(
            pod("evicted", "1", "1Gi", node_name=node_name, owner_kind="ReplicaSet"),
            deletionTimestamp=DELETED_AT,
        ),
        _with_meta(
            pod("held", "1", "1Gi", node_name=node_name),
            annotations={"karpenter.sh/do-not-disrupt": "true"},
        ),
        _with_meta(
            pod("static", "100m", node_name=node_name),
            annotations={"kubernetes.io/config.mirror": "x"},
        ),
        pod("logs", "100m", node_name=node_name, owner_kind="DaemonSet"),
    ]


def test_a_node_whose_claim_is_deleted_has_its_reschedulable_pods_planned_for() -> None:
    out = plan(
        [
            nodepool(requirements=AMD_OD),
            _node("old"),
            _claim_of("old", deleting=True),
            *_pods_on("old"),
        ]
    )
    placed = where(out)
    assert set(placed) == {"default/web", "default/db-0"}
    assert all(v.startswith("claim") for v in placed.values())  # not onto the going node
    assert out["existingNodes"] == []


def test_an_instance_terminating_claim_counts_as_going_away() -> None:
    out = plan(
        [
            nodepool(requirements=AMD_OD),
            _node("old"),
            _claim_of("old", terminating=True),
            *_pods_on("old"),
        ]
    )
    assert set(where(out)) == {"default/web", "default/db-0"}


def test_a_node_whose_claim_stays_keeps_its_pods() -> None:
    out = plan([nodepool(requirements=AMD_OD), _node("old"), _claim_of("old"), *_pods_on("old")])
    assert where(out) == {} and out["nodeClaims"] == []


def test_a_going_node_takes_no_pending_pod_even_one_tolerating_everything() -> None:
    anywhere = pod("any", "100m", tolerations=[{"operator": "Exists"}])
    out = plan(
        [nodepool(requirements=AMD_OD), _node("old"), _claim_of("old", deleting=True), anywhere]
    )
    assert where(out)["default/any"].startswith("claim")


def test_an_in_flight_claim_being_deleted_is_no_capacity() -> None:
    going = _with_meta(nodeclaim("launching"), deletionTimestamp=DELETED_AT)
    out = plan([nodepool(requirements=AMD_OD), going, pod("p", "1", "1Gi")])
    assert where(out)["default/p"].startswith("claim")


def test_the_provisioning_input_counts_the_displaced_pods_as_demand() -> None:
    """The activity's reading: no pod is Unschedulable, yet the round has demand (``displaced``)
    and the deleting claim is among the documents, so the solver sees its Node going."""
    objects = [_node("old"), _claim_of("old", deleting=True), *_pods_on("old")]

    def of(kind: str) -> Any:
        return synced([o for o in objects if o["kind"] == kind])

    watched = WatchedObjects(pods=of("Pod"), nodes=of("Node"), nodeclaims=of("NodeClaim"))
    state = ClusterState()

    def unlisted() -> list[Any]:
        raise AssertionError("the watches are synced")

    add_watched(state, watched, unlisted, unlisted, unlisted)
    assert state.pending == 0
    assert state.displaced == 2  # web and the StatefulSet's db-0
    assert any(d.body.get("kind") == "NodeClaim" for d in state.documents)
    # the same claim not deleting: nothing to plan
    objects[1] = _claim_of("old")
    state = ClusterState()
    watched = WatchedObjects(pods=of("Pod"), nodes=of("Node"), nodeclaims=of("NodeClaim"))
    add_watched(state, watched, unlisted, unlisted, unlisted)
    assert state.displaced == 0
