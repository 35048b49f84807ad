"""The custom data a VM boots with holds every value its node needs to join: decoded and
parsed here (base64 → cloud-config YAML → each file in its own format) and each value
checked against the inputs given, not against anything the renderer builds."""

from __future__ import annotations

import base64
import json
import shlex
from typing import Any

import pytest
import yaml
from azure.mgmt.compute.models import ResourceSku

from activities.azure.bootstrap import BootstrapParams, ClusterJoin, render_custom_data
from activities.azure.skus import Sku
from activities.cloud.launch import LaunchRequest
from models.aksnodeclass import AKSNodeClass

CA = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUJoinery\n-----END CERTIFICATE-----\n"
SUBNET = (
    "/subscriptions/sub-1/resourceGroups/vnet-rg/providers/Microsoft.Network"
    "/virtualNetworks/aks-vnet/subnets/nodes"
)


def _cluster(**kw: Any) -> ClusterJoin:
    base: dict[str, Any] = {
        "cluster_name": "prod",
        "api_server": "prod-dns-1a2b3c.hcp.eastus.azmk8s.io",
        "ca_bundle": base64.b64encode(CA.encode()).decode(),
        "kubernetes_version": "1.33.2",
        "subscription_id": "sub-1",
        "tenant_id": "tenant-1",
        "node_resource_group": "MC_rg_prod_eastus",
        "location": "eastus",
        "bootstrap_token": "abcdef.0123456789abcdef",
        "kubelet_identity_client_id": "11111111-2222-3333-4444-555555555555",
        "cluster_dns": "10.0.0.10",
    }
    base.update(kw)
    return ClusterJoin(**base)


def _nodeclass(family: str) -> AKSNodeClass:
    return AKSNodeClass.model_validate(
        {
            "metadata": {"name": "default"},
            "spec": {
                "imageFamily": family,
                "maxPods": 42,
                "kubelet": {
                    "imageGCHighThresholdPercent": 70,
                    "imageGCLowThresholdPercent": 50,
                    "containerLogMaxSize": "20Mi",
                    "containerLogMaxFiles": 3,
                    "podPidsLimit": 4096,
                    "cpuCFSQuota": False,
                },
            },
        }
    )


def _request() -> LaunchRequest:
    return LaunchRequest(
        nodeclaim_name="default-x7k2p",
        nodeclaim_uid="uid-1",
        nodepool_name="default",
        nodeclass_name="default",
        labels={
            "karpenter.sh/nodepool": "default",
            "team": "payments",
            "node-role.kubernetes.io/worker": "",  # the kubelet may not set this one
        },
        taints=[{"key": "dedicated", "value": "payments", "effect": "NoSchedule"}],
        startup_taints=[{"key": "node.cilium.io/agent-not-ready", "effect": "NoExecute"}],
    )


def _decode(custom_data: str) -> dict[str, Any]:
    text = base64.b64decode(custom_data, validate=True).decode()
    assert text.startswith("#cloud-config\n")
    doc = yaml.safe_load(text)
    assert isinstance(doc, dict)
    return doc


def _files(doc: dict[str, Any]) -> dict[str, str]:
    return {f["path"]: f["content"] for f in doc["write_files"]}


def _env(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        key, _, raw = line.partition("=")
        (value,) = shlex.split(raw) or [""]
        out[key] = value
    return out


def _flags(line: str) -> dict[str, str]:
    out = {}
    for part in line.split(" "):
        key, _, value = part.partition("=")
        out[key] = value
    return out


def _render(family: str, **cluster: Any) -> dict[str, Any]:
    params = BootstrapParams.for_launch(
        _cluster(**cluster),
        _nodeclass(family),
        _request(),
        arch="arm64" if family == "AzureLinux" else "amd64",
        max_pods=42,
        subnet_id=SUBNET,
        node_image_version=f"AKS{family}-202512.18.0",
        labels={"node.kubernetes.io/instance-type": "Standard_D4s_v5"},
    )
    return _decode(render_custom_data(params))


@pytest.mark.parametrize(
    ("family", "os_sku", "effective", "arch"),
    [
        ("Ubuntu2204", "Ubuntu", "Ubuntu2204", "amd64"),
        ("Ubuntu2404", "Ubuntu", "Ubuntu2404", "amd64"),
        # Kubernetes 1.33: AzureLinux is v3 from 1.32
        ("AzureLinux", "AzureLinux", "AzureLinux3", "arm64"),
    ],
)
def test_every_join_value_is_present(family: str, os_sku: str, effective: str, arch: str) -> None:
    doc = _render(family)
    files = _files(doc)
    assert files["/etc/kubernetes/certs/ca.crt"] == CA

    kubeconfig = yaml.safe_load(files["/var/lib/kubelet/bootstrap-kubeconfig"])
    cluster = kubeconfig["clusters"][0]["cluster"]
    assert cluster["server"] == "https://prod-dns-1a2b3c.hcp.eastus.azmk8s.io:443"
    assert cluster["certificate-authority"] == "/etc/kubernetes/certs/ca.crt"
    assert kubeconfig["users"][0]["user"] == {"token": "abcdef.0123456789abcdef"}

    azure = json.loads(files["/etc/kubernetes/azure.json"])
    assert azure["tenantId"] == "tenant-1"
    assert azure["subscriptionId"] == "sub-1"
    assert azure["resourceGroup"] == "MC_rg_prod_eastus"
    assert azure["location"] == "eastus"
    assert (azure["vnetResourceGroup"], azure["vnetName"], azure["subnetName"]) == (
        "vnet-rg",
        "aks-vnet",
        "nodes",
    )
    assert azure["userAssignedIdentityID"] == "11111111-2222-3333-4444-555555555555"

    kubelet = _env(files["/etc/default/kubelet"])
    flags = _flags(kubelet["KUBELET_FLAGS"])
    assert flags["--cluster-dns"] == "10.0.0.10"
    assert flags["--max-pods"] == "42"
    assert flags["--image-gc-high-threshold"] == "70"
    assert flags["--image-gc-low-threshold"] == "50"
    assert flags["--container-log-max-size"] == "20Mi"
    assert flags["--container-log-max-files"] == "3"
    assert flags["--pod-max-pids"] == "4096"
    assert flags["--cpu-cfs-quota"] == "false"
    assert flags["--client-ca-file"] == "/etc/kubernetes/certs/ca.crt"
    assert flags["--bootstrap-kubeconfig"] == "/var/lib/kubelet/bootstrap-kubeconfig"
    assert sorted(flags["--register-with-taints"].split(",")) == sorted(
        [
            "dedicated=payments:NoSchedule",
            "node.cilium.io/agent-not-ready:NoExecute",
            "karpenter.sh/unregistered:NoExecute",
        ]
    )
    labels = dict(kv.split("=", 1) for kv in kubelet["KUBELET_NODE_LABELS"].split(","))
    assert labels["karpenter.sh/nodepool"] == "default"
    assert labels["team"] == "payments"
    assert labels["node.kubernetes.io/instance-type"] == "Standard_D4s_v5"
    assert "node-role.kubernetes.io/worker" not in labels
    assert labels["kubernetes.azure.com/os-sku"] == os_sku
    assert labels["kubernetes.azure.com/os-sku-requested"] == family
    assert labels["kubernetes.azure.com/os-sku-effective"] == effective
    assert labels["karpenter.sh/do-not-sync-taints"] == "true"
    assert "kubernetes.azure.com/fips_enabled" not in labels
    assert labels["kubernetes.azure.com/cluster"] == "MC_rg_prod_eastus"
    assert labels["kubernetes.azure.com/mode"] == "user"
    assert labels["kubernetes.azure.com/node-image-version"] == f"AKS{family}-202512.18.0"
    assert labels["kubernetes.azure.com/kubelet-identity-client-id"] == (
        "11111111-2222-3333-4444-555555555555"
    )

    env = _env(files["/opt/azure/joinery/node.env"])
    assert env["KUBERNETES_VERSION"] == "1.33.2"
    assert env["IMAGE_FAMILY"] == family
    assert env["IMAGE_FAMILY_EFFECTIVE"] == effective
    assert env["OS_SKU"] == os_sku
    assert env["ARCH"] == arch
    assert env["API_SERVER"] == "https://prod-dns-1a2b3c.hcp.eastus.azmk8s.io:443"
    assert ["systemctl", "enable", "--now", "kubelet"] in doc["runcmd"]


def test_kubelet_identity_without_token() -> None:
    doc = _render("Ubuntu2204", bootstrap_token="")
    kubeconfig = yaml.safe_load(_files(doc)["/var/lib/kubelet/bootstrap-kubeconfig"])
    user = kubeconfig["users"][0]["user"]
    assert "token" not in user
    args = user["exec"]["args"]
    assert args[args.index("--client-id") + 1] == "11111111-2222-3333-4444-555555555555"
    assert args[args.index("--login") + 1] == "msi"


def test_no_credential_is_refused() -> None:
    with pytest.raises(ValueError, match="neither a bootstrap token nor a kubelet identity"):
        _render("Ubuntu2204", bootstrap_token="", kubelet_identity_client_id="")


def test_pem_ca_and_bad_ca() -> None:
    assert _files(_render("Ubuntu2404", ca_bundle=CA))["/etc/kubernetes/certs/ca.crt"] == CA
    with pytest.raises(ValueError, match="CA bundle"):
        _render("Ubuntu2404", ca_bundle="not a certificate")


def _sku(vcpus: str, memory_gb: str) -> Sku:
    caps = {"vCPUs": vcpus, "MemoryGB": memory_gb, "CpuArchitectureType": "x64"}
    item: dict[str, Any] = {
        "resourceType": "virtualMachines",
        "name": "Standard_D4s_v5",
        "size": "D4s_v5",
        "family": "standardDSv5Family",
        "locations": ["eastus"],
        "locationInfo": [{"location": "eastus", "zones": ["1"]}],
        "capabilities": [{"name": k, "value": v} for k, v in caps.items()],
        "restrictions": [],
    }
    return Sku.from_sdk(ResourceSku(item), "eastus")


def test_kube_reserved_follows_aks_sliding_scale() -> None:
    """AKS's documented reservation for a 4 vCPU / 16 GiB VM: CPU 60+40+20+20 = 140m; memory
    25% of 4 GiB + 20% of 4 GiB + 10% of 8 GiB = 2.6 GiB = 2662Mi (whole MiB)."""
    params = BootstrapParams.for_launch(
        _cluster(),
        _nodeclass("Ubuntu2204"),
        _request(),
        arch="amd64",
        max_pods=42,
        subnet_id=SUBNET,
        sku=_sku("4", "16"),
    )
    files = _files(_decode(render_custom_data(params)))
    flags = _flags(_env(files["/etc/default/kubelet"])["KUBELET_FLAGS"])
    assert sorted(flags["--kube-reserved"].split(",")) == ["cpu=140m", "memory=2662Mi"]


def test_cluster_label_is_aks_label_form() -> None:
    """A node resource group with parentheses becomes a valid label value, as AKS writes it."""
    doc = _render("Ubuntu2204", node_resource_group="MC_rg(prod)")
    kubelet = _env(_files(doc)["/etc/default/kubelet"])
    labels = dict(kv.split("=", 1) for kv in kubelet["KUBELET_NODE_LABELS"].split(","))
    assert labels["kubernetes.azure.com/cluster"] == "MC_rg-prod-z"


def test_ubuntu_follows_the_kubernetes_version() -> None:
    """Unset/Ubuntu boots 22.04 before Kubernetes 1.34 and 24.04 from it; AzureLinux v2
    before 1.32."""

    def effective(family: str, version: str) -> str:
        doc = _render(family, kubernetes_version=version)
        kubelet = _env(_files(doc)["/etc/default/kubelet"])
        labels = dict(kv.split("=", 1) for kv in kubelet["KUBELET_NODE_LABELS"].split(","))
        return labels["kubernetes.azure.com/os-sku-effective"]

    assert effective("Ubuntu", "1.33.5") == "Ubuntu2204"
    assert effective("Ubuntu", "1.34.0") == "Ubuntu2404"
    assert effective("AzureLinux", "1.31.9") == "AzureLinux2"
