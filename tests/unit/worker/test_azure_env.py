"""The AKS facts the worker reads under Karpenter Azure's environment names."""

from __future__ import annotations

from dataclasses import fields

from worker.running.azure_env import ENV_NAMES, REQUIRED, AzureEnvironment, read


def test_every_fact_has_one_variable() -> None:
    assert set(ENV_NAMES) == {f.name for f in fields(AzureEnvironment)}
    assert len(set(ENV_NAMES.values())) == len(ENV_NAMES)


def test_a_karpenter_azure_environment_is_read_as_it_is() -> None:
    # the names and shapes of Karpenter Azure's karpenter-values-template.yaml
    env = {
        "AZURE_SUBSCRIPTION_ID": "sub",
        "LOCATION": " eastus ",
        "ARM_RESOURCE_GROUP": "prod",
        "AZURE_NODE_RESOURCE_GROUP": "MC_prod_prod-east_eastus",
        "VNET_SUBNET_ID": "/subscriptions/sub/resourceGroups/n/providers/Microsoft.Network/"
        "virtualNetworks/v/subnets/s",
        "NETWORK_PLUGIN": "azure",
        "NETWORK_PLUGIN_MODE": "overlay",
        "NETWORK_POLICY": "",
        "NETWORK_DATAPLANE": "cilium",
        "NODE_IDENTITIES": "/id/one, /id/two,",
        "KUBELET_IDENTITY_CLIENT_ID": "kcid",
        "SSH_PUBLIC_KEY": "ssh-rsa AAA azureuser",
        "KUBELET_BOOTSTRAP_TOKEN": "abcdef.0123456789abcdef",
        "AZURE_TENANT_ID": "tenant",
        "CLUSTER_NAME": "not-azure-specific",
    }
    got = read(env)
    assert got.location == "eastus" and got.subscription_id == "sub"
    assert got.node_resource_group == "MC_prod_prod-east_eastus"
    assert got.node_identities == ("/id/one", "/id/two")
    assert got.bootstrap_token == "abcdef.0123456789abcdef"
    assert got.network_policy == "" and got.network_dataplane == "cilium"
    assert got.missing() == []


def test_each_missing_required_fact_is_one_line_naming_its_variable() -> None:
    assert read({}).missing() == [
        "--provider azure: AZURE_SUBSCRIPTION_ID is not set (subscription id)",
        "--provider azure: LOCATION is not set (location)",
        "--provider azure: AZURE_NODE_RESOURCE_GROUP is not set (node resource group)",
    ]
    assert len(REQUIRED) == 3
    only_location = read({"LOCATION": "eastus", "AZURE_SUBSCRIPTION_ID": "s"})
    assert only_location.missing() == [
        "--provider azure: AZURE_NODE_RESOURCE_GROUP is not set (node resource group)"
    ]
