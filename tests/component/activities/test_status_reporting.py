"""NodePool and EC2NodeClass status on the real control plane with emulated EC2: conditions
naming the bad field, one aggregated Warning event per problem, usage, and recovery."""

from __future__ import annotations

import contextlib
import uuid
from typing import Any

from activities.kubernetes import custom_objects, nodeclaims, nodeclasses, nodepools, raw
from activities.kubernetes import status as status_writes
from activities.kubernetes.client import Kube
from activities.kubernetes.errors import AlreadyExists
from activities.kubernetes.events import EVENT_NAMESPACE
from activities.kubernetes.resources import EC2NODECLASS, NODECLAIM, NODEPOOL
from activities.status import nodeclasses as nodeclass_status
from activities.status import nodepools as nodepool_status
from tests.support.cloud import Cloud
from tests.support.kube_objects import CLUSTER, M5, condition, create_claim
from tests.support.manifests import nodepool_body
from tests.support.waiting import eventually
from worker.running.status_reporter import StatusReporter

TAGS = {"karpenter.sh/discovery": CLUSTER}


def make_nodeclass(admin: Kube, name: str, subnet_tags: dict[str, str]) -> None:
    body = {
        "metadata": {"name": name},
        "spec": {
            "subnetSelectorTerms": [{"tags": subnet_tags}],
            "securityGroupSelectorTerms": [{"tags": TAGS}],
            "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "role": "KarpenterNodeRole",
        },
    }
    with contextlib.suppress(AlreadyExists):
        custom_objects.create(admin, EC2NODECLASS, body)


def make_pool(admin: Kube, name: str, nodeclass: str, requirements: list[Any]) -> None:
    body = nodepool_body(name, node_class=nodeclass, requirements=requirements)
    custom_objects.create(admin, NODEPOOL, body)


def events_about(admin: Kube, name: str) -> list[dict[str, Any]]:
    listed = raw.call(admin.core.list_namespaced_event, EVENT_NAMESPACE).get("items") or []
    return [e for e in listed if e["involvedObject"]["name"] == name]


def test_nodeclass_status_resolves_or_says_why(admin: Kube, kube: Kube, cloud: Cloud) -> None:
    good, bad = f"nc-{uuid.uuid4().hex[:6]}", f"nc-{uuid.uuid4().hex[:6]}"
    make_nodeclass(admin, good, TAGS)
    make_nodeclass(admin, bad, {"team": "nobody"})

    assert nodeclass_status.report(kube, cloud.provider, good) == []
    ready = nodeclasses.get(admin, good)
    assert condition(ready, "Ready")["status"] == "True"  # type: ignore[index]
    assert ready["status"]["subnets"] and ready["status"]["securityGroups"]
    assert ready["status"]["amis"][0]["id"].startswith("ami-")
    # no placementGroupSelector: the resolved group is none (PlacementGroupDrift reads it)
    assert ready["metadata"]["annotations"]["joinery.dev/placement-group-id"] == ""

    failed = nodeclass_status.report(kube, cloud.provider, bad)
    assert [c.type for c in failed] == ["SubnetsReady"]
    body = nodeclasses.get(admin, bad)
    not_ready = condition(body, "Ready")
    assert not_ready is not None and not_ready["status"] == "False"
    assert not_ready["reason"] == "SubnetsNotFound"
    assert "subnetSelectorTerms matched no subnets" in not_ready["message"]
    # Reported again (a resync): no new transition, so the one event is not repeated.
    assert nodeclass_status.report(kube, cloud.provider, bad) == []
    [event] = events_about(admin, bad)
    assert (event["type"], event["reason"], event["count"]) == ("Warning", "SubnetsNotFound", 1)


def test_nodepool_conditions_events_and_usage(admin: Kube, kube: Kube, cloud: Cloud) -> None:
    suffix = uuid.uuid4().hex[:6]
    good_class, bad_class = f"nc-ok-{suffix}", f"nc-bad-{suffix}"
    make_nodeclass(admin, good_class, TAGS)
    make_nodeclass(admin, bad_class, {"team": "nobody"})
    for c in (good_class, bad_class):
        nodeclass_status.report(kube, cloud.provider, c)
    restricted = [{"key": "kubernetes.io/team", "operator": "In", "values": ["a"]}]
    pools = {
        "good": (good_class, M5),
        "invalid": (good_class, restricted),
        "badclass": (bad_class, M5),
        "noclass": (f"missing-{suffix}", M5),
    }
    for role, (nodeclass, requirements) in pools.items():
        make_pool(admin, f"{role}-{suffix}", nodeclass, requirements)
        nodepool_status.report(kube, f"{role}-{suffix}")

    def conditions(role: str) -> dict[str, tuple[str, str, str]]:
        body = nodepools.get(admin, f"{role}-{suffix}")
        return {
            c["type"]: (c["status"], c["reason"], c["message"])
            for c in body["status"]["conditions"]
        }

    assert conditions("good")["Ready"][0] == "True"
    invalid = conditions("invalid")
    assert invalid["ValidationSucceeded"] == (
        "False",
        "Invalid",
        "spec.template.spec.requirements[0].key: label 'kubernetes.io/team' is restricted",
    )
    assert invalid["Ready"][0] == "False" and invalid["NodeClassReady"][0] == "True"
    assert conditions("badclass")["NodeClassReady"][:2] == ("False", "NodeClassNotReady")
    assert conditions("noclass")["NodeClassReady"][:2] == ("False", "NodeClassNotFound")
    [event] = events_about(admin, f"invalid-{suffix}")
    assert event["type"] == "Warning" and "kubernetes.io/team" in event["message"]

    # Fixed by the user: the pool validates and becomes Ready, no new warning.
    fixed = nodepools.get(admin, f"invalid-{suffix}")
    fixed["spec"]["template"]["spec"]["requirements"] = M5
    custom_objects.replace(admin, NODEPOOL, fixed)
    assert nodepool_status.report(kube, f"invalid-{suffix}") == []
    assert conditions("invalid")["Ready"][0] == "True"
    assert len(events_about(admin, f"invalid-{suffix}")) == 1

    # Usage: the pool's NodeClaims and their summed capacity; a deleted claim stops counting.
    claim = create_claim(admin, f"good-{suffix}-a", f"good-{suffix}")
    capacity = {"cpu": "2", "memory": "8Gi", "pods": "29"}
    status_writes.patch_status(admin, NODECLAIM, claim, {"capacity": capacity})
    nodepool_status.report(kube, f"good-{suffix}")
    status = nodepools.get(admin, f"good-{suffix}")["status"]
    assert status["nodes"] == 1
    assert status["resources"] == capacity
    nodeclaims.delete(admin, f"good-{suffix}-a")
    nodepool_status.report(kube, f"good-{suffix}")
    status = nodepools.get(admin, f"good-{suffix}")["status"]
    assert status["nodes"] == 0 and not status.get("resources")


def test_reporter_follows_a_nodeclass_to_its_pools(admin: Kube, kube: Kube, cloud: Cloud) -> None:
    """The worker's reporter thread: a NodeClass report re-checks the pools that use it."""
    suffix = uuid.uuid4().hex[:6]
    make_nodeclass(admin, f"nc-{suffix}", TAGS)
    make_pool(admin, f"p-{suffix}", f"nc-{suffix}", M5)
    reporter = StatusReporter(kube, cloud.provider).start()
    try:
        reporter.nodeclass(f"nc-{suffix}")

        def pool_ready() -> bool:
            found = condition(nodepools.get(admin, f"p-{suffix}"), "Ready")
            return bool(found and found["status"] == "True")

        eventually(pool_ready, timeout=30, what="the pool Ready after its NodeClass")
    finally:
        reporter.close()
