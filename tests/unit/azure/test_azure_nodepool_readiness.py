"""A NodePool on Azure refers to an AKSNodeClass: its NodeClassReady reads that kind."""

from __future__ import annotations

from typing import Any

from activities.kubernetes.resources import AKSNODECLASS
from activities.status import nodepools as nodepool_status


def pool(group: str, kind: str) -> dict[str, Any]:
    ref = {"group": group, "kind": kind, "name": "default"}
    return {"metadata": {"name": "p"}, "spec": {"template": {"spec": {"nodeClassRef": ref}}}}


def test_an_aks_nodeclass_ref_is_read_on_azure() -> None:
    aks = pool("karpenter.azure.com", "AKSNodeClass")
    missing = nodepool_status.nodeclass_readiness(aks, None, AKSNODECLASS)
    assert (missing.status, missing.message) == ("False", "AKSNodeClass default does not exist")
    ready = {"status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    assert nodepool_status.nodeclass_readiness(aks, ready, AKSNODECLASS).status == "True"
    ec2 = pool("karpenter.k8s.aws", "EC2NodeClass")
    wrong = nodepool_status.nodeclass_readiness(ec2, ready, AKSNODECLASS)
    assert (wrong.status, wrong.reason) == ("False", "UnsupportedNodeClass")
    # without a kind named, EC2's (as before)
    assert nodepool_status.nodeclass_readiness(aks, ready).reason == "UnsupportedNodeClass"
