"""The AKSNodeClass kind as the worker reads it: what of a class starts a drift round, what
a launch stamps on its claim, and which conditions make it Ready."""

from __future__ import annotations

import copy
from typing import Any

from activities.cloud.kinds import AKS_NODECLASS
from models.aksnodeclass import AKSNodeClass

BODY: dict[str, Any] = {
    "metadata": {"name": "x", "generation": 3},
    "spec": {"imageFamily": "Ubuntu"},
    "status": {
        "images": [{"id": "/CommunityGalleries/g/images/d/versions/1", "requirements": []}],
        "kubernetesVersion": "1.33.2",
        "conditions": [{"type": "ImagesReady", "status": "True"}],
    },
}


def _changed(**status: Any) -> dict[str, Any]:
    body = copy.deepcopy(BODY)
    body["status"].update(status)
    return body


def test_drift_facts_move_with_images_version_and_generation_only() -> None:
    facts = AKS_NODECLASS.drift_facts(BODY)
    newer = [{"id": "/CommunityGalleries/g/images/d/versions/2", "requirements": []}]
    assert AKS_NODECLASS.drift_facts(_changed(images=newer)) != facts
    assert AKS_NODECLASS.drift_facts(_changed(kubernetesVersion="1.34.0")) != facts
    regenerated = copy.deepcopy(BODY)
    regenerated["metadata"]["generation"] = 4
    assert AKS_NODECLASS.drift_facts(regenerated) != facts
    # a condition-only status write starts no round
    quiet = _changed(conditions=[{"type": "ImagesReady", "status": "False"}])
    assert AKS_NODECLASS.drift_facts(quiet) == facts


def test_launch_stamp_and_readiness() -> None:
    stamp = AKS_NODECLASS.hash_annotations(AKSNodeClass.model_validate(BODY))
    assert set(stamp) == {
        "karpenter.azure.com/aksnodeclass-hash",
        "karpenter.azure.com/aksnodeclass-hash-version",
    }
    assert set(AKS_NODECLASS.readiness) == {
        "ImagesReady",
        "KubernetesVersionReady",
        "SubnetsReady",
        "ValidationSucceeded",
        "LocalDNSReady",
    }
