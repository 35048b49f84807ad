"""Launches batched into one CreateFleet, against moto plus the emulation: each claim gets its
own instance tagged with it, a launch cut off before its tags finds its instance again, and a
short answer leaves the last claims with insufficient capacity."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import pytest

from activities.ec2.errors import InsufficientCapacity
from activities.ec2.instances import BATCH_RECOVERY_GRACE, TAG_NODECLAIM, InstanceProvider
from activities.ec2.launch_batches import member_tag
from activities.ec2.launch_types import LaunchRequest, LaunchResult


def request(name: str) -> LaunchRequest:
    """One on-demand m5.large or m5.xlarge, with a label that must not become a tag."""
    return LaunchRequest(
        nodeclaim_name=name,
        nodeclaim_uid=f"uid-{name}",
        nodepool_name="default",
        nodeclass_name="default",
        requirements=[
            {
                "key": "node.kubernetes.io/instance-type",
                "operator": "In",
                "values": ["m5.large", "m5.xlarge"],
            },
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
        ],
        resources={"cpu": "1"},
        labels={"team": "web"},
    )


def cheapest_pool(env: Any, nc: Any) -> tuple[str, str]:
    offers = [
        (o.price, t.name, o.zone)
        for t in env.provider.instance_types(nc)
        if t.name in ("m5.large", "m5.xlarge")
        for o in t.offerings
        if o.capacity_type == "on-demand" and o.available
    ]
    _, itype, zone = min(offers)
    return itype, zone


def instances(env: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for r in env.clients.ec2.describe_instances()["Reservations"]:
        out.extend(i for i in r["Instances"] if i["State"]["Name"] != "terminated")
    return out


def launch_together(env: Any, nc: Any, names: list[str]) -> list[LaunchResult | Exception]:
    def one(name: str) -> LaunchResult | Exception:
        try:
            return env.provider.launch(request(name), nc)
        except Exception as exc:  # the answer under test
            return exc

    with ThreadPoolExecutor(len(names)) as pool:
        return list(pool.map(one, names))


def tags_of(env: Any, instance_id: str) -> dict[str, str]:
    found = env.clients.ec2.describe_instances(InstanceIds=[instance_id])
    raw = found["Reservations"][0]["Instances"][0]
    return {t["Key"]: t["Value"] for t in raw.get("Tags", [])}


def lose_the_tags_of(monkeypatch: pytest.MonkeyPatch, claim: str) -> Any:
    """CreateTags for ``claim`` fails, as if its worker died after CreateFleet's answer;
    returns the real method."""
    tag = InstanceProvider.tag

    def lost(self: InstanceProvider, instance_id: str, tags: dict[str, str]) -> None:
        if tags.get(TAG_NODECLAIM) == claim:
            raise ConnectionError("worker gone")
        tag(self, instance_id, tags)

    monkeypatch.setattr(InstanceProvider, "tag", lost)
    return tag


def test_claims_launched_together_share_one_create_fleet_and_each_gets_its_own_instance(
    env: Any, make_nodeclass: Any
) -> None:
    nc = make_nodeclass.build()
    names = [f"claim-{i}" for i in range(10)]
    results = launch_together(env, nc, names)
    assert all(isinstance(r, LaunchResult) for r in results), results
    ids = [r.instance_id for r in results if isinstance(r, LaunchResult)]
    assert len(set(ids)) == 10 and len(instances(env)) == 10
    # one call for the ten (a loaded machine may split them; never one call each)
    counts = [c["count"] for c in env.emulation.fleet_calls]
    assert sum(counts) == 10 and len(counts) <= 3, counts
    for name, instance_id in zip(names, ids, strict=True):
        tags = tags_of(env, instance_id)
        assert tags[TAG_NODECLAIM] == name and tags["Name"] == f"default/{name}"
        assert tags[member_tag(name)]  # the batch's pairing, kept for a retry
        assert "team" not in tags  # labels are not tags
    # every retry finds its own instance, and EC2 is not asked again
    calls = len(env.emulation.fleet_calls)
    again = launch_together(env, nc, names)
    assert [a.instance_id for a in again if isinstance(a, LaunchResult)] == ids
    assert all(isinstance(a, LaunchResult) and a.reused for a in again)
    assert len(env.emulation.fleet_calls) == calls


def test_a_launch_cut_off_before_its_claim_tag_finds_its_instance_again(
    env: Any, make_nodeclass: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a worker killed between CreateFleet's answer and the claim's CreateTags: the retry
    pairs the claim with its instance by the batch's member tags, tags it and launches
    nothing more."""
    nc = make_nodeclass.build()
    tag = lose_the_tags_of(monkeypatch, "claim-b")
    first = launch_together(env, nc, ["claim-a", "claim-b", "claim-c"])
    assert isinstance(first[1], ConnectionError)
    untagged = [i for i in instances(env) if TAG_NODECLAIM not in tags_of(env, i["InstanceId"])]
    assert len(untagged) == 1
    monkeypatch.setattr(InstanceProvider, "tag", tag)  # the worker is back
    # the termination phase's lookup finds it too
    found = env.provider.instances.find_by_nodeclaim("claim-b")
    assert found is not None and found.id == untagged[0]["InstanceId"]
    retried = env.provider.launch(request("claim-b"), nc)
    assert retried.reused and retried.instance_id == untagged[0]["InstanceId"]
    assert tags_of(env, retried.instance_id)[TAG_NODECLAIM] == "claim-b"
    assert len(instances(env)) == 3
    # another batch's instance is never taken: claim-a and claim-c keep theirs
    others = {r.instance_id for r in (first[0], first[2]) if isinstance(r, LaunchResult)}
    assert len(others) == 2 and retried.instance_id not in others


def test_a_short_answer_gives_the_last_claims_insufficient_capacity(
    env: Any, make_nodeclass: Any
) -> None:
    nc = make_nodeclass.build()
    itype, zone = cheapest_pool(env, nc)
    env.emulation.limit_capacity("on-demand", itype, zone, 2)
    names = ["claim-1", "claim-2", "claim-3", "claim-4"]
    results = launch_together(env, nc, names)
    launched = [r for r in results if isinstance(r, LaunchResult)]
    refused = [r for r in results if isinstance(r, InsufficientCapacity)]
    if len(env.emulation.fleet_calls) == 1:  # one batch: the pairing rule decides who
        assert [isinstance(r, LaunchResult) for r in results] == [True, True, False, False]
    assert len(launched) == 2 and len(refused) == 2, results
    assert {(r.instance_type, r.zone) for r in launched} == {(itype, zone)}
    assert len(instances(env)) == 2
    # the refused pool is remembered: a claim launched again goes elsewhere
    again = env.provider.launch(request("claim-3"), nc)
    assert (again.instance_type, again.zone) != (itype, zone)
    assert len(instances(env)) == 3


def test_an_untagged_batch_instance_waits_for_its_members_before_it_counts_as_leaked(
    env: Any, make_nodeclass: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Garbage collection leaves the instance a member's retry may still pair with for a
    launch's whole time to live; with no member left it goes after the usual 30 s."""
    nc = make_nodeclass.build()
    lose_the_tags_of(monkeypatch, "claim-y")
    launch_together(env, nc, ["claim-x", "claim-y"])
    untagged = [i for i in instances(env) if TAG_NODECLAIM not in tags_of(env, i["InstanceId"])]
    assert len(untagged) == 1
    orphan = untagged[0]["InstanceId"]
    at = untagged[0]["LaunchTime"]
    later, much_later = at + timedelta(seconds=31), at + BATCH_RECOVERY_GRACE + timedelta(seconds=1)
    known = ["claim-x", "claim-y"]
    assert orphan not in {i.id for i in env.provider.instances.leaked(known, now=later)}
    assert orphan in {i.id for i in env.provider.instances.leaked(known, now=much_later)}
    # no member claim left (claim-y was deleted): the usual grace
    assert orphan in {i.id for i in env.provider.instances.leaked(["claim-x"], now=later)}
