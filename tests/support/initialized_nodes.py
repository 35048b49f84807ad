"""Nodes of a NodePool made by the lifecycle activities themselves (claim → launch in emulated
EC2 → simulated kubelet → registered → initialized), for tests that need real-looking
managed nodes without running the NodeClaim workflow."""

from __future__ import annotations

import uuid
from typing import Any

from activities.deps import Deps
from activities.kubernetes import nodeclaims
from activities.kubernetes.client import Kube
from activities.lifecycle import claims, initialization, launch, registration
from activities.lifecycle.types import InitializeInput, LaunchOutcome, RegisterInput
from sandbox.nodes import register as simulate_kubelet
from tests.support.kube_objects import create_claim
from tests.support.waiting import eventually


def launched_and_registered(
    deps: Deps, admin: Kube, pool: str, **spec: Any
) -> tuple[str, str, LaunchOutcome]:
    """A new claim of ``pool``, launched and registered: (claim name, node name, launch).
    Its Node carries Joinery's finalizer, as registration leaves it."""
    name = f"{pool}-{uuid.uuid4().hex[:6]}"
    create_claim(admin, name, pool, **spec)
    claim = claims.prepare(deps, name)
    assert claim is not None
    out = launch.launch(deps, claim)
    simulate_kubelet(admin, nodeclaims.get(admin, name))
    node = eventually(lambda: registration.register(deps, RegisterInput(claim, out.provider_id)))
    return name, str(node), out


def initialized_node(deps: Deps, admin: Kube, pool: str) -> tuple[str, str]:
    """A new NodeClaim of ``pool`` and its Node, initialized: (claim name, node name)."""
    name, node, _ = launched_and_registered(deps, admin, pool)
    claim = claims.prepare(deps, name)  # idempotent: the spec initialization checks against
    assert claim is not None
    eventually(lambda: initialization.initialize(deps, InitializeInput(claim, node)).initialized)
    return name, node
