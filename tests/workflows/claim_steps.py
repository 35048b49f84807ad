"""A NodeClaim taken through its first lifecycle steps by calling the activities' logic
directly, against the real control plane and emulated EC2 (the activity tests' common start)."""

from __future__ import annotations

import uuid
from typing import Any

from k8s_objects import create_claim, eventually

from activities.kubernetes import nodeclaims
from activities.kubernetes.client import Kube
from activities.lifecycle import claims, launch, registration
from activities.lifecycle.common import Deps
from activities.lifecycle.types import LaunchOutcome, RegisterInput
from sandbox.nodes import register as simulate_kubelet


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
