"""The ``deps`` fixture: the activities' dependencies on the real control plane and the
emulated cloud, with the default EC2NodeClass and a NodePool for the test's claims.

The pool is the ``deps_pool`` fixture's value ("acts"); a test module whose claims belong to
another pool overrides ``deps_pool``.
"""

from __future__ import annotations

import pytest

from activities.deps import Deps
from activities.kubernetes.client import Kube
from tests.support.cloud import Cloud
from tests.support.kube_objects import ensure_nodeclass, ensure_nodepool


@pytest.fixture
def deps_pool() -> str:
    """The NodePool ``deps`` makes sure of."""
    return "acts"


@pytest.fixture
def deps(kube: Kube, admin: Kube, cloud: Cloud, deps_pool: str) -> Deps:
    ensure_nodeclass(admin)
    ensure_nodepool(admin, deps_pool)
    return Deps(kube=kube, cloud=cloud.provider)
