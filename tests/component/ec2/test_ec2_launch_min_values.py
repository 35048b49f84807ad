"""minValues re-checked at launch, where the claim's types are narrowed to what is available
and to the cheapest 60: Strict fails the launch as insufficient capacity (Karpenter's
truncation error), BestEffort launches what is left."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from activities.ec2.errors import InsufficientCapacity
from activities.ec2.provider import EC2Provider
from models.policies import BEST_EFFORT
from tests.support.ec2_launches import instances, request

TWO_TYPES = [
    {
        "key": "node.kubernetes.io/instance-type",
        "operator": "In",
        "values": ["m5.large", "m5.xlarge"],
        "minValues": 2,
    }
]


def _ice_every_offering_of(env: Any, nc: Any, name: str) -> None:
    for t in env.provider.instance_types(nc):
        if t.name == name:
            for o in t.offerings:
                env.provider.unavailable.mark_unavailable(o.capacity_type, t.name, o.zone)


def test_strict_refuses_a_launch_left_below_min_values(env: Any, make_nodeclass: Any) -> None:
    nc = make_nodeclass.build()
    _ice_every_offering_of(env, nc, "m5.xlarge")
    with pytest.raises(InsufficientCapacity, match=r"minValues 2 for node\.kubernetes"):
        env.provider.launch(request(requirements=TWO_TYPES), nc)
    assert instances(env) == []


def test_strict_launches_while_min_values_still_hold(env: Any, make_nodeclass: Any) -> None:
    nc = make_nodeclass.build()
    result = env.provider.launch(request(requirements=TWO_TYPES), nc)
    assert result.instance_type == "m5.large"


def test_best_effort_launches_what_is_left(
    env: Any, make_nodeclass: Any, session_catalog: Any
) -> None:
    provider = EC2Provider.create(
        replace(env.settings, min_values_policy=BEST_EFFORT), env.clients, clock=env.clock
    )
    provider.catalog.use_raw(session_catalog.raw)
    provider.pricing.load(session_catalog.on_demand, session_catalog.spot, session_catalog.source)
    nc = make_nodeclass.build()
    for t in provider.instance_types(nc):
        if t.name == "m5.xlarge":
            for o in t.offerings:
                provider.unavailable.mark_unavailable(o.capacity_type, t.name, o.zone)
    result = provider.launch(request(requirements=TWO_TYPES), nc)
    assert result.instance_type == "m5.large"
