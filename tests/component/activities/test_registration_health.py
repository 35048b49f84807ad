"""A NodePool's NodeRegistrationHealthy condition on the real API server: Unknown (and
``nodeClassObservedGeneration`` recorded) until a claim registers; False once half of the
last four launches failed, with the failed claim's reason; True after registrations; Unknown
again when the pool's spec changes. Outcomes are recorded in memory by the lifecycle and
written when the status reporter reports the pool."""

from __future__ import annotations

import uuid
from typing import Any

from activities.kubernetes import custom_objects, nodeclasses, nodepools
from activities.kubernetes.client import Kube
from activities.kubernetes.resources import NODEPOOL
from activities.status import nodepools as nodepool_status
from activities.status.registration_health import NODE_REGISTRATION_HEALTHY, outcome
from tests.support.cloud import Cloud
from tests.support.kube_objects import M5, ensure_nodeclass
from tests.support.manifests import nodepool_body


def _condition(admin: Kube, name: str) -> dict[str, Any]:
    body = nodepools.get(admin, name)
    return next(c for c in body["status"]["conditions"] if c["type"] == NODE_REGISTRATION_HEALTHY)


def _claim(pool: dict[str, Any], launched: str, reason: str = "Launched") -> dict[str, Any]:
    name = pool["metadata"]["name"]
    return {
        "metadata": {
            "name": f"{name}-{uuid.uuid4().hex[:5]}",
            "labels": {"karpenter.sh/nodepool": name},
            "ownerReferences": [{"kind": "NodePool", "name": name, "uid": pool["metadata"]["uid"]}],
        },
        "status": {
            "conditions": [
                {"type": "Launched", "status": launched, "reason": reason, "message": "no capacity"}
            ]
        },
    }


def test_registration_health_follows_launch_outcomes(admin: Kube, kube: Kube, cloud: Cloud) -> None:
    ensure_nodeclass(admin)
    name = f"reg-{uuid.uuid4().hex[:6]}"
    custom_objects.create(admin, NODEPOOL, nodepool_body(name, requirements=M5))
    nodepool_status.report(kube, name)
    assert _condition(admin, name)["status"] == "Unknown"
    nodeclass = nodeclasses.get(admin, "default")
    pool = nodepools.get(admin, name)
    assert pool["status"]["nodeClassObservedGeneration"] == nodeclass["metadata"]["generation"]

    def then(claim: dict[str, Any], success: bool) -> dict[str, Any]:
        outcome(claim, success)
        nodepool_status.report(kube, name)
        return _condition(admin, name)

    assert then(_claim(pool, "False", "InsufficientCapacity"), False)["status"] == "Unknown"
    failed = then(_claim(pool, "False", "InsufficientCapacity"), False)
    assert (failed["status"], failed["reason"]) == ("False", "InsufficientCapacity")
    # two failures and two successes still hold half; a third success turns it True
    assert then(_claim(pool, "True"), True)["status"] == "False"
    assert then(_claim(pool, "True"), True)["status"] == "False"
    assert then(_claim(pool, "True"), True)["status"] == "True"
    assert then(_claim(pool, "True"), False)["status"] == "True"  # one failure in four
    registration = then(_claim(pool, "True"), False)
    assert (registration["status"], registration["reason"]) == ("False", "RegistrationFailed")

    # a claim the pool does not own does not count
    stray = _claim(pool, "True")
    stray["metadata"]["ownerReferences"] = []
    for _ in range(3):
        assert then(stray, True)["status"] == "False"

    # editing the pool's spec resets it, and it stays Unknown at the new generation
    custom_objects.merge_patch(admin, NODEPOOL, name, {"spec": {"weight": 7}})
    nodepool_status.report(kube, name)
    assert _condition(admin, name)["status"] == "Unknown"
    nodepool_status.report(kube, name)
    after = _condition(admin, name)
    assert after["status"] == "Unknown"
    assert after["observedGeneration"] == nodepools.get(admin, name)["metadata"]["generation"]
    assert then(_claim(pool, "True"), True)["status"] == "True"
