"""After azvms and azdeploy are merged: the chart's provider=azure environment reaches the
worker's ProviderOptions (worker/running/azure_settings.py) field by field.

Fails on the merged code until azure_settings reads Karpenter Azure's LOCATION (the region:
without it the worker's region is --region's AWS default) and VNET_SUBNET_ID (Karpenter
Azure's name for the default node subnet; azure_settings reads AZURE_SUBNET_ID).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from activities.cloud.options import ProviderOptions
from tests.e2e.test_deploy_helm import render
from tests.e2e.test_deploy_helm_azure import AZURE, NODE_RG, SUBNET, SUBSCRIPTION, _env, _sets
from worker.running import azure_settings


def test_the_charts_azure_environment_reaches_the_provider_options(helm: Path) -> None:
    values = {
        "azure.vnetSubnetID": SUBNET,
        "azure.nodeIdentities": "/id/kubelet",
        "azure.kubeletIdentityClientID": "kcid",
        "azure.sshPublicKey": "ssh-rsa AAA",
    }
    env = {
        k: v for k, v in _env(render(helm, *AZURE, *_sets(values))).items() if isinstance(v, str)
    }
    env["KUBELET_BOOTSTRAP_TOKEN"] = "abcdef.0123456789abcdef"  # the Secret's value
    opts = dataclasses.replace(
        ProviderOptions(provider="azure"), **azure_settings.provider_fields(env)
    )
    assert (opts.subscription_id, opts.node_resource_group) == (SUBSCRIPTION, NODE_RG)
    assert opts.region == "eastus"
    assert opts.azure_subnet_id == SUBNET
    assert opts.node_identities == ("/id/kubelet",)
    assert (opts.kubelet_identity_client_id, opts.ssh_public_key) == ("kcid", "ssh-rsa AAA")
    assert opts.kubelet_bootstrap_token == "abcdef.0123456789abcdef"
