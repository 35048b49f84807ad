"""The Helm chart renders what production needs and the real API server accepts all of it.

``helm`` is built from its Go module (deploy/tools); rendered manifests are applied with a
server-side dry run (admin) against the sandbox control plane, which runs every admission
and schema check, including the CRDs' own.
"""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client as k8s
from kubernetes.dynamic import DynamicClient

from sandbox.cluster import Cluster

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "deploy" / "helm" / "joinery"
ROLE_ARN = "arn:aws:iam::111122223333:role/JoineryController"

pytestmark = pytest.mark.timeout(240)


def render(helm: Path, *args: str, namespace: str = "joinery") -> list[dict[str, Any]]:
    result = subprocess.run(
        [str(helm), "template", "joinery", str(CHART), "--namespace", namespace, *args],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return [d for d in yaml.safe_load_all(result.stdout) if d]


def by_kind(docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] == kind]


def one(docs: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = by_kind(docs, kind)
    assert len(found) == 1, f"expected one {kind}, found {len(found)}"
    return found[0]


BASE = ("--set", "cluster.name=prod-east", "--set", f"serviceAccount.roleArn={ROLE_ARN}")


def test_lint(helm: Path) -> None:
    result = subprocess.run(
        [str(helm), "lint", "--strict", str(CHART), "--set", "cluster.name=prod-east"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_role_reads_each_providers_node_classes(helm: Path) -> None:
    """The worker reads its node classes and reports their status, on EC2 and on Azure; the
    rules name each class by its CRD's group and plural."""
    docs = render(helm, *BASE, "--include-crds")
    role = one(docs, "ClusterRole")

    def verbs(group: str, resource: str) -> set[str]:
        return {
            v
            for r in role["rules"]
            if group in r["apiGroups"] and resource in r["resources"]
            for v in r["verbs"]
        }

    for crd in by_kind(docs, "CustomResourceDefinition"):
        group, plural = crd["spec"]["group"], crd["spec"]["names"]["plural"]
        if not plural.endswith("nodeclasses"):
            continue
        assert {"get", "list", "watch"} <= verbs(group, plural), plural
        assert {"get", "patch", "update"} <= verbs(group, f"{plural}/status"), plural
    assert verbs("karpenter.azure.com", "aksnodeclasses")


def test_renders_every_part(helm: Path) -> None:
    docs = render(helm, *BASE, "--include-crds")
    crds = {d["metadata"]["name"] for d in by_kind(docs, "CustomResourceDefinition")}
    assert crds == {
        "nodepools.karpenter.sh",
        "nodeclaims.karpenter.sh",
        "ec2nodeclasses.karpenter.k8s.aws",
        "aksnodeclasses.karpenter.azure.com",
    }
    # The chart's CRDs are deploy/crds, byte for byte in content.
    for path in sorted((REPO / "deploy" / "crds").glob("*.yaml")):
        source = yaml.safe_load(path.read_text())
        rendered = next(d for d in docs if d["metadata"]["name"] == source["metadata"]["name"])
        assert rendered == source

    sa = one(docs, "ServiceAccount")
    assert sa["metadata"]["annotations"]["eks.amazonaws.com/role-arn"] == ROLE_ARN
    assert sa["metadata"]["namespace"] == "joinery"

    role = one(docs, "ClusterRole")
    source_role = yaml.safe_load((REPO / "deploy" / "rbac" / "clusterrole.yaml").read_text())
    assert role["rules"] == source_role["rules"]
    binding = one(docs, "ClusterRoleBinding")
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": sa["metadata"]["name"], "namespace": "joinery"}
    ]

    deployment = one(docs, "Deployment")
    assert deployment["spec"]["replicas"] == 2
    pod = deployment["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == sa["metadata"]["name"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    (container,) = pod["containers"]
    assert container["args"][0] == "worker"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["JOINERY_CLUSTER"] == "prod-east"
    assert env["JOINERY_SEARCH_ATTRIBUTES"] == "true"
    assert env["TEMPORAL_NAMESPACE"] == "default"
    assert "TEMPORAL_TLS" not in env
    # Never scheduled onto the nodes it manages.
    terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert {"key": "karpenter.sh/nodepool", "operator": "DoesNotExist"} in terms[
        "nodeSelectorTerms"
    ][0]["matchExpressions"]

    pdb = one(docs, "PodDisruptionBudget")
    assert pdb["spec"]["selector"]["matchLabels"] == deployment["spec"]["selector"]["matchLabels"]
    service = one(docs, "Service")
    assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]
    assert service["spec"]["ports"][0]["targetPort"] == "http"
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"http": 8081}
    assert env["JOINERY_HEALTH_PORT"] == "8081"


def test_values_for_temporal_tls_and_interruption(helm: Path) -> None:
    docs = render(
        helm,
        *BASE,
        "--set", "temporal.address=ns.acct.tmprl.cloud:7233",
        "--set", "temporal.namespace=ns.acct",
        "--set", "temporal.tls.enabled=true",
        "--set", "temporal.tls.secretName=temporal-mtls",
        "--set", "aws.interruptionQueue=prod-east-interruptions",
        "--set", "replicas=3",
    )  # fmt: skip
    deployment = one(docs, "Deployment")
    assert deployment["spec"]["replicas"] == 3
    pod = deployment["spec"]["template"]["spec"]
    env = {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}
    assert env["TEMPORAL_ADDRESS"] == "ns.acct.tmprl.cloud:7233"
    assert env["TEMPORAL_NAMESPACE"] == "ns.acct"
    assert env["TEMPORAL_TLS"] == "true"
    assert env["TEMPORAL_TLS_CERT"] == "/etc/joinery/temporal-tls/tls.crt"
    assert env["TEMPORAL_TLS_KEY"] == "/etc/joinery/temporal-tls/tls.key"
    assert "TEMPORAL_TLS_CA" not in env  # temporal.tls.hasCA is false
    assert env["JOINERY_INTERRUPTION_QUEUE"] == "prod-east-interruptions"
    assert {"name": "temporal-tls", "secret": {"secretName": "temporal-mtls"}} in pod["volumes"]


def test_cluster_name_is_required(helm: Path) -> None:
    result = subprocess.run(
        [str(helm), "template", "joinery", str(CHART)], capture_output=True, text=True, check=False
    )
    assert result.returncode != 0
    assert "cluster.name is required" in result.stderr


def test_server_side_dry_run_against_the_control_plane(helm: Path, cluster: Cluster) -> None:
    namespace = f"joinery-{uuid.uuid4().hex[:6]}"
    docs = render(
        helm,
        *BASE,
        "--include-crds",
        "--set", "temporal.tls.enabled=true",
        "--set", "temporal.tls.secretName=temporal-mtls",
        "--set", "metrics.serviceMonitor.enabled=false",
        namespace=namespace,
    )  # fmt: skip
    api = cluster.admin_client()
    try:
        k8s.CoreV1Api(api).create_namespace({"metadata": {"name": namespace}})
        dynamic = DynamicClient(api)
        applied = []
        for doc in docs:
            resource = dynamic.resources.get(api_version=doc["apiVersion"], kind=doc["kind"])
            result = resource.server_side_apply(
                body=doc,
                name=doc["metadata"]["name"],
                namespace=doc["metadata"].get("namespace"),
                field_manager="joinery-helm-test",
                force_conflicts=True,
                dry_run="All",
            )
            applied.append(f"{result.kind}/{result.metadata.name}")
        assert len(applied) == len(docs) >= 9
        # A dry run persists nothing.
        assert not k8s.AppsV1Api(api).list_namespaced_deployment(namespace).items
    finally:
        k8s.CoreV1Api(api).delete_namespace(namespace)
        api.close()
