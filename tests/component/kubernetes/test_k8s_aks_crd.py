"""The AKSNodeClass CRD in deploy/crds accepts the Azure provider's manifests, fills in its
defaults, and rejects what its validation rejects, on a real API server."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from activities.kubernetes import custom_objects
from activities.kubernetes.client import Kube
from activities.kubernetes.errors import Forbidden, Invalid
from activities.kubernetes.resources import CustomResource
from models.aksnodeclass import AKSNodeClass

AKSNODECLASS = CustomResource("karpenter.azure.com", "v1beta1", "aksnodeclasses", "AKSNodeClass")
SUBNET = (
    "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/MC_rg_c_eastus"
    "/providers/Microsoft.Network/virtualNetworks/aks-vnet-12345678/subnets/aks-subnet"
)
ZONE = {
    "queryLogging": "Error",
    "protocol": "PreferUDP",
    "forwardPolicy": "Sequential",
    "maxConcurrent": 1000,
    "cacheDuration": "1h",
    "serveStaleDuration": "30s",
    "serveStale": "Immediate",
}


def _doc(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "karpenter.azure.com/v1beta1",
        "kind": "AKSNodeClass",
        "metadata": {"name": name},
        "spec": spec,
    }


FULL_SPEC: dict[str, Any] = {
    "vnetSubnetID": SUBNET,
    "osDiskSizeGB": 64,
    "imageFamily": "AzureLinux",
    "fipsMode": "FIPS",
    "tags": {"team": "platform"},
    "kubelet": {
        "imageGCHighThresholdPercent": 85,
        "imageGCLowThresholdPercent": 80,
        "failSwapOn": False,
    },
    "maxPods": 50,
    "security": {"encryptionAtHost": True},
    "localDNS": {
        "mode": "Required",
        "vnetDNSOverrides": [
            {"zone": ".", "forwardDestination": "VnetDNS", **ZONE},
            {"zone": "cluster.local", "forwardDestination": "ClusterCoreDNS", **ZONE},
        ],
        "kubeDNSOverrides": [
            {"zone": ".", "forwardDestination": "ClusterCoreDNS", **ZONE},
            {"zone": "cluster.local", "forwardDestination": "ClusterCoreDNS", **ZONE},
        ],
    },
    "gpu": {"mode": "None"},
    "artifactStreaming": {"enabled": False},
    "linuxOSConfig": {
        "swapFileSize": "1Gi",
        "sysctls": {"netCoreSomaxconn": 16384, "netIPv4IPLocalPortRange": "32768 60999"},
        "transparentHugePageEnabled": "never",
    },
}


@pytest.fixture
def created(admin: Kube) -> Iterator[Callable[[dict[str, Any]], dict[str, Any]]]:
    made: list[str] = []

    def create(doc: dict[str, Any]) -> dict[str, Any]:
        obj = custom_objects.create(admin, AKSNODECLASS, doc)
        made.append(obj["metadata"]["name"])
        return obj

    yield create
    for name in made:
        custom_objects.delete(admin, AKSNODECLASS, name)


def test_joinery_reads_aks_node_classes_and_reports_their_status(
    created: Callable[[dict[str, Any]], dict[str, Any]], kube: Kube, unique: str
) -> None:
    """As Joinery (the token bound to deploy/rbac): get, list and status patches are allowed;
    the spec is the user's, so changing it is not."""
    name = f"rbac-{unique}"
    created(_doc(name, {"imageFamily": "AzureLinux"}))
    assert custom_objects.get(kube, AKSNODECLASS, name)["spec"]["imageFamily"] == "AzureLinux"
    items, _ = custom_objects.list_(kube, AKSNODECLASS)
    assert name in {i["metadata"]["name"] for i in items}
    condition = {
        "type": "ValidationSucceeded",
        "status": "True",
        "reason": "ValidationSucceeded",
        "message": "",
        "lastTransitionTime": "2026-11-28T10:00:00Z",
    }
    patched = custom_objects.merge_patch(
        kube, AKSNODECLASS, name, {"status": {"conditions": [condition]}}, status=True
    )
    assert patched["status"]["conditions"][0]["type"] == "ValidationSucceeded"
    with pytest.raises(Forbidden):
        custom_objects.merge_patch(kube, AKSNODECLASS, name, {"spec": {"maxPods": 30}})


def test_defaults_are_the_providers(
    created: Callable[[dict[str, Any]], dict[str, Any]], admin: Kube, unique: str
) -> None:
    stored = created(_doc(f"plain-{unique}", {"imageFamily": "Ubuntu", "kubelet": {}}))
    assert stored["spec"]["osDiskSizeGB"] == 128
    assert stored["spec"]["kubelet"] == {
        "cpuManagerPolicy": "none",
        "cpuCFSQuota": True,
        "cpuCFSQuotaPeriod": "100ms",
        "topologyManagerPolicy": "none",
        "containerLogMaxSize": "50Mi",
        "containerLogMaxFiles": 5,
    }
    # The model agrees with the API's defaults.
    read = custom_objects.get(admin, AKSNODECLASS, stored["metadata"]["name"])
    model = AKSNodeClass.model_validate(read).to_wire()["spec"]
    assert {k: v for k, v in model.items() if k != "tags"} == read["spec"]
    empty = created(_doc(f"empty-{unique}", {}))
    assert empty["spec"] == {"imageFamily": "Ubuntu", "osDiskSizeGB": 128}


def test_every_field_is_kept(
    created: Callable[[dict[str, Any]], dict[str, Any]], unique: str
) -> None:
    stored = created(_doc(f"full-{unique}", copy.deepcopy(FULL_SPEC)))
    for key, value in FULL_SPEC.items():
        if isinstance(value, dict):
            for inner, v in value.items():
                assert stored["spec"][key][inner] == v, (key, inner)
        else:
            assert stored["spec"][key] == value, key


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"osDiskSizeGB": 10}, "osDiskSizeGB"),
        ({"maxPods": 300}, "maxPods"),
        ({"imageFamily": "Windows2022"}, "imageFamily"),
        ({"vnetSubnetID": "subnet-1"}, "vnetSubnetID"),
        ({"tags": {"a?b": "c"}}, "tags keys must not contain"),
        ({"imageFamily": "Ubuntu2404", "security": None}, "FIPS is not yet supported"),
        ({"imageFamily": "Ubuntu2204", "security": None}, "TrustedLaunch is required"),
        ({"kubelet": {"failSwapOn": True}}, "failSwapOn must be set to false"),
        (
            {
                "kubelet": {
                    "imageGCHighThresholdPercent": 10,
                    "imageGCLowThresholdPercent": 20,
                    "failSwapOn": False,
                }
            },
            "imageGCHighThresholdPercent must be greater",
        ),
        ({"linuxOSConfig": {"sysctls": {"vmSwappiness": 101}}}, "vmSwappiness"),
        (
            {"linuxOSConfig": {"sysctls": {"netIPv4IPLocalPortRange": "60000 40000"}}},
            "first port must be <= last port",
        ),
    ],
)
def test_invalid_specs_are_rejected(
    change: dict[str, Any],
    message: str,
    created: Callable[[dict[str, Any]], dict[str, Any]],
    unique: str,
) -> None:
    spec = copy.deepcopy(FULL_SPEC)
    for key, value in change.items():
        if value is None:
            spec.pop(key)
        else:
            spec[key] = value
    with pytest.raises(Invalid) as caught:
        created(_doc(f"bad-{unique}", spec))
    assert message in str(caught.value)


def test_localdns_rules(created: Callable[[dict[str, Any]], dict[str, Any]], unique: str) -> None:
    spec = copy.deepcopy(FULL_SPEC)
    spec["localDNS"]["vnetDNSOverrides"][0]["forwardDestination"] = "ClusterCoreDNS"
    with pytest.raises(Invalid) as caught:
        created(_doc(f"dns-{unique}", spec))
    assert "root zone '.' cannot be forwarded" in str(caught.value)
    spec = copy.deepcopy(FULL_SPEC)
    spec["localDNS"]["kubeDNSOverrides"].pop()
    with pytest.raises(Invalid) as caught:
        created(_doc(f"dns2-{unique}", spec))
    assert "must contain required zones" in str(caught.value)
