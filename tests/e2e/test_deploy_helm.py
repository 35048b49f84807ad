"""The Helm chart renders what production needs and the real API server accepts all of it.

``helm`` is built from its Go module (deploy/tools); rendered manifests are applied with a
server-side dry run (admin) against the sandbox control plane, which runs every admission
and schema check, including the CRDs' own.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client as k8s
from kubernetes.dynamic import DynamicClient

from models import contract
from sandbox.cluster import Cluster
from worker.cli import worker_command
from worker.cli.command import build_parser
from worker.running import karpenter_settings as K

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
    assert env["INTERRUPTION_QUEUE"] == "prod-east-interruptions"
    assert {"name": "temporal-tls", "secret": {"secretName": "temporal-mtls"}} in pod["volumes"]


def test_cluster_name_is_required(helm: Path) -> None:
    result = subprocess.run(
        [str(helm), "template", "joinery", str(CHART)], capture_output=True, text=True, check=False
    )
    assert result.returncode != 0
    assert "cluster.name is required" in result.stderr


def dry_run_install(cluster: Cluster, docs: list[dict[str, Any]], namespace: str) -> list[str]:
    """Apply every rendered object with a server-side dry run (admin): every admission and
    schema check runs, nothing is persisted. Returns ``Kind/name`` of each."""
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
        # A dry run persists nothing.
        assert not k8s.AppsV1Api(api).list_namespaced_deployment(namespace).items
        return applied
    finally:
        k8s.CoreV1Api(api).delete_namespace(namespace)
        api.close()


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
    applied = dry_run_install(cluster, docs, namespace)
    assert len(applied) == len(docs) >= 9


# Karpenter's documented install line, with our chart's name and path.
KARPENTER_INSTALL = (
    "--set", "settings.clusterName=myCluster",
    "--set", "settings.interruptionQueue=myCluster",
    "--set", "controller.resources.requests.cpu=1",
    "--set", "controller.resources.requests.memory=1Gi",
    "--set", "controller.resources.limits.cpu=1",
    "--set", "controller.resources.limits.memory=1Gi",
)  # fmt: skip


def worker_env(docs: list[dict[str, Any]]) -> dict[str, str]:
    (container,) = one(docs, "Deployment")["spec"]["template"]["spec"]["containers"]
    return {e["name"]: e["value"] for e in container["env"] if "value" in e}


def test_karpenters_install_line_renders_and_installs(helm: Path, cluster: Cluster) -> None:
    namespace = f"joinery-{uuid.uuid4().hex[:6]}"
    docs = render(helm, *KARPENTER_INSTALL, "--include-crds", namespace=namespace)
    env = worker_env(docs)
    assert env["JOINERY_CLUSTER"] == "myCluster"
    assert env["INTERRUPTION_QUEUE"] == "myCluster"
    assert env["JOINERY_TASK_QUEUE"] == contract.task_queue("myCluster")
    (container,) = one(docs, "Deployment")["spec"]["template"]["spec"]["containers"]
    assert container["resources"] == {
        "requests": {"cpu": 1, "memory": "1Gi"},
        "limits": {"cpu": 1, "memory": "1Gi"},
    }
    applied = dry_run_install(cluster, docs, namespace)
    assert "Deployment/joinery" in applied and len(applied) == len(docs)


def test_the_task_queue_defaults_to_the_clusters_own(helm: Path) -> None:
    east = worker_env(render(helm, "--set", "cluster.name=east"))
    west = worker_env(render(helm, "--set", "settings.clusterName=west"))
    assert east["JOINERY_TASK_QUEUE"] == contract.task_queue("east")
    assert west["JOINERY_TASK_QUEUE"] == contract.task_queue("west")
    given = worker_env(render(helm, *BASE, "--set", "temporal.taskQueue=shared"))
    assert given["JOINERY_TASK_QUEUE"] == "shared"


def test_karpenters_settings_reach_the_worker_under_their_names(
    helm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every ``settings.*`` value becomes the environment Karpenter's chart would give, and the
    worker's own settings parser, given that environment, reads each one."""
    docs = render(
        helm,
        "--set", "cluster.name=ignored-when-settings-name-given",
        "--set", "settings.clusterName=prod-east",
        "--set", "settings.clusterEndpoint=https://ABC.gr7.us-east-1.eks.amazonaws.com",
        "--set", "settings.clusterCABundle=Q0E=",
        "--set", "settings.interruptionQueue=prod-east",
        "--set", "settings.isolatedVPC=true",
        "--set", "settings.eksControlPlane=true",
        "--set", "settings.vmMemoryOverheadPercent=0.1",
        "--set", "settings.reservedENIs=1",
        "--set", "settings.batchIdleDuration=2s",
        "--set", "settings.batchMaxDuration=30s",
        "--set", "settings.amiRefreshInterval=5m",
        "--set", "settings.subnetRefreshInterval=2m",
        "--set", "settings.featureGates.spotToSpotConsolidation=true",
        "--set", "settings.disableDryRun=true",
        "--set", "logLevel=debug",
    )  # fmt: skip
    env = worker_env(docs)
    assert env["FEATURE_GATES"] == "SpotToSpotConsolidation=true"
    assert env["DISABLE_DRY_RUN"] == "true"
    for name in list(os.environ):
        if name.startswith(("JOINERY_", "TEMPORAL_")) or name in K.BY_ENV:
            monkeypatch.delenv(name)
    for name, value in env.items():
        if name != "FEATURE_GATES":  # parsed with the scheduling policies, not here
            monkeypatch.setenv(name, value)
    args = build_parser(["worker"]).parse_args(["worker"])
    s = worker_command.settings_from(args)
    assert s.cluster == "prod-east" and s.temporal.task_queue == "joinery@prod-east"
    assert s.cluster_endpoint == "https://ABC.gr7.us-east-1.eks.amazonaws.com"
    assert s.cluster_ca_bundle == "Q0E=" and s.interruption_queue == "prod-east"
    assert s.isolated_vpc is True and s.eks_control_plane is True
    assert (s.vm_memory_overhead_percent, s.reserved_enis) == (0.1, 1)
    assert (s.batch_idle_seconds, s.batch_max_seconds) == (2.0, 30.0)
    assert s.nodeclass_refresh_seconds == 120.0
    assert s.log_level == "debug"


# Karpenter v1.14's chart defaults for its settings (read from its values.yaml), as a
# migrating values file carries them.
KARPENTER_DEFAULTS = {
    "settings": {
        "batchMaxDuration": "10s", "batchIdleDuration": "1s", "preferencePolicy": "Respect",
        "minValuesPolicy": "Strict", "clusterCABundle": "", "clusterName": "prod-east",
        "clusterEndpoint": "", "isolatedVPC": False, "eksControlPlane": False,
        "vmMemoryOverheadPercent": 0.075, "interruptionQueue": "", "enableZonalShift": False,
        "reservedENIs": "0", "ignoreDRARequests": True,
        "disableClusterStateObservability": False, "disableDryRun": False,
        "amiRefreshInterval": "1m", "subnetRefreshInterval": "1m",
        "awsFeatureGates": {"nodeClassCEL": False},
    },
    "logLevel": "info",
}  # fmt: skip


def test_a_karpenter_values_file_with_every_default_starts_the_worker(
    helm: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Karpenter's defaults for the settings Joinery refuses (zonal shift off, dry run on,
    ...) are not passed, as Karpenter's chart does not pass a false value; the rest are
    Joinery's defaults too: the worker's parser takes the rendered environment as it is."""
    values = tmp_path / "karpenter-values.yaml"
    values.write_text(yaml.safe_dump(KARPENTER_DEFAULTS))
    env = worker_env(render(helm, "-f", str(values)))
    assert "ENABLE_ZONAL_SHIFT" not in env and "DISABLE_DRY_RUN" not in env
    assert env["IGNORE_DRA_REQUESTS"] == "true"
    assert env["AWS_FEATURE_GATES"] == "NodeClassCEL=false"
    assert env["MIN_VALUES_POLICY"] == "Strict" and env["PREFERENCE_POLICY"] == "Respect"
    for name in list(os.environ):
        if name.startswith(("JOINERY_", "TEMPORAL_")) or name in K.BY_ENV:
            monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    args = build_parser(["worker"]).parse_args(["worker"])
    s = worker_command.settings_from(args)  # no refusal, no bad value
    assert (s.reserved_enis, s.vm_memory_overhead_percent) == (0, 0.075)
    assert (s.batch_idle_seconds, s.batch_max_seconds) == (1.0, 10.0)
    assert s.eks_control_plane is None and s.isolated_vpc is False


def test_a_refused_chart_setting_is_refused_by_the_worker(helm: Path) -> None:
    refused = worker_env(render(helm, *BASE, "--set", "settings.enableZonalShift=true"))
    assert K.refusals(refused) == [
        "setting ENABLE_ZONAL_SHIFT='true' is not supported by Joinery: "
        + K.BY_ENV["ENABLE_ZONAL_SHIFT"].what
    ]
