"""Fields the CRDs admit (as Karpenter's do) but Joinery does not implement are refused where
users look, on the real control plane with emulated EC2: the object is not Ready with
``ValidationSucceeded=False`` (reason ``UnsupportedField``) naming each field, a Warning event
says it, provisioning leaves its pools out and a launch on it is refused. Removing the
fields makes it Ready again."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from temporalio.exceptions import ApplicationError

from activities.deps import Deps
from activities.kubernetes import custom_objects, nodeclasses, nodepools
from activities.kubernetes.client import Kube
from activities.kubernetes.resources import EC2NODECLASS, NODEPOOL
from activities.lifecycle import claims, launch
from activities.planning import cluster_state, ready_pools
from activities.status import nodeclasses as nodeclass_status
from activities.status import nodepools as nodepool_status
from tests.component.activities.test_status_reporting import TAGS, events_about
from tests.support.cloud import Cloud
from tests.support.kube_objects import M5, create_claim, ensure_nodeclass
from tests.support.manifests import nodepool_body

# Each field as a Karpenter user would write it (the CRD's own rules admit every one).
FIELDS: dict[str, Any] = {
    "networkInterfaces": [
        {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"},
        {"networkCardIndex": 0, "deviceIndex": 1, "interfaceType": "efa-only"},
    ],
}


def _nodeclass(name: str, **extra: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {
            "subnetSelectorTerms": [{"tags": TAGS}],
            "securityGroupSelectorTerms": [{"tags": TAGS}],
            "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "role": "KarpenterNodeRole",
            **extra,
        },
    }


def _conditions(body: dict[str, Any]) -> dict[str, tuple[str, str, str]]:
    return {
        c["type"]: (c["status"], c["reason"], c["message"]) for c in body["status"]["conditions"]
    }


def test_a_nodeclass_with_unimplemented_fields_is_not_ready_and_says_each(
    admin: Kube, kube: Kube, cloud: Cloud
) -> None:
    name, pool = f"nc-ni-{uuid.uuid4().hex[:6]}", f"p-ni-{uuid.uuid4().hex[:6]}"
    disks = [
        {
            "deviceName": "/dev/xvda",
            "ebs": {
                "volumeSize": "20Gi",
                "snapshotID": "snap-0abc",
                "volumeInitializationRate": 200,
            },
        }
    ]
    custom_objects.create(
        admin, EC2NODECLASS, _nodeclass(name, blockDeviceMappings=disks, **FIELDS)
    )
    custom_objects.create(admin, NODEPOOL, nodepool_body(pool, node_class=name, requirements=M5))

    failed = nodeclass_status.report(kube, cloud.provider, name)
    assert [(c.type, c.reason) for c in failed] == [("ValidationSucceeded", "UnsupportedField")]
    body = nodeclasses.get(admin, name)
    got = _conditions(body)
    assert got["Ready"][:2] == ("False", "UnsupportedField")
    assert got["SubnetsReady"][0] == "True"  # the rest is still resolved and shown
    message = got["ValidationSucceeded"][2]
    for field in (f"spec.{f}" for f in FIELDS):
        assert f"{field}: " in message
    assert "volumeInitializationRate" not in message  # acted on since issue 29
    [event] = events_about(admin, name)
    assert (event["type"], event["reason"]) == ("Warning", "UnsupportedField")
    assert "spec.networkInterfaces" in event["message"]

    # Its pools are not Ready, and provisioning gives them no catalog.
    nodepool_status.report(kube, pool)
    assert _conditions(nodepools.get(admin, pool))["NodeClassReady"][:2] == (
        "False",
        "NodeClassNotReady",
    )
    why = ready_pools.not_ready(cloud.provider, body)
    assert why is not None and "spec.networkInterfaces" in why

    # Fixed by the user: Ready again.
    body["spec"] = _nodeclass(name)["spec"]
    custom_objects.replace(admin, EC2NODECLASS, body)
    assert nodeclass_status.report(kube, cloud.provider, name) == []
    assert _conditions(nodeclasses.get(admin, name))["Ready"][0] == "True"
    assert ready_pools.not_ready(cloud.provider, nodeclasses.get(admin, name)) is None


def test_a_static_nodepool_is_refused_and_left_out_of_provisioning(
    admin: Kube, kube: Kube, cloud: Cloud
) -> None:
    """``replicas`` (Karpenter's alpha StaticCapacity): not Ready, a Warning event, and the
    provisioning round skips the pool instead of using it as a dynamic one."""
    ensure_nodeclass(admin)
    name = f"static-{uuid.uuid4().hex[:6]}"
    body = nodepool_body(name, node_class="default", requirements=M5)
    body["spec"]["replicas"] = 3
    custom_objects.create(admin, NODEPOOL, body)

    failed = nodepool_status.report(kube, name)
    assert [(c.type, c.reason) for c in failed] == [("ValidationSucceeded", "UnsupportedField")]
    got = _conditions(nodepools.get(admin, name))
    assert got["Ready"][0] == "False"
    assert got["ValidationSucceeded"][2].startswith("spec.replicas: static NodePools")
    [event] = events_about(admin, name)
    assert event["type"] == "Warning" and "spec.replicas" in event["message"]

    state = cluster_state.read(kube)
    assert name not in {p.name for p in state.nodepools}
    assert any(s.startswith(f"NodePool {name}: spec.replicas") for s in state.skipped)


def test_another_providers_nodepool_is_left_out_of_provisioning(admin: Kube, kube: Kube) -> None:
    """Karpenter's IsManaged: a NodePool whose class is an AKSNodeClass is not served by the
    AWS worker with its default catalog; the round says why it left it out."""
    name = f"aks-{uuid.uuid4().hex[:6]}"
    body = nodepool_body(name, node_class="default", requirements=M5)
    body["spec"]["template"]["spec"]["nodeClassRef"] = {
        "group": "karpenter.azure.com",
        "kind": "AKSNodeClass",
        "name": "default",
    }
    custom_objects.create(admin, NODEPOOL, body)
    try:
        state = cluster_state.read(kube, managed_only=True)
        assert name not in {p.name for p in state.nodepools}
        assert name in {p.name for p in cluster_state.read(kube).nodepools}  # live plan's
        assert any(
            s.startswith(f"NodePool {name}: spec.template.spec.nodeClassRef names AKS")
            for s in state.skipped
        )
    finally:
        custom_objects.delete(admin, NODEPOOL, name)


def test_a_launch_on_a_refused_nodeclass_is_refused(deps: Deps, admin: Kube, cloud: Cloud) -> None:
    """A claim made before the field was added is not launched without it (no EFA node for
    an EFA class): the launch fails retryably, as on a NodeClass that is not ready."""
    cls = f"nc-efa-{uuid.uuid4().hex[:6]}"
    custom_objects.create(
        admin, EC2NODECLASS, _nodeclass(cls, networkInterfaces=FIELDS["networkInterfaces"])
    )
    name = f"acts-{uuid.uuid4().hex[:6]}"
    ref = {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": cls}
    create_claim(admin, name, "acts", nodeClassRef=ref)
    spec = claims.prepare(deps, name)
    assert spec is not None
    with pytest.raises(ApplicationError) as failed:
        launch.launch(deps, spec)
    assert failed.value.type == "UnsupportedField" and not failed.value.non_retryable
    assert "spec.networkInterfaces" in str(failed.value)
    launched = [i.id for i in cloud.provider.list_owned("acts") if name in i.tags.values()]
    assert launched == []
