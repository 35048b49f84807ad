"""AKSNodeClass: the provider's manifests parse, defaults are the provider's, and each bad
field is reported on one line that names it."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from models.aksnodeclass import (
    AKSNodeClass,
    unimplemented_fields,
    validation_condition,
)
from models.errors import field_error

SUBNET = (
    "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/MC_rg_cluster_eastus"
    "/providers/Microsoft.Network/virtualNetworks/aks-vnet-12345678/subnets/aks-subnet"
)

MINIMAL = """
apiVersion: karpenter.azure.com/v1beta1
kind: AKSNodeClass
metadata:
  name: default
  annotations:
    kubernetes.io/description: "General purpose AKSNodeClass for running Ubuntu nodes"
spec:
  imageFamily: Ubuntu
"""


def _full() -> dict[str, Any]:
    """Every v1beta1 field set to a valid value."""
    zone = {
        "queryLogging": "Error",
        "protocol": "PreferUDP",
        "forwardPolicy": "Sequential",
        "maxConcurrent": 1000,
        "cacheDuration": "1h",
        "serveStaleDuration": "30s",
        "serveStale": "Immediate",
    }
    return {
        "apiVersion": "karpenter.azure.com/v1beta1",
        "kind": "AKSNodeClass",
        "metadata": {"name": "full"},
        "spec": {
            "vnetSubnetID": SUBNET,
            "osDiskSizeGB": 256,
            "imageFamily": "Ubuntu2204",
            "fipsMode": "FIPS",
            "tags": {"team": "platform", "cost-center": "42"},
            "kubelet": {
                "cpuManagerPolicy": "static",
                "cpuCFSQuota": False,
                "cpuCFSQuotaPeriod": "50ms",
                "imageGCHighThresholdPercent": 85,
                "imageGCLowThresholdPercent": 80,
                "topologyManagerPolicy": "best-effort",
                "allowedUnsafeSysctls": ["net.core.somaxconn"],
                "containerLogMaxSize": "100Mi",
                "containerLogMaxFiles": 3,
                "podPidsLimit": 4096,
                "failSwapOn": False,
            },
            "maxPods": 110,
            "security": {
                "encryptionAtHost": True,
                "trustedLaunch": {"vtpm": True, "secureBoot": True},
            },
            "localDNS": {
                "mode": "Preferred",
                "vnetDNSOverrides": [
                    {"zone": ".", "forwardDestination": "VnetDNS", **zone},
                    {"zone": "cluster.local", "forwardDestination": "ClusterCoreDNS", **zone},
                ],
                "kubeDNSOverrides": [
                    {"zone": ".", "forwardDestination": "ClusterCoreDNS", **zone},
                    {"zone": "cluster.local", "forwardDestination": "ClusterCoreDNS", **zone},
                ],
            },
            "gpu": {"mode": "None"},
            "artifactStreaming": {"enabled": True},
            "linuxOSConfig": {
                "swapFileSize": "1500Mi",
                "transparentHugePageDefrag": "defer+madvise",
                "transparentHugePageEnabled": "madvise",
                "sysctls": {
                    "netCoreSomaxconn": 16384,
                    "netCoreRmemDefault": 212992,
                    "netCoreRmemMax": 1048576,
                    "netIPv4IPLocalPortRange": "32768 60999",
                    "netIPv4TCPTwReuse": True,
                    "vmMaxMapCount": 262144,
                },
            },
        },
    }


def _error(doc: dict[str, Any]) -> str:
    with pytest.raises(ValidationError) as info:
        AKSNodeClass.model_validate(doc)
    return field_error(info.value)


def test_minimal_manifest_gets_the_provider_defaults() -> None:
    nc = AKSNodeClass.model_validate(yaml.safe_load(MINIMAL))
    assert nc.spec.image_family == "Ubuntu"
    assert nc.spec.os_disk_size_gb == 128
    assert nc.spec.max_pods is None  # the network plugin decides
    assert nc.spec.fips_mode is None
    assert nc.spec.gpu_mode == "Driver"
    assert not nc.spec.encryption_at_host and not nc.spec.trusted_launch_enabled


def test_empty_spec_is_valid() -> None:
    nc = AKSNodeClass.model_validate(
        {
            "apiVersion": "karpenter.azure.com/v1beta1",
            "kind": "AKSNodeClass",
            "metadata": {"name": "x"},
        }
    )
    assert nc.spec.os_disk_size_gb == 128 and nc.spec.image_family == "Ubuntu"


def test_every_field_parses_and_round_trips() -> None:
    doc = _full()
    nc = AKSNodeClass.model_validate(doc)
    wire = nc.to_wire()
    assert wire["spec"]["vnetSubnetID"] == SUBNET
    assert wire["spec"]["osDiskSizeGB"] == 256
    assert wire["spec"]["localDNS"]["vnetDNSOverrides"][1]["zone"] == "cluster.local"
    assert wire["spec"]["kubelet"]["cpuCFSQuota"] is False
    assert wire["spec"]["linuxOSConfig"]["sysctls"] == doc["spec"]["linuxOSConfig"]["sysctls"]
    assert AKSNodeClass.model_validate(wire).to_wire() == wire
    assert nc.spec.trusted_launch_enabled and nc.spec.encryption_at_host


def test_kubelet_defaults_when_kubelet_is_given() -> None:
    doc = yaml.safe_load(MINIMAL)
    doc["spec"]["kubelet"] = {"imageGCHighThresholdPercent": 90}
    kubelet = AKSNodeClass.model_validate(doc).to_wire()["spec"]["kubelet"]
    assert kubelet == {
        "cpuManagerPolicy": "none",
        "cpuCFSQuota": True,
        "cpuCFSQuotaPeriod": "100ms",
        "imageGCHighThresholdPercent": 90,
        "topologyManagerPolicy": "none",
        "containerLogMaxSize": "50Mi",
        "containerLogMaxFiles": 5,
    }


def test_status_as_the_provider_reports_it() -> None:
    doc = yaml.safe_load(MINIMAL)
    doc["status"] = {
        "kubernetesVersion": "1.33.2",
        "images": [
            {
                "id": "/CommunityGalleries/AKSUbuntu-38d80f77-467a-481f-a8d4-09b6d4220bd2"
                "/images/2204gen2containerd/versions/202512.18.0",
                "requirements": [
                    {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
                    {
                        "key": "karpenter.azure.com/sku-hyperv-generation",
                        "operator": "In",
                        "values": ["2"],
                    },
                ],
            }
        ],
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "Ready",
                "message": "",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
                "observedGeneration": 1,
            },
        ],
        "localDNSState": "Disabled",
    }
    nc = AKSNodeClass.model_validate(doc)
    assert nc.status.kubernetes_version == "1.33.2"
    assert nc.status.images[0].requirements[1].values == ["2"]
    assert not nc.local_dns_enabled


def _set(path: str, value: Any) -> dict[str, Any]:
    doc = copy.deepcopy(_full())
    node: Any = doc
    *parents, last = path.split(".")
    for p in parents:
        node = node[int(p)] if p.isdigit() else node[p]
    node[last] = value
    return doc


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        ("spec.osDiskSizeGB", 20, "spec.osDiskSizeGB: "),
        ("spec.osDiskSizeGB", 4096, "spec.osDiskSizeGB: "),
        ("spec.maxPods", 5, "spec.maxPods: "),
        ("spec.maxPods", 251, "spec.maxPods: "),
        ("spec.imageFamily", "Windows2022", "spec.imageFamily: "),
        ("spec.fipsMode", "Enabled", "spec.fipsMode: "),
        ("spec.vnetSubnetID", "subnet-123", "spec.vnetSubnetID: "),
        ("spec.tags", {"a<b": "x"}, "spec.tags: "),
        ("spec.tags", {"k": "v" * 257}, "spec.tags: "),
        ("spec.kubelet.cpuManagerPolicy", "dynamic", "spec.kubelet.cpuManagerPolicy: "),
        ("spec.kubelet.containerLogMaxFiles", 1, "spec.kubelet.containerLogMaxFiles: "),
        ("spec.kubelet.containerLogMaxSize", "50MB", "spec.kubelet.containerLogMaxSize: "),
        ("spec.kubelet.imageGCLowThresholdPercent", 90, "spec.kubelet: imageGCHigh"),
        ("spec.gpu.mode", "Auto", "spec.gpu.mode: "),
        ("spec.localDNS.mode", "On", "spec.localDNS.mode: "),
        ("spec.localDNS.kubeDNSOverrides", [], "spec.localDNS.kubeDNSOverrides: must contain"),
        (
            "spec.localDNS.vnetDNSOverrides.0.forwardDestination",
            "ClusterCoreDNS",
            "spec.localDNS.vnetDNSOverrides: root zone",
        ),
        (
            "spec.localDNS.vnetDNSOverrides.1.forwardDestination",
            "VnetDNS",
            "spec.localDNS.vnetDNSOverrides[1]: forwardDestination: 'cluster.local'",
        ),
        (
            "spec.localDNS.kubeDNSOverrides.0.cacheDuration",
            "1 hour",
            "spec.localDNS.kubeDNSOverrides[0].cacheDuration: ",
        ),
        (
            "spec.linuxOSConfig.sysctls.vmSwappiness",
            101,
            "spec.linuxOSConfig.sysctls: vmSwappiness: must be between 0 and 100",
        ),
        (
            "spec.linuxOSConfig.sysctls.netCoreRmemDefault",
            2097152,
            "spec.linuxOSConfig.sysctls: netCoreRmemDefault: must be <= netCoreRmemMax",
        ),
        (
            "spec.linuxOSConfig.sysctls.netIPv4IPLocalPortRange",
            "80 60999",
            "spec.linuxOSConfig.sysctls: netIPv4IPLocalPortRange: first port",
        ),
        (
            "spec.linuxOSConfig.transparentHugePageEnabled",
            "sometimes",
            "spec.linuxOSConfig.transparentHugePageEnabled: ",
        ),
        ("spec.imageFamily", "Ubuntu2404", "spec: fipsMode: FIPS is not yet supported"),
        ("spec.security.trustedLaunch", {"vtpm": False}, "spec: fipsMode: TrustedLaunch is"),
        ("spec.kubelet.failSwapOn", True, "spec: linuxOSConfig.swapFileSize: kubelet.failSwapOn"),
    ],
)
def test_each_bad_field_is_one_line_naming_it(path: str, value: Any, expected: str) -> None:
    message = _error(_set(path, value))
    assert "\n" not in message
    assert message.startswith(expected), message


def test_fips_with_trusted_launch_only_on_ubuntu() -> None:
    doc = _set("spec.imageFamily", "AzureLinux")
    assert _error(doc).startswith("spec: fipsMode: TrustedLaunch with FIPS is only supported")
    doc["spec"]["security"]["trustedLaunch"] = None
    AKSNodeClass.model_validate(doc)  # FIPS on AzureLinux without trusted launch is fine


def test_unimplemented_fields_are_named_not_ignored() -> None:
    full = AKSNodeClass.model_validate(_full())
    assert unimplemented_fields(full.spec) == [
        "localDNS",
        "artifactStreaming",
        "linuxOSConfig",
        "kubelet.cpuManagerPolicy",
        "kubelet.topologyManagerPolicy",
        "kubelet.allowedUnsafeSysctls",
        "kubelet.failSwapOn",
    ]
    condition = validation_condition(full.spec, generation=3)
    assert condition.type == "ValidationSucceeded" and condition.status == "False"
    assert condition.reason == "UnsupportedField"
    assert condition.message.startswith("spec.localDNS: ")
    assert "spec.kubelet.failSwapOn" in condition.message
    assert condition.observed_generation == 3


def test_a_plain_class_validates() -> None:
    nc = AKSNodeClass.model_validate(yaml.safe_load(MINIMAL))
    assert unimplemented_fields(nc.spec) == []
    assert validation_condition(nc.spec).status == "True"
    doc = yaml.safe_load(MINIMAL)
    doc["spec"]["localDNS"] = None
    doc["spec"]["kubelet"] = {"cpuManagerPolicy": "none", "podPidsLimit": 100}
    assert unimplemented_fields(AKSNodeClass.model_validate(doc).spec) == []
