"""The scale benchmark's split of each pod's way into the control plane's stages and Joinery's."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sandbox.scenarios import pod_journeys

T0 = 1_700_000_000.0


def stamp(seconds: float) -> str:
    return datetime.fromtimestamp(T0 + seconds, UTC).isoformat()


def condition(kind: str, at: float, status: str = "True", reason: str = "") -> dict[str, Any]:
    return {"type": kind, "status": status, "reason": reason, "lastTransitionTime": stamp(at)}


def pod(name: str, created: float, node: str, bound: float, running: float) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "creationTimestamp": stamp(created)},
        "spec": {"nodeName": node},
        "status": {"conditions": [condition("PodScheduled", bound), condition("Ready", running)]},
    }


def node(name: str, registered: float, ready: float) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "creationTimestamp": stamp(registered)},
        "status": {"conditions": [condition("Ready", ready)]},
    }


def claim(node_name: str, created: float, launched: float, registered: float) -> dict[str, Any]:
    conditions = [condition("Launched", launched), condition("Registered", registered)]
    return {
        "metadata": {"creationTimestamp": stamp(created)},
        "status": {"nodeName": node_name, "conditions": conditions},
    }


def test_each_pod_is_matched_to_its_node_and_claim_and_split_into_stages() -> None:
    pods = [pod("a", 0, "n1", 12, 13), pod("b", 20, "n2", 41, 45)]
    nodes = [node("n1", 8, 10), node("n2", 35, 40)]
    # n1 is usable once Ready (10), n2 once Joinery registered it (42, after Ready at 40)
    claims = [claim("n1", 5, 6, 9), claim("n2", 30, 31, 42)]
    rows = pod_journeys.journeys(pods, nodes, claims, {"a": T0 + 1, "b": T0 + 22})

    assert [r["claimCreated"] for r in rows] == [T0 + 5, T0 + 30]
    assert [r["launched"] for r in rows] == [T0 + 6, T0 + 31]
    out = pod_journeys.shares(rows)
    # a waits 1→10 until usable, b 22→42: 9 + 20 s, no overlap; the burst is 0→45
    assert [r["usable"] for r in rows] == [T0 + 10, T0 + 42]
    assert out["untilUsable"] == 29
    # Joinery's own turns: a plans and launches 1→6 and registers 8→9, b 22→31 and 35→42;
    # the simulated instance (launched→Node) and kwok (Node→Ready) are the sandbox's
    assert out["joineryOwn"] == 5 + 1 + 9 + 7
    assert out["stages"]["launchedToRegistered"]["whose"] == pod_journeys.INSTANCE
    assert out["stages"]["registeredToNodeReady"]["whose"] == pod_journeys.KWOK
    assert out["joinerySpan"] == 41
    assert out["joineryWaitMax"] == 20
    assert out["burstSeconds"] == 45
    assert out["controlPlaneOnly"] == 16
    assert out["stages"]["createdToUnschedulable"]["max"] == 2
    assert out["stages"]["unschedulableToClaim"]["whose"] == "Joinery"
    assert out["stages"]["boundToRunning"]["p50"] in (1, 4)


def test_overlapping_waits_count_once_and_a_pod_never_marked_is_left_out() -> None:
    pods = [pod("a", 0, "n1", 12, 13), pod("b", 0, "n2", 12, 13), pod("c", 0, "n3", 3, 4)]
    nodes = [node("n1", 8, 10), node("n2", 8, 11), node("n3", 2, 2)]
    claims = [claim("n1", 0, 0, 0), claim("n2", 0, 0, 0), claim("n3", 0, 0, 0)]
    rows = pod_journeys.journeys(pods, nodes, claims, {"a": T0 + 1, "b": T0 + 5})

    out = pod_journeys.shares(rows)
    assert out["podsTimed"] == 2 and out["pods"] == 3
    assert out["untilUsable"] == 10  # 1→10 and 5→11 overlap: 1→11
    # launched and registered with the claim (0), before either was marked: no turn of Joinery's
    assert out["joineryOwn"] == 0
    no_claim = pod_journeys.journeys(pods[:1], nodes, [], {"a": T0 + 1})
    assert no_claim[0]["claimCreated"] is None and no_claim[0]["usable"] is None


def test_the_watch_keeps_the_first_unschedulable_moment_only() -> None:
    watch = pod_journeys.UnschedulableWatch(None, "ns", "app=x")
    marked = {
        "metadata": {"name": "a"},
        "status": {"conditions": [condition("PodScheduled", 3, "False", "Unschedulable")]},
    }
    watch.note(marked)
    later = {
        "metadata": {"name": "a"},
        "status": {"conditions": [condition("PodScheduled", 9, "False", "Unschedulable")]},
    }
    watch.note(later)
    watch.note({"metadata": {"name": "b"}, "status": {"conditions": [condition("Ready", 4)]}})
    assert watch.first == {"a": T0 + 3}
