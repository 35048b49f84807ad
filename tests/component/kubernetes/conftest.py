"""One real control plane per test session (``tests.support.control_plane``); a fresh
namespace per test.

Tests talk to the API as Joinery does, with the service-account token bound to
``deploy/rbac`` (the ``kube`` fixture); the ``admin`` fixture (system:masters) only sets
the stage: namespaces, PDBs, Deployments, NodePools, Nodes.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest
from kubernetes import client as k8s

from activities.kubernetes.client import Kube
from tests.support.control_plane import admin, cluster, kube

__all__ = ["admin", "cluster", "kube"]


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
