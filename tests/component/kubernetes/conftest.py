"""One real control plane per test session; a fresh namespace per test.

Tests talk to the API as Joinery does, with the service-account token bound to
``deploy/rbac`` (the ``kube`` fixture); the ``admin`` fixture (system:masters) only sets
the stage: namespaces, PDBs, Deployments, NodePools, Nodes.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client as k8s

from activities.kubernetes.client import Kube, from_kubeconfig
from sandbox.cluster import Cluster


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    workdir: Path = tmp_path_factory.mktemp("k8s")
    with Cluster.start(workdir) as running:
        yield running


@pytest.fixture(scope="session")
def kube(cluster: Cluster) -> Iterator[Kube]:
    """The adapter's client, authenticated as Joinery's service account (not admin)."""
    client = from_kubeconfig(cluster.kubeconfig_path)
    yield client
    client.close()


@pytest.fixture(scope="session")
def admin(cluster: Cluster) -> Iterator[Kube]:
    """Cluster-admin, for fixture setup only."""
    client = from_kubeconfig(cluster.admin_kubeconfig_path)
    yield client
    client.close()


@pytest.fixture
def namespace(admin: Kube) -> Iterator[str]:
    """A new namespace, ready for pods (its default ServiceAccount exists)."""
    name = f"t-{uuid.uuid4().hex[:10]}"
    admin.core.create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=name)))
    deadline = time.monotonic() + 30
    while True:
        try:
            admin.core.read_namespaced_service_account("default", name)
            break
        except k8s.ApiException as exc:
            if exc.status != 404 or time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    yield name
    admin.core.delete_namespace(name, propagation_policy="Background")


@pytest.fixture
def unique() -> str:
    """A short random suffix for cluster-scoped names (NodePools, NodeClaims, Nodes)."""
    return uuid.uuid4().hex[:8]
