"""NodeClaim CRUD, status conditions, finalizers and optimistic concurrency, as Joinery."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from activities.kubernetes import conditions as cond
from activities.kubernetes import custom_objects, nodeclaims, nodepools
from activities.kubernetes.client import Kube
from activities.kubernetes.errors import AlreadyExists, Conflict, Forbidden, Invalid, NotFound
from activities.kubernetes.resources import NODECLAIM, NODEPOOL
from models import conditions as ctypes
from models import labels as L
from tests.support.kube_helpers import ANY_CAPACITY_TYPE
from tests.support.manifests import nodepool_body


def _claim(name: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"karpenter.sh/nodepool": "default"}},
        "spec": {
            "nodeClassRef": {
                "group": "karpenter.k8s.aws",
                "kind": "EC2NodeClass",
                "name": "default",
            },
            "requirements": [
                {"key": "karpenter.sh/nodepool", "operator": "In", "values": ["default"]},
                {
                    "key": "node.kubernetes.io/instance-type",
                    "operator": "In",
                    "values": ["m5.large", "c5.large"],
                },
            ],
            "resources": {"requests": {"cpu": "1100m", "memory": "1Gi", "pods": "3"}},
        },
    }


@pytest.fixture
def claim(kube: Kube, admin: Kube, unique: str) -> Iterator[dict[str, Any]]:
    created = nodeclaims.create(kube, _claim(f"claim-{unique}"))
    yield created
    try:
        current = custom_objects.get(admin, NODECLAIM, created["metadata"]["name"])
        custom_objects.merge_patch(
            admin, NODECLAIM, current["metadata"]["name"], {"metadata": {"finalizers": []}}
        )
        custom_objects.delete(admin, NODECLAIM, current["metadata"]["name"])
    except NotFound:
        pass


def test_create_defaults_and_duplicate_create(kube: Kube, claim: dict[str, Any]) -> None:
    assert claim["spec"]["expireAfter"] == "720h"
    assert claim["metadata"]["uid"]
    with pytest.raises(AlreadyExists):
        nodeclaims.create(kube, _claim(claim["metadata"]["name"]))
    listed, resource_version = nodeclaims.list_(kube, nodepool="default")
    assert claim["metadata"]["name"] in {c["metadata"]["name"] for c in listed}
    assert resource_version


def test_spec_is_immutable(kube: Kube, claim: dict[str, Any]) -> None:
    changed = copy.deepcopy(claim)
    changed["spec"]["resources"]["requests"]["cpu"] = "2"
    with pytest.raises(Invalid) as caught:
        custom_objects.replace(kube, NODECLAIM, changed)
    assert "spec is immutable" in caught.value.message


def test_finalizer_holds_deletion_until_removed(kube: Kube, claim: dict[str, Any]) -> None:
    name = claim["metadata"]["name"]
    held = nodeclaims.add_finalizer(kube, claim)
    assert held["metadata"]["finalizers"] == [L.TERMINATION_FINALIZER]
    assert nodeclaims.add_finalizer(kube, held) == held  # already there: no write

    nodeclaims.delete(kube, name)
    deleting = nodeclaims.get(kube, name)
    assert deleting["metadata"]["deletionTimestamp"]
    assert deleting["metadata"]["finalizers"] == [L.TERMINATION_FINALIZER]

    assert nodeclaims.remove_finalizer(kube, deleting) is None
    with pytest.raises(NotFound):
        nodeclaims.get(kube, name)


def test_stale_resource_version_is_a_typed_conflict(kube: Kube, claim: dict[str, Any]) -> None:
    stale = claim
    nodeclaims.add_finalizer(kube, claim)  # moves resourceVersion on
    with pytest.raises(Conflict) as caught:
        nodeclaims.add_finalizer(kube, stale, "example.com/other")
    assert caught.value.retryable and caught.value.status == 409
    with pytest.raises(Conflict):
        nodeclaims.set_conditions(
            kube, stale, [cond.Condition(ctypes.LAUNCHED, "True", "Launched")]
        )
    stale_update = copy.deepcopy(stale)
    stale_update["metadata"]["labels"]["example.com/x"] = "y"
    with pytest.raises(Conflict):
        custom_objects.replace(kube, NODECLAIM, stale_update)
    # the winner's finalizer is intact
    assert nodeclaims.get(kube, claim["metadata"]["name"])["metadata"]["finalizers"] == [
        L.TERMINATION_FINALIZER
    ]


def test_lifecycle_conditions_and_ready(kube: Kube, claim: dict[str, Any]) -> None:
    launched = nodeclaims.set_conditions(
        kube,
        claim,
        [cond.Condition(ctypes.LAUNCHED, "True", "Launched", "i-0abc")],
        at="2026-01-01T00:00:00Z",
    )
    conditions = {c["type"]: c for c in launched["status"]["conditions"]}
    assert conditions["Launched"] == {
        "type": "Launched",
        "status": "True",
        "reason": "Launched",
        "message": "i-0abc",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
        "observedGeneration": claim["metadata"]["generation"],
    }
    assert conditions["Ready"]["status"] == "Unknown"
    assert conditions["Ready"]["reason"] == "RegisteredNotSet"

    launched = nodeclaims.record_launch(
        kube,
        launched,
        provider_id="aws:///us-east-1a/i-0abc",
        image_id="ami-0123",
        capacity={"cpu": "2", "memory": "8Gi", "pods": "29"},
        allocatable={"cpu": "1930m", "memory": "7Gi", "pods": "29"},
    )
    assert launched["status"]["providerID"] == "aws:///us-east-1a/i-0abc"

    ready = nodeclaims.set_conditions(
        kube,
        launched,
        [
            cond.Condition(ctypes.LAUNCHED, "True", "Launched", "i-0abc"),
            cond.Condition(ctypes.REGISTERED, "True", "Registered"),
            cond.Condition(ctypes.INITIALIZED, "True", "Initialized"),
        ],
        at="2026-01-01T00:05:00Z",
    )
    conditions = {c["type"]: c for c in ready["status"]["conditions"]}
    assert conditions["Ready"]["status"] == "True"
    assert conditions["Ready"]["lastTransitionTime"] == "2026-01-01T00:05:00Z"
    # unchanged status keeps its transition time
    assert conditions["Launched"]["lastTransitionTime"] == "2026-01-01T00:00:00Z"
    assert cond.is_true(nodeclaims.get(kube, claim["metadata"]["name"]), ctypes.READY)

    drifted = nodeclaims.set_conditions(
        kube, ready, [cond.Condition(ctypes.DRIFTED, "True", "NodeClassDrift", "AMI changed")]
    )
    assert {c["type"] for c in drifted["status"]["conditions"]} >= {"Drifted", "Ready"}
    assert ready["spec"] == drifted["spec"]  # status writes never touch spec


def test_watch_sees_status_changes(kube: Kube, claim: dict[str, Any]) -> None:
    _, resource_version = nodeclaims.list_(kube)
    nodeclaims.record_node(kube, claim, "node-a")
    for event in nodeclaims.watch(kube, resource_version=resource_version, timeout_seconds=5):
        if event.object["metadata"]["name"] == claim["metadata"]["name"]:
            assert event.type == "MODIFIED"
            assert event.object["status"]["nodeName"] == "node-a"
            break
    else:
        pytest.fail("no watch event for the NodeClaim")


def test_nodepool_status_is_writable_but_pools_are_not_creatable(
    kube: Kube, admin: Kube, unique: str
) -> None:
    pool = custom_objects.create(
        admin,
        NODEPOOL,
        nodepool_body(f"pool-{unique}", requirements=ANY_CAPACITY_TYPE),
    )
    try:
        pool = nodepools.set_conditions(
            kube,
            pool,
            [
                cond.Condition(ctypes.VALIDATION_SUCCEEDED, "True", "ValidationSucceeded"),
                cond.Condition(ctypes.NODECLASS_READY, "True", "NodeClassReady"),
            ],
        )
        assert cond.is_true(pool, ctypes.READY)
        pool = nodepools.record_usage(kube, pool, nodes=2, resources={"cpu": "4", "memory": "16Gi"})
        assert pool["status"]["nodes"] == 2
        with pytest.raises(Forbidden):
            custom_objects.create(kube, NODEPOOL, {**pool, "metadata": {"name": f"other-{unique}"}})
    finally:
        custom_objects.delete(admin, NODEPOOL, pool["metadata"]["name"])
