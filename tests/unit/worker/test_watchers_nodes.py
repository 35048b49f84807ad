"""The Node watcher skips initialized Nodes' heartbeats and hints a claim whose Node came
first.

At 1,000 Nodes heartbeats are most of the Node watch's events during a burst; handling
each one put the watch (and so the registration checks' Node index) seconds behind.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any

from activities.kubernetes.node_index import NodeIndex
from models import contract
from models import labels as L
from worker.running.heartbeats import essentials
from worker.running.watchers import Watchers


def kwok_node(name: str, *, initialized: bool, beat: str = "2026-01-01T00:00:00Z") -> Any:
    labels = {L.NODEPOOL: "default"}
    if initialized:
        labels[L.NODE_INITIALIZED] = "true"
    return {
        "metadata": {
            "name": name,
            "labels": labels,
            "resourceVersion": beat,
            "managedFields": [{"manager": "kwok", "time": beat}],
        },
        "spec": {"providerID": f"aws:///us-east-1a/i-{name}"},
        "status": {
            "allocatable": {"cpu": "2", "memory": "8Gi", "pods": "110"},
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "lastHeartbeatTime": beat,
                    "lastTransitionTime": "2026-01-01T00:00:00Z",
                }
            ],
        },
    }


def beat(node: Any, at: str) -> Any:
    """``node`` after a kubelet's heartbeat at ``at``."""
    after = copy.deepcopy(node)
    after["metadata"]["resourceVersion"] = at
    after["metadata"]["managedFields"][0]["time"] = at
    after["status"]["conditions"][0]["lastHeartbeatTime"] = at
    return after


class CountingIndex(NodeIndex):
    def __init__(self) -> None:
        super().__init__()
        self.observed = 0

    def observe(self, kind: str, node: dict[str, Any]) -> None:
        self.observed += 1
        super().observe(kind, node)


class Recorder:
    """The Temporal client: records signals instead of sending them."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str, tuple[Any, ...]]] = []

    def get_workflow_handle(self, workflow_id: str) -> Any:
        sent = self.sent

        class Handle:
            async def signal(self, name: str, *args: Any) -> None:
                sent.append((workflow_id, name, args))

        return Handle()


def watchers(index: NodeIndex, recorder: Recorder) -> Watchers:
    w = Watchers(
        kube=None,  # type: ignore[arg-type]  # handlers read nothing from the cluster
        client=recorder,  # type: ignore[arg-type]
        loop=asyncio.new_event_loop(),
        cluster="c",
        task_queue="q",
        node_index=index,
    )
    # run the watchers' coroutines at once on this thread, in order
    w._calls.submit = lambda coro: w.loop.run_until_complete(coro)  # type: ignore[method-assign]
    return w


def test_a_heartbeat_leaves_the_essentials_equal_and_a_real_change_does_not() -> None:
    node = kwok_node("a", initialized=True)
    assert essentials(beat(node, "2026-01-01T00:00:40Z")) == essentials(node)
    relabelled = copy.deepcopy(node)
    relabelled["metadata"]["labels"]["team"] = "x"
    assert essentials(relabelled) != essentials(node)
    not_ready = copy.deepcopy(node)
    not_ready["status"]["conditions"][0]["status"] = "False"
    assert essentials(not_ready) != essentials(node)


def test_an_initialized_nodes_heartbeats_are_skipped_its_changes_are_not() -> None:
    index, recorder = CountingIndex(), Recorder()
    w = watchers(index, recorder)
    w.on_nodeclaim(
        "MODIFIED",
        {"metadata": {"name": "claim-a"}, "status": {"providerID": "aws:///us-east-1a/i-a"}},
    )
    node = kwok_node("a", initialized=True)
    w.on_node("ADDED", node)
    assert index.observed == 1
    for second in range(10, 60, 10):
        w.on_node("MODIFIED", beat(node, f"2026-01-01T00:00:{second}Z"))
    assert index.observed == 1  # five heartbeats, none handled

    deleting = beat(node, "2026-01-01T00:01:00Z")
    deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:01:00Z"
    w.on_node("MODIFIED", deleting)
    assert index.observed == 2
    assert (contract.nodeclaim_id("c", "claim-a"), contract.SIGNAL_DELETED, ("Node",)) in (
        recorder.sent
    )

    w.on_node("DELETED", deleting)
    w.on_node("ADDED", node)  # the same name again: handled, not compared with the old one
    assert index.observed == 4


def test_an_uninitialized_nodes_heartbeats_still_hint_its_claim() -> None:
    index, recorder = CountingIndex(), Recorder()
    w = watchers(index, recorder)
    w.on_nodeclaim(
        "MODIFIED",
        {"metadata": {"name": "claim-b"}, "status": {"providerID": "aws:///us-east-1a/i-b"}},
    )
    node = kwok_node("b", initialized=False)
    w.on_node("ADDED", node)
    w._last_hint.clear()  # as if the hint's 2-second spacing had passed
    w.on_node("MODIFIED", beat(node, "2026-01-01T00:00:10Z"))
    hint = (contract.nodeclaim_id("c", "claim-b"), contract.SIGNAL_NODE_CHANGED, ("b",))
    assert recorder.sent.count(hint) == 2
    assert index.observed == 2


def test_a_claim_whose_node_was_watched_first_is_hinted_when_its_provider_id_arrives() -> None:
    index, recorder = NodeIndex(), Recorder()
    w = watchers(index, recorder)
    w.on_node("ADDED", kwok_node("c", initialized=False))
    assert recorder.sent == []  # no claim known for it yet
    claim = {"metadata": {"name": "claim-c"}, "status": {"providerID": "aws:///us-east-1a/i-c"}}
    w.on_nodeclaim("MODIFIED", claim)
    hint = (contract.nodeclaim_id("c", "claim-c"), contract.SIGNAL_NODE_CHANGED, ("c",))
    assert recorder.sent == [hint]
    w.on_nodeclaim("MODIFIED", claim)  # the same providerID again: no second hint
    assert recorder.sent == [hint]


def test_a_claim_or_node_starting_to_go_away_starts_a_provisioning_round() -> None:
    """As Karpenter's provisioner plans for the pods of deleting nodes, the deletion itself
    triggers a round (not the pods' eviction later); one found on a re-list waits for the
    watches to be synced (the resync sends it)."""
    recorder = Recorder()
    w = watchers(NodeIndex(), recorder)
    pending = (contract.provisioner_id("c"), contract.SIGNAL_PODS_PENDING, (1,))
    w.on_nodeclaim("LISTED", {"metadata": {"name": "old", "deletionTimestamp": "t"}})
    assert pending not in recorder.sent and w._pending_on_list
    claim = {"metadata": {"name": "claim-a"}, "status": {"providerID": "aws:///us-east-1a/i-a"}}
    w.on_nodeclaim("MODIFIED", claim)
    assert pending not in recorder.sent
    going = copy.deepcopy(claim)
    going["metadata"]["deletionTimestamp"] = "2026-01-01T00:01:00Z"
    w.on_nodeclaim("MODIFIED", going)
    assert recorder.sent.count(pending) == 1
    w.on_nodeclaim("MODIFIED", going)  # the same deletion again: no second round
    assert recorder.sent.count(pending) == 1
    node = kwok_node("b", initialized=True)
    node["metadata"]["ownerReferences"] = [{"kind": "NodeClaim", "name": "claim-b"}]
    node["metadata"]["deletionTimestamp"] = "2026-01-01T00:01:00Z"
    w.on_node("MODIFIED", node)
    assert recorder.sent.count(pending) == 2


def test_a_spot_interruption_marks_the_claims_offering_unavailable() -> None:
    """The watcher knows each claim's instance type and zone from its labels and hands them
    to the EC2 side with the event (Karpenter's interruption controller does the same)."""
    from activities.cloud.interruption import (
        REBALANCE_RECOMMENDATION,
        SPOT_INTERRUPTION,
        InterruptionEvent,
    )
    from activities.ec2.capacity_cache import UnavailableOfferings
    from activities.ec2.interruption import mark_interrupted_offering

    class EC2:
        unavailable = UnavailableOfferings()

        def offering_interrupted(
            self, event: InterruptionEvent, instance_type: str, zone: str
        ) -> bool:  # as the EC2 provider answers it
            return mark_interrupted_offering(self.unavailable, event, instance_type, zone)

    recorder = Recorder()
    w = watchers(NodeIndex(), recorder)
    w.cloud = EC2()  # type: ignore[assignment]
    labels = {L.INSTANCE_TYPE: "m5.large", L.ZONE: "us-east-1a", L.NODEPOOL: "default"}
    w.on_nodeclaim(
        "MODIFIED",
        {
            "metadata": {"name": "claim-s", "labels": labels},
            "status": {"providerID": "aws:///us-east-1a/i-s"},
        },
    )
    assert w.on_interruption(InterruptionEvent(REBALANCE_RECOMMENDATION, ("i-s",)))
    assert EC2.unavailable.entries() == []
    assert w.on_interruption(InterruptionEvent(SPOT_INTERRUPTION, ("i-s",)))
    assert EC2.unavailable.is_unavailable("spot", "m5.large", "us-east-1a")
    assert not EC2.unavailable.is_unavailable("on-demand", "m5.large", "us-east-1a")
    interrupted = (contract.nodeclaim_id("c", "claim-s"), contract.SIGNAL_INTERRUPTED)
    assert any(s[:2] == interrupted for s in recorder.sent)


def test_a_claim_of_another_providers_node_class_is_left_alone() -> None:
    """Karpenter's IsManaged: an AKSNodeClass claim is not the AWS worker's to launch or
    retire (a lifecycle started for it would retry its termination forever)."""
    recorder = Recorder()
    w = watchers(NodeIndex(), recorder)
    ref = {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "c"}
    theirs: dict[str, Any] = {
        "metadata": {"name": "az-1", "deletionTimestamp": "t", "finalizers": ["f"]},
        "spec": {"nodeClassRef": ref},
        "status": {"providerID": "azure:///subscriptions/s/virtualMachines/aks-az-1"},
    }
    w.on_nodeclaim("ADDED", theirs)
    w.on_nodeclaim("MODIFIED", theirs)
    assert recorder.sent == [] and not w._deleting
    ours = copy.deepcopy(theirs)
    ours["metadata"]["name"] = "aws-1"
    ours["spec"]["nodeClassRef"] = {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass"}
    w.on_nodeclaim("MODIFIED", ours)
    assert (contract.nodeclaim_id("c", "aws-1"), contract.SIGNAL_DELETED, ("NodeClaim",)) in (
        recorder.sent
    )
