"""CreateTags throttled after a batched CreateFleet answered, against moto plus the emulation,
with the throttling injected at the botocore layer (sandbox.ec2.faults) so botocore's own
retry handler runs as in production.

The claim tags go on one CreateTags per instance, which shares EC2's mutating-call rate limit
with CreateFleet: a throttled CreateTags is retried with backoff by botocore; one throttled
past those retries fails the attempt retryably (never the claim), and the attempt's retry
finds the instance by its member tag, tags it and launches nothing more.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import pytest
from botocore.retries.standard import ExponentialBackoff

from activities.ec2.errors import Throttled
from activities.ec2.instances import TAG_NODECLAIM
from activities.ec2.launch_types import LaunchResult
from sandbox.ec2.faults import THROTTLE, FaultInjector

NAMES = ["claim-a", "claim-b", "claim-c"]
# botocore's standard mode as the project configures it (activities/ec2/clients.py): five
# retries, six attempts in all
ATTEMPTS = 6


@pytest.fixture
def backoffs(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[float]]:
    """botocore's backoff as in production, each wait recorded and shortened to 1/20."""
    waits: list[float] = []
    delay_amount = ExponentialBackoff.delay_amount

    def recorded(self: ExponentialBackoff, context: Any) -> float:
        wait = float(delay_amount(self, context))
        waits.append(wait)
        return wait / 20

    monkeypatch.setattr(ExponentialBackoff, "delay_amount", recorded)
    yield waits


def launch_together(env: Any, nc: Any, make_request: Any) -> list[LaunchResult | Exception]:
    def one(name: str) -> LaunchResult | Exception:
        try:
            return env.provider.launch(make_request.build(name), nc)
        except Exception as exc:  # the answer under test
            return exc

    with ThreadPoolExecutor(len(NAMES)) as pool:
        return list(pool.map(one, NAMES))


def live(env: Any) -> dict[str, dict[str, str]]:
    """Instance id -> tags, of every instance not terminated (read without faults)."""
    out: dict[str, dict[str, str]] = {}
    for r in env.clients.ec2.describe_instances()["Reservations"]:
        for i in r["Instances"]:
            if i["State"]["Name"] != "terminated":
                out[i["InstanceId"]] = {t["Key"]: t["Value"] for t in i.get("Tags", [])}
    return out


def test_a_throttled_create_tags_is_retried_with_backoff(
    env: Any, make_nodeclass: Any, make_request: Any, backoffs: list[float]
) -> None:
    injector = FaultInjector().attach(env.clients.ec2)
    injector.inject("CreateTags", *[THROTTLE] * (ATTEMPTS - 1))  # each call absorbs them all
    results = launch_together(env, make_nodeclass.build(), make_request)
    assert all(isinstance(r, LaunchResult) for r in results), results
    assert injector.attempts["ec2:CreateTags"] == len(NAMES) + ATTEMPTS - 1
    assert len(backoffs) >= ATTEMPTS - 1 and all(w >= 0 for w in backoffs)
    tags = live(env)
    assert sorted(t[TAG_NODECLAIM] for t in tags.values()) == NAMES
    for name, r in zip(NAMES, results, strict=True):
        assert isinstance(r, LaunchResult) and tags[r.instance_id][TAG_NODECLAIM] == name


def test_create_tags_throttled_past_botocores_retries_fails_the_attempt_not_the_claim(
    env: Any, make_nodeclass: Any, make_request: Any, backoffs: list[float]
) -> None:
    nc = make_nodeclass.build()
    injector = FaultInjector().attach(env.clients.ec2)
    injector.inject("CreateTags", *[THROTTLE] * (ATTEMPTS * len(NAMES)))
    first = launch_together(env, nc, make_request)
    assert all(isinstance(r, Throttled) and "CreateTags" in str(r) for r in first), first
    assert all(isinstance(r, Throttled) and r.retryable for r in first)
    assert injector.attempts["ec2:CreateTags"] == ATTEMPTS * len(NAMES)
    untagged = live(env)
    assert len(untagged) == len(NAMES)
    assert all(TAG_NODECLAIM not in t for t in untagged.values())
    # every claim's lookup finds an instance, each its own, and garbage collection keeps them
    found = env.provider.instances.find_by_nodeclaims(NAMES)
    assert sorted(found) == NAMES and len({i.id for i in found.values()}) == len(NAMES)
    launched_at = max(i.launch_time for i in found.values() if i.launch_time is not None)
    later = launched_at + timedelta(seconds=31)
    assert env.provider.instances.leaked(NAMES, now=later) == []
    # the attempts' retries (the workflow retries a retryable error): tagged, nothing more
    calls = len(env.emulation.fleet_calls)
    again = launch_together(env, nc, make_request)
    assert all(isinstance(r, LaunchResult) and r.reused for r in again), again
    assert {r.instance_id for r in again if isinstance(r, LaunchResult)} == set(untagged)
    assert len(env.emulation.fleet_calls) == calls
    tags = live(env)
    assert set(tags) == set(untagged)
    for name, r in zip(NAMES, again, strict=True):
        assert isinstance(r, LaunchResult) and r.instance_id == found[name].id
        assert tags[r.instance_id][TAG_NODECLAIM] == name
