"""The emulator reads one resource's tags by its id, never by scanning every tag it holds.

With 1,000 instances, moto's own lookup made each DescribeInstances with a tag filter cost
(instances times all tags) and launches timed out; these tests count whole-store scans.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest
from moto.core import DEFAULT_ACCOUNT_ID
from moto.ec2 import utils as moto_utils
from moto.ec2.models import ec2_backends

from activities.ec2.instances import TAG_NODECLAIM, InstanceProvider, cluster_tag

INSTANCES = 40


class CountingTags(defaultdict[str, dict[str, str]]):
    """moto's tag store, counting how often all of it is copied to be scanned."""

    scans = 0

    def copy(self) -> CountingTags:
        CountingTags.scans += 1
        return CountingTags(dict, self)


def launch_tagged(env: Any, count: int) -> list[str]:
    image = next(iter(env.seeded.amis.images.values()))
    reply = env.clients.ec2.run_instances(
        ImageId=image, MinCount=count, MaxCount=count, InstanceType="m5.large"
    )
    ids = [i["InstanceId"] for i in reply["Instances"]]
    for n, instance_id in enumerate(ids):
        env.clients.ec2.create_tags(
            Resources=[instance_id],
            Tags=[
                {"Key": cluster_tag(env.settings.cluster.name), "Value": "owned"},
                {"Key": "karpenter.sh/nodepool", "Value": "default"},
                {"Key": TAG_NODECLAIM, "Value": f"claim-{n}"},
            ],
        )
    return ids


def count_scans(env: Any) -> None:
    backend = ec2_backends[DEFAULT_ACCOUNT_ID][env.settings.region]
    backend.tags = CountingTags(dict, backend.tags)
    CountingTags.scans = 0


def test_a_tag_filtered_describe_reads_each_instance_tags_by_id(env: Any) -> None:
    ids = launch_tagged(env, INSTANCES)
    count_scans(env)
    instances = InstanceProvider(env.clients.ec2, env.settings.cluster.name)
    found = instances.find_by_nodeclaim("claim-7")
    assert found is not None and found.id == ids[7]
    assert found.tags[TAG_NODECLAIM] == "claim-7"
    assert len(instances.list_owned("default")) == INSTANCES
    # moto alone scanned the whole store once per instance per call (about 2 x 40 here)
    assert CountingTags.scans == 0


def test_describe_tags_answers_are_unchanged(env: Any) -> None:
    ids = launch_tagged(env, 3)
    ec2 = env.clients.ec2

    def described(filters: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
        tags = ec2.describe_tags(Filters=filters)["Tags"]
        return sorted((t["ResourceId"], t["Key"], t["Value"]) for t in tags)

    one = described([{"Name": "resource-id", "Values": [ids[1]]}])
    assert [t[0] for t in one] == [ids[1]] * 3
    assert ("claim-1" in {t[2] for t in one}) and len(one) == 3
    keyed = described(
        [
            {"Name": "resource-id", "Values": [ids[1]]},
            {"Name": "key", "Values": [TAG_NODECLAIM]},
        ]
    )
    assert keyed == [(ids[1], TAG_NODECLAIM, "claim-1")]
    assert described([{"Name": "resource-id", "Values": ["i-0000000000nothere"]}]) == []
    # several ids and patterns still go through moto's scan, with moto's answer
    both = described([{"Name": "resource-id", "Values": [ids[0], ids[2]]}])
    assert {t[0] for t in both} == {ids[0], ids[2]} and len(both) == 6
    pattern = described([{"Name": "resource-id", "Values": [ids[2][:-1] + "?"]}])
    assert {t[0] for t in pattern} >= {ids[2]}


def test_a_tag_filtered_describe_runs_moto_filters_only_on_the_tagged_instances(
    env: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = launch_tagged(env, INSTANCES)
    evaluated: list[str] = []
    real = moto_utils.passes_filter_dict

    def counting(instance: Any, filter_dict: dict[str, Any]) -> bool:
        evaluated.append(instance.id)
        return real(instance, filter_dict)

    monkeypatch.setattr(moto_utils, "passes_filter_dict", counting)
    found = InstanceProvider(env.clients.ec2, env.settings.cluster.name).find_by_nodeclaim(
        "claim-7"
    )
    assert found is not None and found.id == ids[7]
    assert evaluated == [ids[7]]  # moto alone evaluated its filters on all 40
    ec2 = env.clients.ec2

    def described(*filters: dict[str, Any]) -> list[str]:
        reply = ec2.describe_instances(Filters=list(filters))
        return sorted(i["InstanceId"] for r in reply["Reservations"] for i in r["Instances"])

    def claim(*values: str) -> dict[str, Any]:
        return {"Name": f"tag:{TAG_NODECLAIM}", "Values": list(values)}

    # the answers are moto's: several values, none matching, a pattern (moto's own loop)
    assert described(claim("claim-1", "claim-3")) == sorted([ids[1], ids[3]])
    assert described(claim("claim-none")) == []
    evaluated.clear()
    assert described(claim("claim-1*")) == sorted([ids[1], *ids[10:20]])
    assert len(evaluated) == INSTANCES
    # every other filter still applies, as moto applies it
    ec2.terminate_instances(InstanceIds=[ids[2]])
    assert described(claim("claim-2")) == [ids[2]]
    assert described(claim("claim-2"), {"Name": "instance-state-name", "Values": ["running"]}) == []
    running = {"Name": "instance-state-name", "Values": ["running"]}
    assert described(claim("claim-3"), running) == [ids[3]]
    # tag-key filters of plain keys (a batched launch's member tags) take the same short cut
    env.clients.ec2.create_tags(Resources=[ids[5]], Tags=[{"Key": "joinery.dev/x", "Value": ""}])
    evaluated.clear()
    keyed = {"Name": "tag-key", "Values": ["joinery.dev/x", "joinery.dev/none"]}
    assert described(keyed) == [ids[5]] and evaluated == [ids[5]]
    assert described({"Name": "tag-key", "Values": ["joinery.dev/none"]}) == []
    assert described(keyed, claim("claim-6")) == []
    assert len(described({"Name": "tag-key", "Values": [TAG_NODECLAIM]})) == INSTANCES
