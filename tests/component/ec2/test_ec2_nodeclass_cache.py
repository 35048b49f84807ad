"""The worker's cache of EC2NodeClass resolutions (activities/ec2/nodeclass_cache.py), against
moto: a burst of launches resolves once, and every way an answer can go stale resolves again."""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from activities.ec2.errors import LaunchTemplateNotFound, NodeClassNotReady
from activities.ec2.nodeclass_cache import DEFAULT_TTL_SECONDS
from models.ec2nodeclass import EC2NodeClass

RESOLUTION_CALLS = ("DescribeSubnets", "DescribeSecurityGroups", "DescribeImages")


def count_calls(env: Any) -> Counter[str]:
    """EC2 and SSM operations the provider sends from now on, by name."""
    seen: Counter[str] = Counter()

    def note(event_name: str, **_: Any) -> None:
        seen[event_name.rsplit(".", 1)[-1]] += 1

    for client in (env.clients.ec2, env.clients.ssm):
        client.meta.events.register("before-send", note)
    return seen


def resolutions(seen: Counter[str]) -> int:
    counts = {seen[op] for op in RESOLUTION_CALLS}
    assert len(counts) == 1, seen  # a resolution is all of them at once
    return counts.pop()


def with_meta(nc: EC2NodeClass, **meta: Any) -> EC2NodeClass:
    body = nc.model_dump(by_alias=True, exclude_none=True)
    body["metadata"].update(meta)
    return EC2NodeClass.model_validate(body)


def test_a_burst_of_launches_resolves_the_nodeclass_once(
    env: Any, make_nodeclass: Any, make_request: Any
) -> None:
    nc = with_meta(make_nodeclass.build(), uid="uid-nc", generation=1)
    seen = count_calls(env)
    with ThreadPoolExecutor(8) as pool:
        results = list(
            pool.map(lambda i: env.provider.launch(make_request.build(f"c{i}"), nc), range(16))
        )
    assert len({r.instance_id for r in results}) == 16
    assert resolutions(seen) == 1  # 16 concurrent misses waited for one answer
    assert seen["GetParameters"] == 1
    assert 1 <= seen["CreateFleet"] <= 8  # launched together: batched (activities/ec2/batcher.py)


def test_an_edited_or_recreated_nodeclass_is_resolved_again(
    env: Any, make_nodeclass: Any, make_request: Any
) -> None:
    nc = with_meta(make_nodeclass.build(), uid="uid-nc", generation=1)
    env.provider.launch(make_request.build("a"), nc)
    seen = count_calls(env)
    env.provider.launch(make_request.build("b"), nc)
    assert resolutions(seen) == 0

    # a new generation: the security groups now come from one named id
    group = env.seeded.network.security_group_ids[0]
    edited = with_meta(
        make_nodeclass.build(securityGroupSelectorTerms=[{"id": group}]),
        uid="uid-nc",
        generation=2,
    )
    env.provider.launch(make_request.build("c"), edited)
    assert resolutions(seen) == 1
    # the same NodeClass deleted and created again under its name (new uid)
    env.provider.launch(make_request.build("d"), with_meta(edited, uid="uid-nc-2"))
    assert resolutions(seen) == 2
    # a spec change the generation does not show (a client that never bumps it)
    env.provider.launch(
        make_request.build("e"),
        with_meta(
            make_nodeclass.build(amiSelectorTerms=[{"alias": "al2023@latest"}], tags={"x": "y"}),
            uid="uid-nc-2",
            generation=2,
        ),
    )
    assert resolutions(seen) == 3


def test_an_answer_is_kept_for_its_ttl_only(
    env: Any, make_nodeclass: Any, make_request: Any
) -> None:
    nc = with_meta(make_nodeclass.build(), uid="uid-nc", generation=1)
    env.provider.launch(make_request.build("a"), nc)
    seen = count_calls(env)
    env.clock.advance(DEFAULT_TTL_SECONDS - 1)
    env.provider.launch(make_request.build("b"), nc)
    assert resolutions(seen) == 0
    env.clock.advance(1)
    env.provider.launch(make_request.build("c"), nc)
    assert resolutions(seen) == 1


def test_a_nodeclass_that_is_not_ready_is_resolved_on_every_try(
    env: Any, make_nodeclass: Any, make_request: Any
) -> None:
    missing = make_nodeclass.build(subnetSelectorTerms=[{"tags": {"no": "such-subnet"}}])
    seen = count_calls(env)
    for name in ("a", "b"):
        with pytest.raises(NodeClassNotReady):
            env.provider.launch(make_request.build(name), missing)
    assert resolutions(seen) == 2


def test_the_status_controller_refreshes_the_answer_launches_use(
    env: Any, make_nodeclass: Any, make_request: Any
) -> None:
    nc = with_meta(make_nodeclass.build(), uid="uid-nc", generation=1)
    env.provider.resolve_nodeclass(nc)  # what activities/status/nodeclasses.py calls
    seen = count_calls(env)
    env.provider.launch(make_request.build("a"), nc)
    assert resolutions(seen) == 0
    assert env.provider.resolve_nodeclass(nc).ready
    assert resolutions(seen) == 1  # the controller itself always asks AWS


def test_a_refused_fleet_request_drops_the_answer(
    env: Any, make_nodeclass: Any, make_request: Any
) -> None:
    nc = with_meta(make_nodeclass.build(), uid="uid-nc", generation=1)
    first = env.provider.launch(make_request.build("a"), nc)
    # the launch template disappears behind the provider's back: CreateFleet refuses
    for template in env.clients.ec2.describe_launch_templates()["LaunchTemplates"]:
        env.clients.ec2.delete_launch_template(LaunchTemplateId=template["LaunchTemplateId"])
    seen = count_calls(env)
    with pytest.raises(LaunchTemplateNotFound):
        env.provider.launch(make_request.build("b"), nc)
    assert resolutions(seen) == 0
    second = env.provider.launch(make_request.build("b"), nc)  # the retry asks AWS again
    assert resolutions(seen) == 1
    assert second.instance_id != first.instance_id
