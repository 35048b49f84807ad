"""The ``cluster``, ``kube`` and ``admin`` fixtures: one real control plane per session.

A tier's conftest imports these names to use them; each importing conftest gets its own
session cluster (its tests' NodePools and Nodes stay out of the other tiers' way). ``kube``
talks to the API as Joinery does, with the service-account token bound to ``deploy/rbac``;
``admin`` (system:masters) only sets the stage: namespaces, PDBs, NodePools, Nodes.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from activities.kubernetes.client import Kube, from_kubeconfig
from sandbox.cluster import Cluster


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with Cluster.start(tmp_path_factory.mktemp("k8s")) as running:
        yield running


@pytest.fixture(scope="session")
def kube(cluster: Cluster) -> Iterator[Kube]:
    """The adapter's client, authenticated as Joinery's service account (not admin)."""
    client = from_kubeconfig(cluster.kubeconfig_path)
    yield client
    client.close()


@pytest.fixture(scope="session")
def admin(cluster: Cluster) -> Iterator[Kube]:
    """Cluster-admin, for setting the stage only."""
    client = from_kubeconfig(cluster.admin_kubeconfig_path)
    yield client
    client.close()
