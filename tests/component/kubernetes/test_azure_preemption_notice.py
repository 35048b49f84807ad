"""A spot eviction notice on a real API server: the sandbox writes the ``PreemptionScheduled``
condition on a kwok Node as AKS's node-problem-detector would; the worker's watch, with
Joinery's own (service-account) client, reads it back as a spot interruption of that VM."""

from __future__ import annotations

import time
from typing import Any

from kubernetes import client as k8s

from activities.azure.eviction import PreemptionWatch, node_lister
from activities.azure.provider import provider_id, vm_id
from activities.cloud.interruption import SPOT_INTERRUPTION, InterruptionEvent
from activities.kubernetes.client import Kube
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
        watch = PreemptionWatch(node_lister(kube.core), vm_id)
        eventually(lambda: watch.poll_once(handle) == 1, what="the notice read", timeout=30)
        # kwok keeps the Node's status up to date meanwhile; the notice stays, once handled
        time.sleep(3)
        assert watch.poll_once(handle) == 0
        node: Any = admin.core.read_node(name)
        kinds = [c.type for c in node.status.conditions or []]
        assert "PreemptionScheduled" in kinds
    finally:
        evictions.stop()
        delete_node(admin.core, name)
        delete_node(admin.core, other)
    assert len(events) == 1
    event = events[0]
    assert event.kind == SPOT_INTERRUPTION and event.instance_ids == (vm,)
    assert eviction.not_before.strftime("%Y-%m-%dT%H:%M:%SZ") in event.detail
    assert taken == []  # the deadline has not passed: the VM is still there
