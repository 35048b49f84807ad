"""sandbox/nodes.py: a launched NodeClaim's instance registers a kwok Node that Joinery finds."""

from __future__ import annotations

import contextlib
import time
from typing import Any

from activities.kubernetes import nodeclaims, nodes, raw
from activities.kubernetes.client import Kube
from activities.kubernetes.errors import NotFound
from sandbox.nodes import NodeSimulator, node_name
from tests.support.kube_helpers import delete_node, on_fresh_read, pod
from tests.support.kube_objects import condition
from tests.support.waiting import eventually


def test_launched_claim_registers_a_ready_node(
    kube: Kube, admin: Kube, namespace: str, unique: str
) -> None:
    claim = nodeclaims.create(
        kube,
        {
            "metadata": {
                "name": f"sim-{unique}",
                "labels": {
                    "karpenter.sh/nodepool": "default",
                    "node.kubernetes.io/instance-type": "m5.large",
                    "topology.kubernetes.io/zone": "us-east-1a",
                    "karpenter.sh/capacity-type": "on-demand",
                },
            },
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "x"},
                "requirements": [
                    {"key": "joinery.test/run", "operator": "In", "values": [unique]},
                ],
                "taints": [{"key": "example.com/dedicated", "value": "a", "effect": "NoSchedule"}],
            },
        },
    )
    provider_id = f"aws:///us-east-1a/i-{unique}"
    nodeclaims.record_launch(
        kube,
        claim,
        provider_id=provider_id,
        image_id="ami-1",
        capacity={"cpu": "2", "memory": "8Gi", "pods": "29"},
        allocatable={"cpu": "1930m", "memory": "7Gi", "pods": "29"},
    )
    name = node_name(provider_id)
    try:
        with NodeSimulator(admin, boot_seconds=0.5) as simulator:
            node: dict[str, Any] = eventually(
                lambda: nodes.by_provider_id(kube, provider_id), what="the simulated kubelet"
            )
            eventually(lambda: provider_id in simulator.registered, what="the kubelet's record")
        labels = node["metadata"]["labels"]
        assert labels["joinery.test/run"] == unique
        assert labels["node.kubernetes.io/instance-type"] == "m5.large"
        assert node["status"]["allocatable"]["cpu"] == "1930m"
        taint_keys = {t["key"] for t in node["spec"]["taints"]}
        assert {"karpenter.sh/unregistered", "example.com/dedicated"} <= taint_keys

        def ready() -> bool:
            found = condition(nodes.get(kube, name), "Ready")
            return bool(found and found["status"] == "True")

        eventually(ready, what="kwok to mark the node Ready")

        # Once Joinery lifts the unregistered taint, a tolerating pod lands there.
        on_fresh_read(
            lambda: nodes.remove_taint(kube, nodes.get(kube, name), "karpenter.sh/unregistered")
        )
        spec = pod("tolerant", node_selector={"joinery.test/run": unique})
        spec["spec"]["tolerations"] = [{"key": "example.com/dedicated", "operator": "Exists"}]
        raw.call(admin.core.create_namespaced_pod, namespace, spec)
        eventually(
            lambda: (
                raw.call(admin.core.read_namespaced_pod, "tolerant", namespace)["spec"].get(
                    "nodeName"
                )
                == name
            ),
            what="the pod to bind to the simulated node",
        )
    finally:
        delete_node(admin.core, name)
        with contextlib.suppress(NotFound):
            nodeclaims.delete(kube, claim["metadata"]["name"])


def test_a_claim_launched_later_registers_from_the_watch_without_relisting(
    kube: Kube, admin: Kube, unique: str, monkeypatch: Any
) -> None:
    """The simulator lists the claims once and then follows their watch (it listed them
    every 0.25 s: megabytes a second at 1,000 claims, on the cores Joinery runs on)."""
    lists = 0
    list_claims = nodeclaims.list_

    def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal lists
        lists += 1
        return list_claims(*args, **kwargs)

    monkeypatch.setattr(nodeclaims, "list_", counted)
    claim = nodeclaims.create(
        kube,
        {
            "metadata": {"name": f"late-{unique}", "labels": {"karpenter.sh/nodepool": "default"}},
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "x"},
                "requirements": [],
            },
        },
    )
    provider_id = f"aws:///us-east-1a/i-late{unique}"
    try:
        with NodeSimulator(admin, interval=0.25) as simulator:
            eventually(lambda: lists >= 1, what="the first list")
            nodeclaims.record_launch(
                kube,
                claim,
                provider_id=provider_id,
                image_id="ami-1",
                capacity={"cpu": "2", "memory": "8Gi", "pods": "29"},
                allocatable={"cpu": "2", "memory": "8Gi", "pods": "29"},
            )
            eventually(lambda: provider_id in simulator.registered, what="the watched launch")
            eventually(lambda: nodes.by_provider_id(kube, provider_id), what="its Node")
            time.sleep(1.5)  # six passes of the old every-0.25-s list
        assert lists == 1, lists
    finally:
        delete_node(admin.core, node_name(provider_id))
        with contextlib.suppress(NotFound):
            nodeclaims.delete(admin, f"late-{unique}")
