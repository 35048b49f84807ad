"""The Helm chart with ``provider=azure``: workload identity, the AKS cluster's facts under
Karpenter Azure's environment names, AKSNodeClass RBAC, and the real API server accepts it.

``helm`` is the pinned build (deploy/tools); the server-side dry run is the one
test_deploy_helm.py uses.
"""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from sandbox.cluster import Cluster
from tests.e2e.test_deploy_helm import CHART, REPO, by_kind, dry_run_install, one, render
from worker.cli.command import build_parser

pytestmark = pytest.mark.timeout(240)

CLIENT_ID = "5f0f6a4e-1c1e-4f43-9d7b-0a3b8c2d1e11"
SUBSCRIPTION = "8c6b1d3a-2f4e-4b5a-9c8d-7e6f5a4b3c2d"
NODE_RG = "MC_prod_prod-east_eastus"
SUBNET = (
    f"/subscriptions/{SUBSCRIPTION}/resourceGroups/net/providers/Microsoft.Network"
    "/virtualNetworks/vnet/subnets/nodes"
)
REQUIRED = {
    "azure.clientId": CLIENT_ID,
    "azure.subscriptionId": SUBSCRIPTION,
    "azure.location": "eastus",
    "azure.nodeResourceGroup": NODE_RG,
}


def _sets(values: dict[str, str]) -> list[str]:
    return [arg for key, value in values.items() for arg in ("--set", f"{key}={value}")]


AZURE = ("--set", "cluster.name=prod-east", "--set", "provider=azure", *_sets(REQUIRED))


def _container(docs: list[dict[str, Any]]) -> dict[str, Any]:
    (container,) = one(docs, "Deployment")["spec"]["template"]["spec"]["containers"]
    return container


def _env(docs: list[dict[str, Any]]) -> dict[str, Any]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in _container(docs)["env"]}


def test_workload_identity_and_the_clusters_facts(helm: Path) -> None:
    docs = render(
        helm,
        *AZURE,
        "--set", "azure.tenantId=72f988bf-0000-0000-0000-2d7cd011db47",
        "--set", "azure.resourceGroup=prod",
        "--set", f"azure.vnetSubnetID={SUBNET}",
        "--set", "azure.networkPlugin=azure",
        "--set", "azure.networkPluginMode=overlay",
        "--set", "azure.networkDataplane=cilium",
        "--set", "azure.nodeIdentities=/subscriptions/s/resourceGroups/MC/providers/"
                 "Microsoft.ManagedIdentity/userAssignedIdentities/prod-east-agentpool",
        "--set", "azure.kubeletIdentityClientID=0000-kubelet",
        "--set", "azure.bootstrapTokenSecret.name=joinery-bootstrap",
        "--set", "settings.clusterEndpoint=https://prod-east-dns.hcp.eastus.azmk8s.io:443",
        "--set", "settings.clusterCABundle=Q0E=",
        "--set", "cluster.kubernetesVersion=1.33",
        "--set", "cluster.serviceCIDR=10.0.0.0/16",
    )  # fmt: skip
    sa = one(docs, "ServiceAccount")
    assert sa["metadata"]["annotations"] == {
        "azure.workload.identity/client-id": CLIENT_ID,
        "azure.workload.identity/tenant-id": "72f988bf-0000-0000-0000-2d7cd011db47",
    }
    pod = one(docs, "Deployment")["spec"]["template"]
    assert pod["metadata"]["labels"]["azure.workload.identity/use"] == "true"
    assert pod["spec"]["serviceAccountName"] == sa["metadata"]["name"]
    env = _env(docs)
    assert env["JOINERY_PROVIDER"] == "azure"
    assert env["AZURE_SUBSCRIPTION_ID"] == SUBSCRIPTION
    assert env["LOCATION"] == "eastus"
    assert env["AZURE_NODE_RESOURCE_GROUP"] == NODE_RG
    assert env["ARM_RESOURCE_GROUP"] == "prod"
    assert env["VNET_SUBNET_ID"] == SUBNET
    assert (env["NETWORK_PLUGIN"], env["NETWORK_PLUGIN_MODE"]) == ("azure", "overlay")
    assert env["NETWORK_DATAPLANE"] == "cilium"
    assert env["NODE_IDENTITIES"].endswith("/userAssignedIdentities/prod-east-agentpool")
    assert env["KUBELET_IDENTITY_CLIENT_ID"] == "0000-kubelet"
    assert env["CLUSTER_ENDPOINT"] == "https://prod-east-dns.hcp.eastus.azmk8s.io:443"
    assert env["CLUSTER_CA_BUNDLE"] == "Q0E="
    assert (env["JOINERY_KUBERNETES_VERSION"], env["JOINERY_SERVICE_CIDR"]) == (
        "1.33",
        "10.0.0.0/16",
    )
    # the bootstrap token comes from a Secret, never from the values
    assert env["KUBELET_BOOTSTRAP_TOKEN"] == {
        "secretKeyRef": {"name": "joinery-bootstrap", "key": "token"}
    }
    assert "AWS_REGION" not in env and "NETWORK_POLICY" not in env  # empty: not passed


def test_the_default_provider_is_aws_without_azure_identity(helm: Path) -> None:
    docs = render(helm, "--set", "cluster.name=prod-east")
    assert _env(docs)["JOINERY_PROVIDER"] == "aws"
    assert "AZURE_SUBSCRIPTION_ID" not in _env(docs)
    pod = one(docs, "Deployment")["spec"]["template"]
    assert "azure.workload.identity/use" not in pod["metadata"]["labels"]
    assert "annotations" not in one(docs, "ServiceAccount")["metadata"]


def test_the_role_grants_aksnodeclasses_and_not_ec2nodeclasses(helm: Path) -> None:
    source = yaml.safe_load((REPO / "deploy" / "rbac" / "clusterrole.yaml").read_text())
    aws_rules = one(render(helm, "--set", "cluster.name=prod-east"), "ClusterRole")["rules"]
    azure_rules = one(render(helm, *AZURE), "ClusterRole")["rules"]
    assert aws_rules == source["rules"]
    assert azure_rules == [r for r in source["rules"] if "karpenter.k8s.aws" not in r["apiGroups"]]

    def verbs(rules: list[dict[str, Any]], group: str, resource: str) -> set[str]:
        return {
            v
            for r in rules
            if group in r["apiGroups"] and resource in r["resources"]
            for v in r["verbs"]
        }

    assert verbs(azure_rules, "karpenter.k8s.aws", "ec2nodeclasses") == set()
    assert {"get", "list", "watch"} <= verbs(azure_rules, "karpenter.azure.com", "aksnodeclasses")
    status = verbs(azure_rules, "karpenter.azure.com", "aksnodeclasses/status")
    assert {"get", "patch", "update"} <= status
    # everything else (NodeClaims, nodes, pods, eviction) is the same as on EC2
    assert {"create", "delete"} <= verbs(azure_rules, "karpenter.sh", "nodeclaims")


@pytest.mark.parametrize("missing", sorted(REQUIRED))
def test_each_required_azure_value_is_named_when_missing(helm: Path, missing: str) -> None:
    given = {k: v for k, v in REQUIRED.items() if k != missing}
    result = subprocess.run(
        [str(helm), "template", "joinery", str(CHART), "--set", "cluster.name=c",
         "--set", "provider=azure", *_sets(given)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode != 0
    assert f"{missing} is required with provider=azure" in result.stderr


def _refusal(helm: Path, *args: str) -> str:
    result = subprocess.run(
        [str(helm), "template", "joinery", str(CHART), "--set", "cluster.name=c", *args],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode != 0, "rendered"
    return result.stderr


@pytest.mark.parametrize(
    ("given", "named"),
    [
        ("serviceAccount.roleArn=arn:aws:iam::1:role/x", "serviceAccount.roleArn is an EKS"),
        ("aws.region=us-east-1", "aws.region is an AWS setting"),
        ("settings.interruptionQueue=q", "settings.interruptionQueue (aws.interruptionQueue)"),
        ("aws.interruptionQueue=q", "settings.interruptionQueue (aws.interruptionQueue)"),
    ],
)
def test_aws_values_are_refused_on_azure(helm: Path, given: str, named: str) -> None:
    assert named in _refusal(helm, *AZURE[2:], "--set", given)


@pytest.mark.parametrize("given", [*REQUIRED, "azure.bootstrapTokenSecret.name"])
def test_azure_values_without_provider_azure_are_refused(helm: Path, given: str) -> None:
    stderr = _refusal(helm, "--set", f"{given}=x")
    assert f"{given} is set but provider is aws: add --set provider=azure" in stderr


def test_an_unknown_provider_is_refused(helm: Path) -> None:
    result = subprocess.run(
        [str(helm), "template", "joinery", str(CHART), "--set", "cluster.name=c",
         "--set", "provider=gcp"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode != 0
    assert 'provider "gcp": one of aws, azure' in result.stderr


def test_lint_with_azure(helm: Path) -> None:
    result = subprocess.run(
        [str(helm), "lint", "--strict", str(CHART), *AZURE], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_worker_reads_the_provider_the_chart_sets(
    helm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """JOINERY_PROVIDER, the Kubernetes version and the service CIDR as rendered are the
    worker's defaults for ``--provider``, ``--kubernetes-version`` and ``--service-cidr``."""
    versions = (
        "--set",
        "cluster.kubernetesVersion=1.33",
        "--set",
        "cluster.serviceCIDR=10.0.0.0/16",
    )
    env = _env(render(helm, *AZURE, *versions))
    for name in ("JOINERY_PROVIDER", "JOINERY_KUBERNETES_VERSION", "JOINERY_SERVICE_CIDR"):
        monkeypatch.setenv(name, env[name])
    args = build_parser(["worker"]).parse_args(["worker"])
    assert (args.provider, args.kubernetes_version, args.service_cidr) == (
        "azure",
        "1.33",
        "10.0.0.0/16",
    )


def test_server_side_dry_run_on_azure(helm: Path, cluster: Cluster) -> None:
    namespace = f"joinery-{uuid.uuid4().hex[:6]}"
    docs = render(
        helm,
        *AZURE,
        "--include-crds",
        "--set", "azure.bootstrapTokenSecret.name=joinery-bootstrap",
        "--set", "metrics.serviceMonitor.enabled=false",
        namespace=namespace,
    )  # fmt: skip
    crds = {d["metadata"]["name"] for d in by_kind(docs, "CustomResourceDefinition")}
    assert "aksnodeclasses.karpenter.azure.com" in crds
    applied = dry_run_install(cluster, docs, namespace)
    assert len(applied) == len(docs) and "Deployment/joinery" in applied


# The environment Karpenter Azure's controller reads (its karpenter-values-template.yaml and
# pkg/operator/options), which a migrating values file's controller.env carries.
KARPENTER_AZURE_ENV = {
    "AZURE_SUBSCRIPTION_ID", "LOCATION", "ARM_RESOURCE_GROUP", "AZURE_NODE_RESOURCE_GROUP",
    "VNET_SUBNET_ID", "NETWORK_PLUGIN", "NETWORK_PLUGIN_MODE", "NETWORK_POLICY",
    "NETWORK_DATAPLANE", "NODE_IDENTITIES", "KUBELET_IDENTITY_CLIENT_ID", "SSH_PUBLIC_KEY",
    "KUBELET_BOOTSTRAP_TOKEN",
}  # fmt: skip


def test_every_azure_value_renders_under_karpenter_azures_name(helm: Path) -> None:
    """Each ``azure.*`` value of values.yaml that is not the identity becomes exactly one
    variable, and together they are the names Karpenter Azure's controller reads."""
    values = yaml.safe_load((CHART / "values.yaml").read_text())["azure"]
    given = {
        f"azure.{key}": f"value-of-{key}"
        for key, default in values.items()
        if isinstance(default, str) and key not in ("clientId", "tenantId")
    }
    given["azure.bootstrapTokenSecret.name"] = "joinery-bootstrap"
    env = _env(render(helm, *AZURE, *_sets(given)))
    azure_names = set(env) - set(_env(render(helm, "--set", "cluster.name=prod-east")))
    assert azure_names == KARPENTER_AZURE_ENV
    shown = {v for v in env.values() if isinstance(v, str) and v.startswith("value-of-")}
    assert shown == set(given.values()) - {"joinery-bootstrap"}
