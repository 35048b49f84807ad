"""A provisioning round reading the worker's watches parses each pod and NodeClaim once per
version: the next round reuses the parse, a changed object is parsed again, and building
the problem never changes a parse it shares."""

from __future__ import annotations

from typing import Any

from activities.kubernetes.object_cache import WatchedObjects
from activities.planning.cluster_state import ClusterState, add_watched
from benchmarks.round_reading import synced
from benchmarks.workloads import nodepool_manifest
from models import labels as L
from models.instancetype import InstanceType, Offering
from models.quantity import parse_quantity
from scheduling.inputs import ClaimParts, Document, build_problem
from scheduling.pods import Pod

UNSCHEDULABLE = {
    "phase": "Pending",
    "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}],
}


NODEPOOL = nodepool_manifest()


def fake_instance_types(count: int) -> list[InstanceType]:
    return [
        InstanceType.build(
            f"fake-it-{n}",
            {"cpu": parse_quantity(n), "memory": parse_quantity(f"{2 * n}Gi"), "pods": 10_000},
            [Offering("zone-a", "on-demand", 0.05 * n)],
        )
        for n in range(1, count + 1)
    ]


def pod(name: str, version: str = "1", node: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "app", "resources": {"requests": {"cpu": "100m"}}}]
    }
    if node:
        spec["nodeName"] = node
    return {
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": f"u-{name}",
            "resourceVersion": version,
        },
        "spec": spec,
        "status": {"phase": "Running"} if node else UNSCHEDULABLE,
    }


def claim(name: str, version: str = "1") -> dict[str, Any]:
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodeClaim",
        "metadata": {
            "name": name,
            "uid": f"u-{name}",
            "resourceVersion": version,
            "labels": {L.NODEPOOL: "default"},
        },
        "spec": {
            "nodeClassRef": {
                "group": "karpenter.k8s.aws",
                "kind": "EC2NodeClass",
                "name": "default",
            },
            "requirements": [
                {"key": L.INSTANCE_TYPE, "operator": "In", "values": ["fake-it-3", "fake-it-4"]}
            ],
        },
    }


def node(name: str, deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "resourceVersion": "1", "labels": {}}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": meta, "status": {"allocatable": {"cpu": "4", "pods": "10"}}}


def unlisted() -> list[dict[str, Any]]:
    raise AssertionError("a synced watch is never listed")


def read(watched: WatchedObjects) -> ClusterState:
    state = ClusterState()
    state.documents.append(Document(NODEPOOL, "NodePool default"))
    add_watched(state, watched, unlisted, unlisted, unlisted)
    return state


def parsed_pods(state: ClusterState) -> dict[str, Pod]:
    out = {}
    for d in state.documents:
        if d.body.get("kind") == "Pod":
            assert isinstance(d.parsed, tuple)
            out[d.body["metadata"]["name"]] = d.parsed[1]
    return out


def test_the_next_round_reuses_every_unchanged_parse() -> None:
    types = fake_instance_types(8)
    watched = WatchedObjects(
        pods=synced([pod("p1"), pod("p2"), pod("on-going", node="going")]),
        nodes=synced([node("going", deleting=True)]),
        nodeclaims=synced([claim("c1"), claim("c2")]),
    )
    first = read(watched)
    problem = build_problem(first.documents, types).problem
    pods1 = parsed_pods(first)
    claims1 = [d.parsed for d in first.documents if d.body.get("kind") == "NodeClaim"]
    assert all(isinstance(c, ClaimParts) for c in claims1) and len(claims1) == 2
    assert {p.key for p in problem.pending} == {"default/p1", "default/p2", "default/on-going"}
    # the pod of the deleting node is pending as a copy: the kept parse still names its node
    assert pods1["on-going"].node_name == "going"
    assert pods1["p1"] in problem.pending
    # an in-flight claim without status gets its smallest type's allocatable
    c1 = next(n for n in problem.nodes if n.name == "c1")
    assert c1.in_flight and c1.allocatable == dict(types[2].allocatable)

    watched.pods.observe("MODIFIED", pod("p2", version="2"))
    watched.pods.observe("DELETED", pod("on-going"))
    watched.nodeclaims.observe("MODIFIED", claim("c2", version="2"))
    second = read(watched)
    build_problem(second.documents, types)
    pods2 = parsed_pods(second)
    claims2 = [d.parsed for d in second.documents if d.body.get("kind") == "NodeClaim"]
    assert pods2["p1"] is pods1["p1"]  # unchanged: not parsed again
    assert pods2["p2"] is not pods1["p2"]  # a new version: parsed again
    assert "on-going" not in pods2
    assert claims2[0] is claims1[0] and claims2[1] is not claims1[1]
    assert "default/on-going" not in watched.pods._derived
