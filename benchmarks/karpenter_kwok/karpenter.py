"""Karpenter's kwok provider, out of cluster, against a fresh sandbox control plane.

``KarpenterSide.start`` boots ``sandbox.cluster.Cluster`` (whose kwok marks Nodes annotated
``kwok.x-k8s.io/node: fake`` Ready and their pods Running; the provider creates its Nodes so),
replaces Joinery's copies of the ``karpenter.sh`` CRDs with Karpenter's own and adds the
KWOKNodeClass CRD (both read from the Go module cache, never committed), creates a
KWOKNodeClass, then runs the binary ``build.sh`` made with the instance-types file written
from Joinery's catalog (``instance_types.py``). The NodePool is the caller's
(``nodepool``): the same requirements on both sides of a comparison.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException

from sandbox.cluster import Cluster
from sandbox.processes import ChildProcess, free_ports, wait_for

HERE = Path(__file__).resolve().parent
BUILD = HERE / "build.sh"
NODECLASS_GROUP = "karpenter.kwok.sh"
NODECLASS_KIND = "KWOKNodeClass"
NODECLASS_NAME = "default"
# Karpenter's own CRDs in its module: the chart's copies and the KWOKNodeClass
CRD_DIRS = ("kwok/charts/crds", "kwok/apis/crds")


def _go() -> str:
    for candidate in (os.environ.get("GO"), "/usr/local/go/bin/go"):
        if candidate and Path(candidate).exists():
            return candidate
    return "go"


def build() -> Path:
    """The kwok provider's binary (built on first use; cached under ~/.cache/joinery)."""
    out = subprocess.run(["bash", str(BUILD)], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{BUILD} failed: {out.stderr.strip()[-800:]}")
    return Path(out.stdout.strip().splitlines()[-1])


def module_dir() -> Path:
    """Where the pinned karpenter module sits in the Go module cache (downloaded if absent)."""
    out = subprocess.run(
        [_go(), "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/karpenter"],
        cwd=HERE,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "GOFLAGS": "-mod=mod"},
    )
    path = Path(out.stdout.strip())
    if out.returncode != 0 or not (path / "kwok").is_dir():
        raise RuntimeError(f"karpenter module not found: {out.stderr.strip()[-400:]}")
    return path


def karpenter_crds(module: Path) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for sub in CRD_DIRS:
        for path in sorted((module / sub).glob("*.yaml")):
            docs.extend(d for d in yaml.safe_load_all(path.read_text()) if d)
    return docs


def apply_crds(api: k8s.ApiClient, docs: list[dict[str, Any]], timeout: float = 60.0) -> None:
    """Create each CRD, or replace the one of that name (Joinery's copy); wait Established."""
    ext = k8s.ApiextensionsV1Api(api)
    for doc in docs:
        name = doc["metadata"]["name"]
        try:
            current = ext.read_custom_resource_definition(name)
        except ApiException as exc:
            if exc.status != 404:
                raise
            ext.create_custom_resource_definition(doc)
            continue
        doc["metadata"]["resourceVersion"] = current.metadata.resource_version
        ext.replace_custom_resource_definition(name, doc)

    def established() -> bool:
        for doc in docs:
            crd = ext.read_custom_resource_definition(doc["metadata"]["name"])
            conds = (crd.status.conditions if crd.status else None) or []
            if not any(c.type == "Established" and c.status == "True" for c in conds):
                return False
        return True

    wait_for("Karpenter's CRDs established", established, timeout=timeout)


@dataclass(eq=False)
class KarpenterSide:
    """A control plane with Karpenter running against it; ``stop()`` ends both."""

    cluster: Cluster
    process: ChildProcess | None = None
    workdir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="karpenter-")))

    @classmethod
    def start(cls, binary: Path, instance_types_file: Path, log: Any) -> KarpenterSide:
        cluster = Cluster.start(log=log)
        side = cls(cluster)
        try:
            api = cluster.admin_client()
            apply_crds(api, karpenter_crds(module_dir()))
            k8s.CustomObjectsApi(api).create_cluster_custom_object(
                NODECLASS_GROUP,
                "v1alpha1",
                "kwoknodeclasses",
                {
                    "apiVersion": f"{NODECLASS_GROUP}/v1alpha1",
                    "kind": NODECLASS_KIND,
                    "metadata": {"name": NODECLASS_NAME},
                },
            )
            side._run(binary, instance_types_file)
        except BaseException:
            side.stop()
            raise
        return side

    def _run(self, binary: Path, instance_types_file: Path) -> None:
        metrics_port, health_port = free_ports(2)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": os.environ.get("HOME", "/root"),
            "KUBECONFIG": str(self.cluster.admin_kubeconfig_path),
            "SYSTEM_NAMESPACE": "kube-system",
            "DISABLE_LEADER_ELECTION": "true",
            "METRICS_PORT": str(metrics_port),
            "HEALTH_PROBE_PORT": str(health_port),
            "INSTANCE_TYPES_FILE_PATH": str(instance_types_file),
            "LOG_LEVEL": "info",
        }
        self.process = ChildProcess.spawn(
            "karpenter", [str(binary)], self.workdir / "karpenter.log", env=env
        )
        url = f"http://127.0.0.1:{health_port}/readyz"

        def ready() -> bool:
            try:
                with urllib.request.urlopen(url, timeout=2) as response:
                    return bool(response.status == 200)
            except (urllib.error.URLError, OSError):
                return False

        wait_for("Karpenter's /readyz", ready, timeout=120, watch=(self.process,), interval=0.5)
        time.sleep(1.0)  # its controllers' caches sync just after readiness

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()
            self.process = None
        self.cluster.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)
