"""Registration puts the claim's taints on the Node, unless the Node's launch says it did.

Karpenter's rule (its registration controller): a Node labelled
``karpenter.sh/do-not-sync-taints=true`` keeps its own taints, since its kubelet registered
the claim's taints itself and a DaemonSet may already have lifted a startup taint; only the
``karpenter.sh/unregistered`` taint is removed.
"""

from __future__ import annotations

from typing import Any

from activities.lifecycle.registration import node_patch

STARTUP = {"key": "cni.example/not-ready", "effect": "NoSchedule"}
UNREGISTERED = {"key": "karpenter.sh/unregistered", "effect": "NoExecute"}


def _claim() -> dict[str, Any]:
    return {
        "metadata": {"name": "c1", "uid": "u1", "labels": {"karpenter.sh/nodepool": "default"}},
        "spec": {"startupTaints": [STARTUP], "requirements": []},
    }


def _node(labels: dict[str, str]) -> dict[str, Any]:
    # the CNI DaemonSet already lifted its startup taint: only the unregistered one is left
    return {
        "metadata": {"name": "n1", "resourceVersion": "7", "labels": labels},
        "spec": {"taints": [UNREGISTERED]},
    }


def test_a_node_whose_launch_registers_its_taints_keeps_them() -> None:
    patch = node_patch(_node({"karpenter.sh/do-not-sync-taints": "true"}), _claim())
    assert patch is not None
    assert patch["spec"]["taints"] == []  # unregistered gone, the lifted startup taint not back


def test_other_nodes_get_the_claims_taints() -> None:
    patch = node_patch(_node({}), _claim())
    assert patch is not None
    assert patch["spec"]["taints"] == [STARTUP]
