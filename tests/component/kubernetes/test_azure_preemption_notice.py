"""A spot eviction notice on a real API server: the sandbox writes the ``PreemptionScheduled``
condition on a kwok Node as AKS's node-problem-detector would; the worker's watch, with
Joinery's own (service-account) client, reads it back as a spot interruption of that VM and
stamps the deadline on the node's NodeClaim as its termination timestamp."""

from __future__ import annotations

import contextlib
import time
from typing import Any

from kubernetes import client as k8s

from activities.azure.eviction import PreemptionWatch, deadline_stamper, node_lister
from activities.azure.provider import provider_id, vm_id
from activities.cloud.interruption import SPOT_INTERRUPTION, InterruptionEvent
from activities.kubernetes import nodeclaims
from activities.kubernetes.client import Kube
from activities.kubernetes.errors import NotFound
from models.labels import NODECLAIM_TERMINATION_TIMESTAMP
from sandbox.azure.spot_eviction import SpotEvictions
from sandbox.cluster import KWOK_NODE_ANNOTATION, KWOK_NODE_ANNOTATION_VALUE
from tests.support.kube_helpers import delete_node
from tests.support.waiting import eventually


def _node(name: str, vm: str, *, pool: str | None) -> k8s.V1Node:
    labels = {"karpenter.sh/nodepool": pool} if pool else {}
    return k8s.V1Node(
        metadata=k8s.V1ObjectMeta(
            name=name,
            labels=labels,
            annotations={KWOK_NODE_ANNOTATION: KWOK_NODE_ANNOTATION_VALUE},
        ),
        spec=k8s.V1NodeSpec(provider_id=provider_id(vm)),
    )


def test_a_notice_written_on_a_node_is_read_as_a_spot_interruption(
    kube: Kube, admin: Kube, unique: str
) -> None:
    vm = (
        f"/subscriptions/sub/resourceGroups/MC_rg/providers/Microsoft.Compute/virtualMachines/"
        f"aks-{unique}"
    )
    name, other = f"aks-{unique}", f"not-karpenter-{unique}"
    admin.core.create_node(_node(name, vm, pool="default"))
    admin.core.create_node(_node(other, vm + "x", pool=None))
    claim = nodeclaims.create(
        kube,
        {
            "metadata": {"name": name, "labels": {"karpenter.sh/nodepool": "default"}},
            "spec": {
                "nodeClassRef": {
                    "group": "karpenter.azure.com",
                    "kind": "AKSNodeClass",
                    "name": "default",
                },
                "requirements": [],
            },
        },
    )
    nodeclaims.record_launch(
        kube,
        claim,
        provider_id=provider_id(vm),
        image_id="img",
        capacity={"cpu": "2", "memory": "8Gi", "pods": "30"},
        allocatable={"cpu": "1900m", "memory": "6Gi", "pods": "30"},
    )
    taken: list[str] = []
    evictions = SpotEvictions(
        patch_node_status=lambda n, body: admin.core.patch_node_status(n, body),
        delete_vm=taken.append,
    )
    events: list[InterruptionEvent] = []

    def handle(event: InterruptionEvent) -> bool:
        events.append(event)
        return True

    try:
        eviction = evictions.evict(name, notice_seconds=30)
        evictions.announce(other, notice_seconds=30)  # a Node no NodePool made: not read
        evictions.step()
        watch = PreemptionWatch(
            node_lister(kube.core), vm_id, stamp_deadline=deadline_stamper(kube.core)
        )
        eventually(lambda: watch.poll_once(handle) == 1, what="the notice read", timeout=30)
        # kwok keeps the Node's status up to date meanwhile; the notice stays, once handled
        time.sleep(3)
        assert watch.poll_once(handle) == 0
        node: Any = admin.core.read_node(name)
        kinds = [c.type for c in node.status.conditions or []]
        assert "PreemptionScheduled" in kinds
        stamped = nodeclaims.get(kube, name)["metadata"]["annotations"]
        # an earlier deadline already there (node repair's, say) is kept
        earlier = "2020-01-01T00:00:00Z"
        nodeclaims.patch_metadata(
            kube, name, annotations={NODECLAIM_TERMINATION_TIMESTAMP: earlier}
        )
        deadline_stamper(kube.core)(provider_id(vm), eviction.not_before)
        kept = nodeclaims.get(kube, name)["metadata"]["annotations"]
    finally:
        evictions.stop()
        with contextlib.suppress(NotFound):
            nodeclaims.delete(kube, name)
        delete_node(admin.core, name)
        delete_node(admin.core, other)
    assert len(events) == 1
    event = events[0]
    assert event.kind == SPOT_INTERRUPTION and event.instance_ids == (vm,)
    assert eviction.not_before.strftime("%Y-%m-%dT%H:%M:%SZ") in event.detail
    assert taken == []  # the deadline has not passed: the VM is still there
    deadline = eviction.not_before.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert stamped[NODECLAIM_TERMINATION_TIMESTAMP] == deadline
    assert kept[NODECLAIM_TERMINATION_TIMESTAMP] == earlier
