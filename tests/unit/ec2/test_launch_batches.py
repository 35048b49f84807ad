"""The pairing of a batched CreateFleet's instances with its claims, at launch and on retry."""

from __future__ import annotations

from activities.ec2.launch_batches import (
    MAX_TAG_KEY,
    assign,
    batch_token,
    member_capacity,
    member_tag,
    recover,
)


def tags_for(token: str, members: list[str]) -> dict[str, str]:
    return {"karpenter.sh/nodepool": "default", **{member_tag(m): token for m in members}}


def test_assign_pairs_in_order_and_a_short_answer_leaves_the_last_members_out() -> None:
    members = ["pool-c", "pool-a", "pool-b"]
    assert assign(members, ["i-3", "i-1", "i-2"]) == {
        "pool-a": "i-1",
        "pool-b": "i-2",
        "pool-c": "i-3",
    }
    assert assign(members, ["i-9", "i-5"]) == {"pool-a": "i-5", "pool-b": "i-9"}


def test_recover_finds_what_assign_gave_whatever_became_of_the_others() -> None:
    members = ["pool-a", "pool-b", "pool-c"]
    ids = ["i-0c", "i-0a", "i-0b"]
    given = assign(members, ids)
    instances = [(i, tags_for("tok", members)) for i in ids]
    for member in members:
        assert recover(member, instances) == [given[member]]
    # a short answer: the last member got none
    short = [(i, tags_for("tok2", members)) for i in ["i-1", "i-2"]]
    assert recover("pool-c", short) == []
    # ... and its next batch gave it one: both batches are looked at
    later = [(i, tags_for("tok3", ["pool-c", "pool-d"])) for i in ["i-7", "i-8"]]
    assert recover("pool-c", short + later) == ["i-7"]


def test_member_tags_fit_ec2s_limits() -> None:
    long_name = "p" * 200
    key = member_tag(long_name)
    assert len(key) <= MAX_TAG_KEY and key != member_tag("p" * 201)
    assert member_tag("default-abcde") == "joinery.dev/launch/default-abcde"
    # 50 tags an instance: the shared ones, the members', Name and the claim tag
    assert member_capacity(6) == 42
    assert member_capacity(60) == 1


def test_batch_token_is_a_lone_claims_uid_or_a_digest_of_them_all() -> None:
    assert batch_token(["uid-1"]) == "uid-1"
    token = batch_token(["uid-2", "uid-1"])
    assert token == batch_token(["uid-1", "uid-2"]) and len(token) <= 64
    assert token != batch_token(["uid-1", "uid-3"])
