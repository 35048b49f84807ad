"""The sandbox's simulated AKS node reads its join facts from the VM's custom data: rendered
by the bootstrap for a claim, each value it registers with is the claim's own."""

from __future__ import annotations

import base64

import pytest

from activities.azure.bootstrap import BootstrapParams, ClusterJoin, render_custom_data
from activities.cloud.launch import LaunchRequest
from models.aksnodeclass import AKSNodeClass
from sandbox.azure.node_join import BadCustomData, read_custom_data

CA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def _custom_data() -> str:
    cluster = ClusterJoin(
        cluster_name="dev",
        api_server="https://127.0.0.1:6443",
        ca_bundle=CA,
        kubernetes_version="v1.34.1",
        subscription_id="s",
        tenant_id="t",
        node_resource_group="MC_dev",
        location="eastus",
        bootstrap_token="abcdef.0123456789abcdef",
    )
    nodeclass = AKSNodeClass.model_validate(
        {"metadata": {"name": "default"}, "spec": {"imageFamily": "AzureLinux"}}
    )
    request = LaunchRequest(
        "default-abcde",
        "uid",
        "default",
        "default",
        labels={"karpenter.sh/nodepool": "default", "app": "web"},
        taints=[{"key": "gpu", "value": "true", "effect": "NoSchedule"}],
    )
    params = BootstrapParams.for_launch(
        cluster, nodeclass, request, arch="amd64", max_pods=30, subnet_id=""
    )
    return render_custom_data(params)


def test_a_node_joins_with_the_claims_values() -> None:
    join = read_custom_data(_custom_data())
    assert join.server == "https://127.0.0.1:6443"
    assert join.kubelet_version == "v1.34.1"
    assert join.image_family == "AzureLinux"
    assert join.max_pods == 30
    assert join.labels["karpenter.sh/nodepool"] == "default"
    assert join.labels["app"] == "web"
    assert join.labels["kubernetes.azure.com/os-sku"] == "AzureLinux"
    assert {"key": "gpu", "value": "true", "effect": "NoSchedule"} in join.taints
    assert {"key": "karpenter.sh/unregistered", "effect": "NoExecute"} in join.taints


@pytest.mark.parametrize(
    ("data", "why"),
    [
        ("not base64!", "not base64"),
        (base64.b64encode(b"#!/bin/sh\necho hi\n").decode(), "not a #cloud-config"),
        (base64.b64encode(b"#cloud-config\nwrite_files: []\n").decode(), "writes no"),
    ],
)
def test_custom_data_a_node_could_not_join_with(data: str, why: str) -> None:
    with pytest.raises(BadCustomData, match=why):
        read_custom_data(data)
